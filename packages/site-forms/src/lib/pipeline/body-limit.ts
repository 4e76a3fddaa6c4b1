import type { UploadSettings } from '../files/uploads.ts';
import { formatSize } from '../files/size.ts';
import { BODY_LIMIT_BYTES, declaredPast, tooLargeMessage } from '../http/form.ts';
import { type Failure, failure } from '../http/outcome.ts';
import { language, texts } from '../i18n/texts.ts';
import type { Route } from './routes.ts';

/** How large a request's body may be, and the 413 a body past it is answered with. */
export type BodyLimit = { bytes: number; refusal: Failure };

/** A form's limit, the same for every route without files: made once, not on every request. */
const FORM_LIMIT: BodyLimit = Object.freeze({ bytes: BODY_LIMIT_BYTES, refusal: Object.freeze(failure(413, tooLargeMessage())) });

/**
 * The one body limit of a route (decision 0187): a form's fields (BODY_LIMIT_BYTES), and on top
 * the files' total (UPLOAD_MAX_TOTAL_BYTES) when the route takes files, whose 413 then names that total.
 * Hint: the guard compares a declared length with it before a byte is read (`refuseDeclared`);
 * the readers hold the same numbers while they read (`readForm`, `readUpload`), for a body that
 * says less than it sends or says nothing.
 */
export function bodyLimitOf(route: Pick<Route, 'files'>, uploads: Pick<UploadSettings, 'maxTotalBytes'>): BodyLimit {
  if (!route.files) return FORM_LIMIT;
  return { bytes: uploads.maxTotalBytes + BODY_LIMIT_BYTES, refusal: failure(413, texts.refusals.uploadTooLarge(formatSize(uploads.maxTotalBytes, language))) };
}

/** The 413 of a request whose declared Content-Length is past its limit, before a byte is read; undefined when it fits or none is declared. */
export function refuseDeclared(contentLength: string | null | undefined, limit: BodyLimit): Failure | undefined {
  return declaredPast(contentLength, limit.bytes) ? limit.refusal : undefined;
}
