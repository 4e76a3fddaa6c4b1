import { AsyncLocalStorage } from 'node:async_hooks';
import type { FormView } from './page.ts';

// Our server runs from its own bundle, the Astro pages from Astro's; a global slot lets
// both reach one store, as src/lib/services.ts does for the services.
const SLOT = Symbol.for('site-forms.form-view');
type Slot = { [SLOT]?: AsyncLocalStorage<FormView> };

/**
 * Where our server puts a form's page for Astro to render: the view is visible to
 * Astro's middleware for the one request it hands over, and to nothing else.
 * Hint: the adapter's standalone handler takes no `locals`, so this is how they travel.
 */
export function formViews(): AsyncLocalStorage<FormView> {
  const slot = globalThis as Slot;
  slot[SLOT] ??= new AsyncLocalStorage<FormView>();
  return slot[SLOT];
}
