import { createHash } from 'node:crypto';
/**
 * Origins a page may load from beyond its own, per CSP directive. Every script of the site is
 * a file under `/_astro/` (src/integration/integration.ts: nothing inlined), so `'self'` covers them.
 * Hint: Cloudflare Turnstile, when `TURNSTILE_SITE_KEY` is set, is `TURNSTILE_SOURCES`.
 */
export type ExtraSources = { script?: readonly string[]; frame?: readonly string[]; connect?: readonly string[]; form?: readonly string[] };

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
 * connections, forms posted only to the site (and their redirects to `ALLOWED_ORIGINS`, 0167), and no framing by anyone.
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
    ['form-action', ["'self'", ...extra('form')]],
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
    allowedOrigins?: readonly string[] | undefined;
  },
  options: { development?: boolean } = {},
): Record<string, string> {
  const extraSources: ExtraSources[] = [];
  if (config.contactEndpointOrigin) extraSources.push({ connect: [config.contactEndpointOrigin] });
  // The forms load Cloudflare's widget only when the spam filter is on and Turnstile is configured.
  if (config.spam?.enabled && config.spam.turnstile) extraSources.push(TURNSTILE_SOURCES);
  // A form shown again on this server for the owner's site elsewhere is answered with a redirect
  // to their `_next` (decision 0167); browsers hold that redirect to `form-action` too.
  if (config.allowedOrigins?.length) extraSources.push({ form: config.allowedOrigins });
  return securityHeaders({ publicUrl: config.publicUrl, extraSources, development: options.development });
}

/** The hashes (CSP source expressions) of the inline styles and scripts of an owner's layout. */
export type InlineSources = { styles: readonly string[]; scripts: readonly string[] };

/** The `<style>` blocks and the `<script>` blocks without `src` of an HTML text, as their texts. */
const INLINE_STYLE = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
const INLINE_SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi;

/**
 * The hashes of the inline `<style>` and `<script>` blocks of `html` (the owner's layout rendered
 * around our page, without our page's own content, issue 39 item 5): what our CSP must allow so
 * that the owner's layout looks and works on our pages as on theirs (Astro's fonts write an inline
 * `<style>`). Each block is allowed exactly as it is, so nothing our content holds is allowed with it.
 */
export function inlineSources(html: string): InlineSources {
  const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const styles = [...html.matchAll(INLINE_STYLE)].map((match) => sha(match[1]!));
  const scripts = [...html.matchAll(INLINE_SCRIPT)].filter((match) => !/\bsrc\s*=/i.test(match[1]!)).map((match) => sha(match[2]!));
  return { styles: [...new Set(styles)], scripts: [...new Set(scripts)] };
}

/** `policy` with `sources` added to its `style-src` and `script-src` directives (no `'unsafe-inline'`). */
export function withInlineSources(policy: string, sources: InlineSources): string {
  const add = (directive: string, extra: readonly string[]) => (text: string) =>
    extra.length === 0 || !text.startsWith(`${directive} `) ? text : `${text} ${extra.join(' ')}`;
  return policy.split('; ').map(add('style-src', sources.styles)).map(add('script-src', sources.scripts)).join('; ');
}
