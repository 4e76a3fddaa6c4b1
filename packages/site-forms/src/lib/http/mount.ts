/**
 * Where the forms' routes live in an owner's site (issue 40 item 5, decision 0230): at the root by
 * default, or under a prefix of the owner's choosing (`siteForms({ base: '/forms' })`), itself under
 * Astro's own `base`. The one rule for every path we make (links, form actions, redirects, mails'
 * links, webhooks' file links) and every path we read: `ourPath` puts it on, `withinMount` takes it off.
 * Hint: the route table (src/lib/pipeline/routes.ts) and the integration's list of pages keep their
 * paths at the root; the mount is applied where a path leaves the process or enters it.
 */

/** What `siteForms({ base })` may be: `/` and one or more segments of letters, digits, `-`, `_` or `.`. */
const BASE = /^(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)+$/;

/**
 * The option `base` as the integration uses it: '' for none (or `/`), else `/forms` without a
 * trailing slash. Throws a message naming the option for anything else.
 */
export function checkBase(base: unknown): string {
  if (base === undefined || base === '' || base === '/') return '';
  if (typeof base !== 'string') throw new Error(`siteForms({ base }) must be a path such as '/forms', not ${typeof base}.`);
  const trimmed = base.endsWith('/') ? base.slice(0, -1) : base;
  if (!BASE.test(trimmed) || trimmed.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new Error(`siteForms({ base: ${JSON.stringify(base)} }): a path of plain segments is needed, such as '/forms' or '/site/forms'.`);
  }
  return trimmed;
}

/**
 * The prefix of every path we make: Astro's `base` (`/`, `/shop` or `/shop/`, as the owner wrote it),
 * then ours. '' at the root of both.
 */
export function mountOf(astroBase: string | undefined, base: string): string {
  const astro = astroBase && astroBase !== '/' ? `/${astroBase.replace(/^\/+|\/+$/g, '')}` : '';
  return `${astro}${base}`;
}

/**
 * The mount of this copy of the module. Each world that loads it sets it from the owner's options:
 * the integration at config time (Node's copy, which `astro dev`'s dispatcher shares), the built
 * server's boot and the middleware from `virtual:site-forms/options` (the bundle's copy, which
 * Vite's pages share). No global: a copy that was never told stays at the root.
 */
let mount = '';

/** Sets this copy's mount: the integration as it reads its options, the built server as it boots. */
export function setMount(value: string): void {
  mount = value;
}

/** This copy's mount: '' unless the integration set one. */
export function currentMount(): string {
  return mount;
}

/** A path of ours (`/api/contact`, `/thank-you/contact/`, `/admin?x=1`) where the site serves it. */
export function ourPath(path: string, mount: string = currentMount()): string {
  return `${mount}${path}`;
}

/**
 * A request-target with the mount taken off (`/forms/api/contact?x` → `/api/contact?x`), or
 * undefined when it is not under the mount: then it is the owner's, never ours.
 */
export function withinMount(rawTarget: string, mount: string = currentMount()): string | undefined {
  if (mount === '') return rawTarget;
  if (!rawTarget.startsWith(mount)) return undefined;
  const rest = rawTarget.slice(mount.length);
  if (rest === '') return '/';
  if (rest.startsWith('?')) return `/${rest}`;
  return rest.startsWith('/') ? rest : undefined;
}
