/**
 * Whether a request is a browser navigation (a native form post with JavaScript off)
 * that wants a page for people rather than the JSON of the spec.
 * Hint: the script sends `Accept: application/json` and fetch metadata; curl sends neither
 * metadata nor an Accept that prefers HTML, so both keep the JSON contract.
 */
export function isDocumentNavigation(request: Request): boolean {
  const headers = request.headers;
  const dest = headers.get('sec-fetch-dest');
  const mode = headers.get('sec-fetch-mode');
  if (dest !== null || mode !== null) return dest === 'document' || mode === 'navigate';
  return prefersHtml(headers.get('accept') ?? '');
}

/** Whether an Accept header ranks text/html above application/json. */
function prefersHtml(accept: string): boolean {
  let html = 0;
  let json = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? 1);
    const weight = Number.isFinite(q) ? q : 0;
    if (type === 'text/html' || type === 'application/xhtml+xml') html = Math.max(html, weight);
    if (type === 'application/json') json = Math.max(json, weight);
  }
  return html > json;
}
