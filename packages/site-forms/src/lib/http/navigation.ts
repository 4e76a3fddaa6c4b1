import type { IncomingRequest } from './form.ts';
/**
 * Whether a request is a browser loading a document (a form posted without JavaScript, a
 * link followed) rather than a script, curl or a test asking for data.
 * Hint: fetch metadata decides when the browser sent any; only a request without it (an
 * older browser, or a proxy that strips it) falls back to `Accept`, where HTML must be
 * preferred to JSON, so curl's wildcard and a missing `Accept` stay JSON.
 */
export function isDocumentNavigation(request: IncomingRequest): boolean {
  const { headers } = request;
  const dest = headers.get('sec-fetch-dest');
  const mode = headers.get('sec-fetch-mode');
  if (dest?.trim().toLowerCase() === 'document' || mode?.trim().toLowerCase() === 'navigate') return true;
  if (dest !== null || mode !== null || headers.has('sec-fetch-site') || headers.has('sec-fetch-user')) return false;
  const accept = headers.get('accept');
  if (accept === null) return false;
  return preference(accept, 'text/html') > preference(accept, 'application/json');
}

/**
 * The quality an `Accept` header gives a media type: the most specific matching range
 * wins (`text/html` over `text/*` over the full wildcard), as RFC 9110 section 12.5.1 says.
 */
function preference(accept: string, mediaType: string): number {
  const [type] = mediaType.split('/');
  let best = { specificity: -1, quality: 0 };
  for (const part of accept.split(',')) {
    const [range = '', ...parameters] = part.split(';').map((token) => token.trim().toLowerCase());
    const specificity = range === mediaType ? 2 : range === `${type}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    best = { specificity, quality: Number.isFinite(quality) ? Math.min(Math.max(quality, 0), 1) : 0 };
  }
  return best.quality;
}
