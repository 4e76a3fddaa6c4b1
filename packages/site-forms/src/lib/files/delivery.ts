import type { Readable } from 'node:stream';
import type { FileStorage } from './storage.ts';

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
 * The headers of a file's download, from the admin or a signed link: a file to save whatever its
 * bytes are (`application/octet-stream`, never sniffed, never shown inline), kept by no cache.
 * Hint: the type read from the bytes is shown on the admin's page; it is not sent, so a file
 * that is a page or an image never opens in the site's origin.
 */
export function downloadHeaders(file: { name: string; size: number }): Record<string, string> {
  return {
    'content-type': 'application/octet-stream',
    'content-disposition': attachmentDisposition(file.name),
    'content-length': String(file.size),
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
    // Should a browser render it after all, it runs nothing and reaches nothing of the site.
    'content-security-policy': "default-src 'none'; sandbox",
  };
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

/**
 * A stored file's bytes to download, or `undefined` when the storage no longer has them (a row
 * whose object was removed by hand, a bucket emptied): a download then answers "not found".
 * Hint: any other failure is thrown without the storage's own words, which may be an S3
 * provider's and must not reach a log line.
 */
export async function openForDownload(storage: Pick<FileStorage, 'open'>, key: string): Promise<Readable | undefined> {
  try {
    return await storage.open(key);
  } catch (error) {
    const { code, name, $metadata } = error as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
    if (code === 'ENOENT' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404) return undefined;
    throw new Error(`the storage could not open a file (${code ?? name ?? 'no code'})`);
  }
}
