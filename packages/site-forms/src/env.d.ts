declare namespace App {
  /** What our dispatcher hands Astro with each request it renders (src/server/dispatch.ts). */
  interface Locals {
    /** The services of this process: the admin's pages read through them. */
    services: import('./lib/app/services.ts').Services;
    /** A form's page to show again after a post without JavaScript was refused (src/lib/pipeline/form-view.ts). */
    formView?: import('./lib/pipeline/form-view.ts').FormView;
    /** A refused admin post to show as a page (src/lib/pipeline/admin-route.ts). */
    adminRefusal?: import('./lib/pipeline/admin-route.ts').AdminRefusalView;
    /** A value an admin post shows once, as a page (src/lib/pipeline/admin-route.ts). */
    adminShown?: import('./lib/pipeline/admin-route.ts').AdminShownView;
    /** The inline styles and scripts of the owner's layout on this page, for its CSP (src/layouts/LayoutAttempt.astro). */
    layoutInline?: import('./lib/http/security-headers.ts').InlineSources;
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
/** The owner's own layout component, which src/layouts/OwnerLayout.astro renders our pages in. */
declare module 'virtual:site-forms/owner-layout' {
  const Layout: (props: { title: string; description: string; path?: string; [prop: string]: unknown }) => unknown;
  export default Layout;
}

declare module 'virtual:site-forms/options' {
  const options: import('./integration/integration.ts').OwnerOptions;
  export default options;
}

/** The owner's pages, as the patterns of their routes (src/integration/integration.ts); null when not known. */
declare module 'virtual:site-forms/pages' {
  const pages: readonly string[] | null;
  export default pages;
}
