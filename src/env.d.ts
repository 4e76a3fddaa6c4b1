declare namespace App {
  interface Locals {
    /** A form's page to show again after a post without JavaScript was refused (src/lib/pipeline/page.ts). */
    formView?: import('./lib/pipeline/page.ts').FormView;
    /** A refused admin post to show as a page (src/lib/admin/route.ts). */
    adminRefusal?: import('./lib/admin/route.ts').AdminRefusalView;
  }
}
