/**
 * The page's form script: enhances every newsletter and contact form on the page, and the
 * owner's forms (forms.config.ts).
 * Hint: the only module in src/scripts with effects on import; the others export pure
 * functions that the tests drive with a stubbed fetch. Module scripts run after the
 * document is parsed, so the forms are already there.
 */
import { CONTACT_FORM_ENDPOINT } from 'astro:env/client';
import { contactEndpoint, enhanceContactForm } from './contact-form.ts';
import { enhanceDefinedForm } from './defined-form.ts';
import { enhanceNewsletterForm, NEWSLETTER_ENDPOINT } from './newsletter-form.ts';
import { challengeUrl, prepareProof } from './proof.ts';

// Each form posts where its page rendered its `action` (`getAttribute`: a field named "action" would shadow the property).
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-newsletter-form]')) {
  const endpoint = form.getAttribute('action') || NEWSLETTER_ENDPOINT;
  enhanceNewsletterForm(form, fetch, prepareProof(form, challengeUrl(endpoint, location.href)), endpoint);
}
// A form with files (the contact form with a file field of contactFields too) is upload-forms.ts's
// (a progress bar needs XMLHttpRequest), a script of its own on the pages that have one, so the
// other pages' script stays within its budget.
const hasFiles = (form: HTMLFormElement) => form.querySelector('input[type="file"]') !== null;
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-contact-form]')) {
  if (hasFiles(form)) continue;
  const endpoint = contactEndpoint(CONTACT_FORM_ENDPOINT, form.getAttribute('action'));
  enhanceContactForm(form, { endpoint, beforeSend: prepareProof(form, challengeUrl(endpoint, location.href)) });
}
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-form]')) {
  if (hasFiles(form)) continue;
  enhanceDefinedForm(form, fetch, prepareProof(form, challengeUrl(form.action, location.href)));
}
