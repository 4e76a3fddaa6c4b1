declare namespace App {
  interface Locals {
    /** Set by a form endpoint before it shows the form again to a visitor without JavaScript (src/lib/visitor-answer.ts). */
    formRetry?: import('./lib/visitor-answer.ts').FormRetry;
  }
}
