/** A received message taken apart: its headers, unfolded and decoded, and its plain-text body. */
export type ParsedMail = {
  /** Every header in order, names lower-cased. */
  headers: Array<{ name: string; value: string }>;
  /** The decoded values of every header of that name (case-insensitive). */
  header(name: string): string[];
  /** The body, decoded from its transfer encoding, with LF line ends. */
  text: string;
  /** The body's bytes, decoded from its transfer encoding (an attachment's file). */
  bytes: Buffer;
};

/**
 * Parses a single-part text message as nodemailer writes it: enough to check what a mail
 * client would show, without trusting the library under test to decode its own output.
 */
export function parseMail(raw: string): ParsedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 4);
  const headers: ParsedMail['headers'] = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && headers.length > 0) headers[headers.length - 1]!.value += line;
    else {
      const colon = line.indexOf(':');
      headers.push({ name: line.slice(0, colon).toLowerCase(), value: line.slice(colon + 1) });
    }
  }
  for (const h of headers) h.value = decodeWords(h.value.trim());
  const header = (name: string) => headers.filter((h) => h.name === name.toLowerCase()).map((h) => h.value);
  const encoding = (header('content-transfer-encoding')[0] ?? '7bit').toLowerCase();
  const bytes =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
      : encoding === 'quoted-printable'
        ? decodeQuotedPrintable(body.replace(/=\r\n/g, ''))
        : Buffer.from(body, 'utf8');
  return { headers, header, text: bytes.toString('utf8').replace(/\r\n/g, '\n'), bytes };
}

/**
 * The parts of a multipart message (a text and its attachments, as nodemailer writes a mail
 * without HTML: one level), each parsed as `parseMail` parses a single part; a single-part
 * message is its own one part.
 */
export function mailParts(raw: string): ParsedMail[] {
  const whole = parseMail(raw);
  const boundary = /boundary="?([^";]+)"?/i.exec(whole.header('content-type')[0] ?? '')?.[1];
  if (!boundary) return [whole];
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => parseMail(part.replace(/^\r\n/, '').replace(/\r\n$/, '')));
}

/** Decodes RFC 2047 encoded words (UTF-8, B or Q), dropping the blanks between adjacent ones. */
function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) =>
      (kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQuotedPrintable(text.replace(/_/g, ' '))).toString('utf8'),
    );
}

function decodeQuotedPrintable(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(text[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}
