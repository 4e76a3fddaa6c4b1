import type { IncomingRequest } from '../http/form.ts';
import type { Services } from '../app/services.ts';
import { downloadHeaders, openForDownload } from '../files/delivery.ts';
import { FILE_LINK_PATH } from '../files/links.ts';
import { texts } from '../i18n/texts.ts';
import { failure, type Outcome } from '../http/outcome.ts';
import { withinMount } from '../http/mount.ts';

/** A file's id as the store makes them (files/files.ts `newFileId`): anything else is no file's. */
const FILE_ID = /^[A-Za-z0-9_-]{16,64}$/;

/** Whether a path is a file's signed link, `/api/files/<id>`: the one route whose path holds a value. */
export function isFileLinkPath(path: string): boolean {
  return path.startsWith(FILE_LINK_PATH) && FILE_ID.test(path.slice(FILE_LINK_PATH.length));
}

/**
 * GET /api/files/<id>?expires=&signature=: the file of a webhook's or a chat alert's link, to
 * download as an attachment; 403 in JSON when the link has expired, was altered or is another
 * file's (one answer for all three, so a guess learns nothing), 404 when its file is gone or its
 * message was deleted, erased or marked as spam by the owner.
 * Hint: the link is the only key, no session: anyone who holds it until its end gets the file,
 * which is why it ends (FILE_LINK_LIFETIME_SECONDS) and names one file.
 */
export async function handleFileLink(request: IncomingRequest, { files }: Services): Promise<Outcome> {
  const url = new URL(request.url);
  // The path without the prefix of our routes (decision 0230): the route matched it under the mount.
  const id = (withinMount(url.pathname) ?? url.pathname).slice(FILE_LINK_PATH.length);
  const check = await files.links.verify({ id, expires: url.searchParams.get('expires') ?? '', signature: url.searchParams.get('signature') ?? '' });
  if (check !== 'valid') return failure(403, texts.refusals.fileLinkRefused);
  // Only while its message is kept: a link signed before the owner deleted or marked it opens nothing.
  const file = await files.records.linkedFile(id);
  if (!file) return failure(404, texts.refusals.notFound);
  const stream = await openForDownload(files.storage, file.storageKey);
  if (!stream) return failure(404, texts.refusals.notFound);
  return { kind: 'download', headers: downloadHeaders(file), stream };
}
