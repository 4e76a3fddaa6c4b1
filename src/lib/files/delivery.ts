/**
 * How a stored file reaches its owner: the header of a download, and which files ride with the
 * owner's mail as attachments and which are only linked.
 */

/**
 * The `Content-Disposition` of a download: always `attachment` (a file is never shown inline),
 * the visitor's name in RFC 5987's `filename*` as UTF-8 percent-encoded, and an ASCII stand-in
 * in `filename` for clients that know no better (RFC 6266, section 4.3).
 * Hint: the name is the visitor's text; quotes, backslashes, controls and `%` never reach the
 * header raw, so a name cannot end the header or add a parameter of its own.
 */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\;%]/gu, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Splits a message's files into those attached to the owner's mail and those only linked:
 * in their order, each attached while the attachments together stay within `maxBytes`
 * (MAIL_ATTACH_MAX_BYTES); one too large is linked and a smaller one after it may still ride.
 * Hint: the plan depends on the files alone, so every retry of the mail carries the same.
 */
export function planAttachments<File extends { size: number }>(files: readonly File[], maxBytes: number): { attached: File[]; linked: File[] } {
  const attached: File[] = [];
  const linked: File[] = [];
  let total = 0;
  for (const file of files) {
    // A limit of 0 turns attachments off, empty files included.
    if (maxBytes > 0 && total + file.size <= maxBytes) {
      attached.push(file);
      total += file.size;
    } else linked.push(file);
  }
  return { attached, linked };
}
