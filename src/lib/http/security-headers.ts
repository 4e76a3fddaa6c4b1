/**
 * Origins a page may load from beyond its own, per CSP directive. Every script of the site is
 * a file under `/_astro/` (src/integration/integration.ts: nothing inlined), so `'self'` covers them.
 * Hint: Cloudflare Turnstile, when `TURNSTILE_SITE_KEY` is set, is `TURNSTILE_SOURCES`.
 */
export type ExtraSources = { script?: readonly string[]; frame?: readonly string[]; connect?: readonly string[] };

/** What Cloudflare Turnstile's widget needs: its script, and its iframe. */
export const TURNSTILE_SOURCES: ExtraSources = {
  script: ['https://challenges.cloudflare.com'],
  frame: ['https://challenges.cloudflare.com'],
};

/** What decides the headers: the public address (HSTS when https) and the extra sources. */
export type SecurityHeaderSettings = {
  publicUrl: string | undefined;
  /** Origins beyond the site's own, such as TURNSTILE_SOURCES and the CONTACT_FORM_ENDPOINT's. */
  extraSources?: readonly ExtraSources[];
  /** `astro dev` only: Vite's inline styles and scripts and its HMR socket need more. */
  development?: boolean;
};

/** A year, the figure browsers' HSTS preload list asks for. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/**
 * The policy every page and answer carries: only the site's own scripts, styles, images and
 * connections, forms posted only to the site, and no framing by anyone.
 */
export function contentSecurityPolicy(settings: Pick<SecurityHeaderSettings, 'extraSources' | 'development'> = {}): string {
  const extra = (key: keyof ExtraSources) => (settings.extraSources ?? []).flatMap((sources) => sources[key] ?? []);
  const dev = settings.development === true;
  const directives: Array<[string, string[]]> = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", ...(dev ? ["'unsafe-inline'"] : []), ...extra('script')]],
    ['style-src', ["'self'", ...(dev ? ["'unsafe-inline'"] : [])]],
    ['img-src', ["'self'", 'data:']],
    ['connect-src', ["'self'", ...(dev ? ['ws:', 'wss:'] : []), ...extra('connect')]],
    ['frame-src', extra('frame').length > 0 ? extra('frame') : ["'none'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', ["'none'"]],
  ];
  return directives.map(([name, sources]) => `${name} ${[...new Set(sources)].join(' ')}`).join('; ');
}

/**
 * The security headers of every answer (pages from memory or from Astro, API JSON, refusals):
 * `nosniff`, the CSP, no framing, a referrer that stops at the origin across sites, and HSTS
 * when `PUBLIC_URL` is https.
 * Hint: `strict-origin-when-cross-origin` keeps the `Origin` header that cross-site posts
 * from `ALLOWED_ORIGINS` pages need; `no-referrer` would turn it into `null`.
 */
export function securityHeaders(settings: SecurityHeaderSettings): Record<string, string> {
  const headers: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'content-security-policy': contentSecurityPolicy(settings),
    'x-frame-options': 'DENY',
    'referrer-policy': 'strict-origin-when-cross-origin',
  };
  if (settings.publicUrl?.startsWith('https://')) headers['strict-transport-security'] = `max-age=${HSTS_MAX_AGE_SECONDS}`;
  return headers;
}

/**
 * The security headers for this deployment's configuration; the server and the dev
 * middleware both take them from here.
 * Hint: optional features that load from elsewhere add their sources here, such as
 * `TURNSTILE_SOURCES` once a `TURNSTILE_SITE_KEY` is configured.
 */
export function securityHeadersFor(
  config: {
    publicUrl: string | undefined;
    contactEndpointOrigin: string | undefined;
    spam?: { enabled: boolean; turnstile: unknown } | undefined;
  },
  options: { development?: boolean } = {},
): Record<string, string> {
  const extraSources: ExtraSources[] = [];
  if (config.contactEndpointOrigin) extraSources.push({ connect: [config.contactEndpointOrigin] });
  // The forms load Cloudflare's widget only when the spam filter is on and Turnstile is configured.
  if (config.spam?.enabled && config.spam.turnstile) extraSources.push(TURNSTILE_SOURCES);
  return securityHeaders({ publicUrl: config.publicUrl, extraSources, development: options.development });
}
