declare namespace App {
  /** What our dispatcher hands Astro with each request it renders (src/server/dispatch.ts). */
  interface Locals {
    /** The services of this process: the admin's pages read through them. */
    services: import('./lib/services.ts').Services;
    /** A form's page to show again after a post without JavaScript was refused (src/lib/pipeline/page.ts). */
    formView?: import('./lib/pipeline/page.ts').FormView;
    /** A refused admin post to show as a page (src/lib/admin/route.ts). */
    adminRefusal?: import('./lib/admin/route.ts').AdminRefusalView;
  }
}
