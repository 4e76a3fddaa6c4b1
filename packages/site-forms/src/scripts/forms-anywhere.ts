/**
 * /forms.js: the forms' script for a page of the owner's own site elsewhere (forms for any static
 * site, decision 0168), included with `<script src="https://forms.example.com/forms.js" defer>`.
 * It gives every form whose `action` is this server's the JavaScript path of our own pages (the
 * client state machine, the proof of work, the field errors, the spec's messages), with the same
 * modules (src/scripts), and makes what they need when the owner's markup lacks it.
 * Hint: bundled by scripts/build-server.mjs into dist/client/forms.js as a classic script, so that
 * `document.currentScript` names this server; the words are the site's language's, put in at the build.
 */
import { enhanceFieldsForm } from './form-ui.ts';
import { enhanceNewsletterForm } from './newsletter-form.ts';
import { challengeUrl, prepareProof } from './proof.ts';

/** A form's words when its markup names none (`data-busy`, `data-thanks`): the site's language's, from the build. */
export type SiteWords = {
  failed: string;
  newsletter: { busy: string; thanks: string; confirmThanks: string };
  contact: { busy: string; thanks: string };
  /** An owner's form's words by its name (forms.config.ts), and `form` for a name the build did not know. */
  forms: Record<string, { busy: string; thanks: string }>;
  form: { busy: string; thanks: string };
};

/** Which of this server's forms a form posts to: an owner's form by its name (forms.config.ts). */
type Target = { kind: 'newsletter' } | { kind: 'contact' } | { kind: 'form'; name: string };

/** Marks a form taken, so that a second copy of the script on the page does not take it twice. */
const TAKEN = 'formsEnhanced';

/**
 * Enhances every form of `document` that posts to `server` (an origin) at one of its form routes;
 * answers how many it took. A form whose markup cannot be completed keeps posting on its own.
 */
export function enhanceForeignForms(document: Document, server: string, words: SiteWords, fetchImpl: typeof fetch = fetch): number {
  let taken = 0;
  for (const form of document.querySelectorAll<HTMLFormElement>('form')) {
    const target = targetOf(form, server);
    if (!target || form.dataset[TAKEN]) continue;
    form.dataset[TAKEN] = 'true';
    try {
      complete(form, target, words);
      // The action, resolved by the browser: the challenge and the post go to this server.
      const endpoint = form.action;
      const proof = prepareProof(form, challengeUrl(endpoint, document.baseURI), fetchImpl);
      // The contact form and the owner's forms send alike (field errors at the fields); the
      // newsletter's 400 is about its address, and its thanks may name the confirmation mail.
      if (target.kind === 'newsletter') enhanceNewsletterForm(form, fetchImpl, proof, endpoint);
      else enhanceFieldsForm(form, endpoint, fetchImpl, proof);
      taken++;
    } catch {
      // The native post stays: the visitor still reaches the server, without the script's help.
    }
  }
  return taken;
}

/** Which of this server's forms a form posts to, by its action; undefined for any other form. */
function targetOf(form: HTMLFormElement, server: string): Target | undefined {
  // `getAttribute`: a field named "action" would shadow the property.
  const action = urlOf(form.getAttribute('action') ?? '', form.ownerDocument.baseURI);
  if (!action || action.origin !== server || form.method.toLowerCase() !== 'post') return undefined;
  if (action.pathname === '/api/newsletter') return { kind: 'newsletter' };
  if (action.pathname === '/api/contact') return { kind: 'contact' };
  const name = /^\/api\/forms\/([a-z][a-z0-9_-]*)$/.exec(action.pathname)?.[1];
  return name ? { kind: 'form', name } : undefined;
}

/**
 * Adds what the scripts read and write that the owner's markup lacks: the words, a submit
 * button's type, the alert and the status regions, and an error box after each field.
 */
function complete(form: HTMLFormElement, target: Target, words: SiteWords): void {
  const { kind } = target;
  const own = kind !== 'form' ? words[kind] : Object.hasOwn(words.forms, target.name) ? words.forms[target.name]! : words.form;
  form.dataset.busy ||= own.busy;
  form.dataset.thanks ||= own.thanks;
  form.dataset.failed ||= words.failed;
  if (kind === 'newsletter') form.dataset.confirmThanks ||= words.newsletter.confirmThanks;
  // A <button> without a type submits its form; the scripts find it by its type.
  if (!form.querySelector('button[type="submit"]')) form.querySelector('button:not([type])')?.setAttribute('type', 'submit');
  const prefix = form.id || `forms-${kind}-${Math.random().toString(36).slice(2, 8)}`;
  for (const field of form.querySelectorAll<HTMLInputElement>('input[name], select[name], textarea[name]')) {
    if (field.type === 'hidden' || field.type === 'submit' || field.name === 'honeypot' || form.querySelector(`[data-error-for="${CSS.escape(field.name)}"]`))
      continue;
    const box = element(form, 'p', { id: `${prefix}-${field.name}-error`, class: 'field-error', 'data-error-for': field.name });
    // After the label when the field sits in one (a checkbox), so the message stays outside the label's text.
    (field.parentElement?.tagName === 'LABEL' ? field.parentElement : field).after(box);
  }
  if (!form.querySelector('[role="alert"]')) form.append(element(form, 'p', { class: 'form-error', role: 'alert', tabindex: '-1' }));
  if (!form.querySelector('[role="status"]')) form.append(element(form, 'p', { class: 'form-status', role: 'status', 'aria-live': 'polite' }));
}

function element(form: HTMLFormElement, tag: string, attributes: Record<string, string>): HTMLElement {
  const made = form.ownerDocument.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  return made;
}

// Not `URL.parse`: the owner's visitors may have browsers older than it.
function urlOf(value: string, base: string): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}
