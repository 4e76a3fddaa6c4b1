/**
 * `import siteForms from 'site-forms'`: the Astro integration (src/integration/integration.ts),
 * loaded after the hook that lets Node read this package's TypeScript from node_modules
 * (decision 0163).
 */
await import('./node-hooks.mjs');
const { siteForms } = await import('./integration.ts');
/** The largest body the forms accept, for an adapter's own limit (`node({ bodySizeLimit: BODY_LIMIT_BYTES })`). */
const { BODY_LIMIT_BYTES } = await import('../lib/http/form.ts');

export { BODY_LIMIT_BYTES };
export default siteForms;
