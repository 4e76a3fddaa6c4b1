/**
 * `import siteForms from 'site-forms'`: the Astro integration (./integration.ts), loaded after the
 * resolve hook that names the owner's settings to this package's modules (./node-hooks.ts).
 * Hint: a dynamic import, so that nothing of the integration is resolved before the hook is in place.
 */
import './node-hooks.ts';

const integration = await import('./integration.ts');

/** The largest body the forms accept, for an adapter's own limit (`node({ bodySizeLimit: BODY_LIMIT_BYTES })`). */
export const BODY_LIMIT_BYTES: number = integration.BODY_LIMIT_BYTES;
export type { SiteFormsOptions } from './integration.ts';
export default integration.siteForms;
