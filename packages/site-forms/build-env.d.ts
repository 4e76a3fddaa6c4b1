/**
 * What `astro sync` generates for a site with this integration, for the library's own build
 * (tsconfig.build.json), which runs on `npm install` before any site has been synced.
 * The starter's type check reads the generated .astro/types.d.ts instead (the root tsconfig excludes this file).
 */
declare module 'astro:env/client' {
  /** The contact form's endpoint on another server (the integration's env schema). */
  export const CONTACT_FORM_ENDPOINT: string | undefined;
}
