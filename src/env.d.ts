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
