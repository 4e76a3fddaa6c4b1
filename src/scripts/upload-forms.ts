/**
 * The script of a page whose form has a file field (UploadScript.astro): enhances each such form
 * with src/scripts/uploads.ts, the proof of work first as for every form (forms.ts leaves these to it).
 */
import { challengeUrl, prepareProof } from './proof.ts';
import { enhanceUploadForm } from './uploads.ts';

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-form]')) {
  if (!form.querySelector('input[type="file"]')) continue;
  enhanceUploadForm(form, { beforeSend: prepareProof(form, challengeUrl(form.action, location.href)) });
}
