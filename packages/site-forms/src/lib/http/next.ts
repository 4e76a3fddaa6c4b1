/**
 * `_next`: the hidden field of a form on the owner's own site (another origin, listed in
 * `ALLOWED_ORIGINS`) that names the page a person without JavaScript goes to after a success,
 * and the link back to the owner's page on a refusal (decision 0167).
 * Hint: never an open redirect. Only an absolute http(s) address whose origin is `PUBLIC_URL`'s
 * or one of `ALLOWED_ORIGINS` is taken, without userinfo, whitespace or backslashes, and what is
 * sent on is the address as the URL parser wrote it again, so the browser reads the same host.
 */
import { withinMount } from './mount.ts';

/** The origins a person may be sent to: this site's, when `PUBLIC_URL` names it, and the allowed ones. */
export type NextSettings = { publicUrl: string | undefined; allowedOrigins: readonly string[] };

/** Longer than any thank-you page's address; past it the field is ignored rather than carried around. */
const MAX_LENGTH = 2000;

// Whitespace, control characters and backslashes: each is something a URL parser drops or
// turns into a slash, which is how a second reader is made to see another host.
const UNSAFE = /[\s\\\u0000-\u001f\u007f]/;

/**
 * The address a post's `_next` names, normalised, when a person may be sent there; otherwise
 * undefined (the field is then ignored and the form's own thank-you page is used).
 * Hint: this site's origin is `PUBLIC_URL` only, never read from `Host` (decision 0030).
 */
export function nextAddress(value: unknown, settings: NextSettings): string | undefined {
  if (typeof value !== 'string' || value === '' || value.length > MAX_LENGTH || UNSAFE.test(value)) return undefined;
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return undefined;
  // The value must have been absolute as written: `//host` needs a base and `URL.parse` refuses it.
  if (!isListed(url.origin, settings)) return undefined;
  return url.href;
}

/**
 * The owner's page a post came from: the `Referer` when it is on an allowed origin (the page the
 * form was on, or that origin's home, as browsers send it across sites), else the home of its
 * `Origin` when allowed; none for a post from this site's own pages (decision 0211).
 */
export function pageOfPost({ referer, origin }: { referer: string | undefined; origin: string | undefined }, settings: NextSettings): string | undefined {
  const elsewhere = { publicUrl: undefined, allowedOrigins: settings.allowedOrigins };
  return nextAddress(referer, elsewhere) ?? (origin && isListed(origin, elsewhere) ? `${origin}/` : undefined);
}

/**
 * The owner's page a refusal page links back to: the page the post came from (`pageOfPost`), else
 * the home of `_next`'s origin; none for a post from this site's own pages.
 */
export function backLink(
  { referer, origin, next }: { referer: string | undefined; origin?: string | undefined; next: string | undefined },
  settings: NextSettings,
): string | undefined {
  return pageOfPost({ referer, origin }, settings) ?? (next ? `${new URL(next).origin}/` : undefined);
}

/**
 * Whether this server is headless: the owner's site is elsewhere, named by `ALLOWED_ORIGINS`, and
 * our pages lead back there rather than to this server's own (decision 0211).
 */
export function isHeadless(settings: Pick<NextSettings, 'allowedOrigins'>): boolean {
  return settings.allowedOrigins.length > 0;
}

/**
 * Where a page of a headless server leads back to: its `back` parameter when on an allowed origin
 * (the page the form was on, put there by the post's redirect), else the home of the first of
 * `ALLOWED_ORIGINS`; undefined when the server is not headless (its own home is then the way back).
 * Hint: `back` is checked again here, since anyone can write it into an address.
 */
export function homeLink(back: string | null | undefined, settings: Pick<NextSettings, 'allowedOrigins'>): string | undefined {
  const [first] = settings.allowedOrigins;
  if (first === undefined) return undefined;
  return nextAddress(back ?? undefined, { publicUrl: undefined, allowedOrigins: settings.allowedOrigins }) ?? `${first}/`;
}

function isListed(origin: string, { publicUrl, allowedOrigins }: NextSettings): boolean {
  return origin === publicUrl || allowedOrigins.includes(origin);
}

/** The addresses that are ours, not the owner's pages: the API, and the pages the integration brings (decision 0165). */
const OURS = /^\/(?:api|thank-you|admin|newsletter\/(?:confirm|unsubscribe)|theme\.css)(?:\/|$)/;

/**
 * The page of this site a visitor came from, as a path (its `Referer`, when on `origin` and one of
 * the owner's pages, not ours): where "Send another message" leads, the page the form was on.
 */
export function refererPage(referer: string | null | undefined, origin: string): string | undefined {
  if (!referer) return undefined;
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return undefined;
  }
  if (url.origin !== origin || OURS.test(withinMount(url.pathname) ?? url.pathname)) return undefined;
  // `https://site//evil.example/` has the path `//evil.example/`, which a link reads as another
  // host (protocol-relative): one slash, as Astro's router reads it, keeps the link on this site.
  return `${url.pathname.replace(/^\/{2,}/, '/')}${url.search}`;
}
