/**
 * The script of a page whose form has a file field (UploadScript.astro): enhances each such form
 * with src/scripts/uploads.ts, the proof of work first as for every form (forms.ts leaves these to
 * it). The contact form (a file field added in contactFields) posts where forms.ts would post it:
 * CONTACT_FORM_ENDPOINT when set.
 */
import { CONTACT_FORM_ENDPOINT } from 'astro:env/client';
import { contactEndpoint } from './contact-form.ts';
import { challengeUrl, prepareProof } from './proof.ts';
import { enhanceUploadForm } from './uploads.ts';

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-form], form[data-contact-form]')) {
  if (!form.querySelector('input[type="file"]')) continue;
  const endpoint = form.hasAttribute('data-contact-form') ? contactEndpoint(CONTACT_FORM_ENDPOINT, form.getAttribute('action')) : form.action;
  enhanceUploadForm(form, { endpoint, beforeSend: prepareProof(form, challengeUrl(endpoint, location.href)) });
}
