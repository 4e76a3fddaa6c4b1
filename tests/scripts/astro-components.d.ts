// `astro check` types .astro imports through its language server; plain `tsc` (the second
// half of `npm run check`) cannot, so it gets this fallback. Real modules take precedence.
declare module '*.astro' {
  const Component: import('astro/runtime/server/index.js').AstroComponentFactory;
  export default Component;
}
