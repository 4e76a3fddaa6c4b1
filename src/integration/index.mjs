/**
 * `import siteForms from 'site-forms'`: the Astro integration (src/integration/integration.ts),
 * loaded after the hook that lets Node read this package's TypeScript from node_modules
 * (decision 0163).
 */
await import('./node-hooks.mjs');
const { siteForms } = await import('./integration.ts');

export default siteForms;
