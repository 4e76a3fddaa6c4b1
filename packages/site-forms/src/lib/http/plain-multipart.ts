/**
 * The fields of a multipart form in the one shape a browser sends for text fields, read straight
 * from the bytes; any other shape is left to `Response.formData()` (src/lib/http/form.ts).
 *
 * Why: undici's `formData()` builds a Response, copies the bytes, parses each part's headers in
 * full and allocates per part; on a contact post it was a fifth of the CPU (issue 41's profile,
 * decision 0269). A browser's text field is always
 *
 *     --<boundary>\r\n
 *     Content-Disposition: form-data; name="<name>"\r\n
 *     \r\n
 *     <value>\r\n
 *     --<boundary>--\r\n
 *
 * and that shape alone is read here. Whatever else a post holds (a file, a second header, a name
 * with an escape, a BOM, a boundary in a value, bytes before or after) gives `undefined`, and the
 * caller parses it as before: this reader never decides anything undici would decide otherwise
 * (tests/lib/http/plain-multipart.test.ts compares the two on every case it answers).
 */

/** A boundary as browsers and Node's FormData make them; anything rarer goes to the full parser. */
const SIMPLE_CONTENT_TYPE = /^multipart\/form-data;[ \t]*boundary=([A-Za-z0-9_-]{1,70})$/i;

const PART_HEADER = 'Content-Disposition: form-data; name="';

/** A field name that needs no unescaping (`%22`, `%0D`, `%0A`, backslashes) and is plain ASCII. */
const PLAIN_NAME = /^[\x20-\x21\x23-\x24\x26-\x5B\x5D-\x7E]+$/;

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/**
 * The fields of `body` in order, duplicates kept, when every part is a plain text field;
 * `undefined` when anything in it is outside that shape. `body` is known to be UTF-8.
 */
export function readPlainMultipart(body: Buffer, contentType: string): Array<[string, string]> | undefined {
  const boundary = SIMPLE_CONTENT_TYPE.exec(contentType)?.[1];
  if (boundary === undefined) return undefined;
  const opening = `--${boundary}\r\n`;
  if (body.length < opening.length || body.toString('latin1', 0, opening.length) !== opening) return undefined;

  const fields: Array<[string, string]> = [];
  let at = opening.length;
  for (;;) {
    const headersEnd = body.indexOf('\r\n\r\n', at, 'latin1');
    if (headersEnd === -1) return undefined;
    const header = body.toString('latin1', at, headersEnd);
    if (!header.startsWith(PART_HEADER) || !header.endsWith('"')) return undefined;
    const name = header.slice(PART_HEADER.length, -1);
    if (!PLAIN_NAME.test(name)) return undefined;

    const valueStart = headersEnd + 4;
    // The full parser looks for the boundary's text itself and cuts four bytes before it, so a
    // value holding the boundary's text anywhere is left to it, whatever precedes it.
    const found = body.indexOf(boundary, valueStart, 'latin1');
    const valueEnd = found - 4;
    if (found === -1 || valueEnd < valueStart) return undefined;
    if (body[valueEnd] !== CR || body[valueEnd + 1] !== LF || body[valueEnd + 2] !== DASH || body[valueEnd + 3] !== DASH) return undefined;
    // A leading byte-order mark is dropped by the full parser's UTF-8 decode and kept by toString.
    if (body[valueStart] === 0xef && body[valueStart + 1] === 0xbb && body[valueStart + 2] === 0xbf) return undefined;
    fields.push([name, body.toString('utf8', valueStart, valueEnd)]);

    at = found + boundary.length;
    const rest = body.length - at;
    if (body[at] === DASH && body[at + 1] === DASH) {
      // The closing delimiter, then nothing or one line break: anything else is the full parser's.
      if (rest === 2 || (rest === 4 && body[at + 2] === CR && body[at + 3] === LF)) return fields;
      return undefined;
    }
    if (body[at] !== CR || body[at + 1] !== LF) return undefined;
    at += 2;
  }
}
