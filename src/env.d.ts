declare namespace App {
  /** What our dispatcher hands Astro with each request it renders (src/server/dispatch.ts). */
  interface Locals {
    /** The services of this process: the admin's pages read through them. */
    services: import('./lib/app/services.ts').Services;
    /** A form's page to show again after a post without JavaScript was refused (src/lib/pipeline/form-view.ts). */
    formView?: import('./lib/pipeline/form-view.ts').FormView;
    /** A refused admin post to show as a page (src/lib/pipeline/admin-route.ts). */
    adminRefusal?: import('./lib/pipeline/admin-route.ts').AdminRefusalView;
  }
}

/**
 * The layout the integration's pages render in (the owner's `layout` option of `siteForms()`, or
 * src/layouts/Base.astro): it gets `title`, `description` and `path`, and the page in its default slot.
 */
declare module 'virtual:site-forms/layout' {
  const Layout: (props: { title: string; description: string; path?: string; [prop: string]: unknown }) => unknown;
  export default Layout;
}

/** What the integration's middleware knows of the owner's Astro configuration (src/integration/integration.ts). */
declare module 'virtual:site-forms/options' {
  const options: import('./integration/integration.ts').OwnerOptions;
  export default options;
}
