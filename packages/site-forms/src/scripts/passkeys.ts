import { browserSupportsWebAuthn, browserSupportsWebAuthnAutofill, startAuthentication, startRegistration } from '@simplewebauthn/browser';

// The admin's passkeys in the browser (issue 42 item 3; decision 0296), over
// @simplewebauthn/browser: signing in with a passkey on the sign-in page (a button, and the
// passkey offered in the email field's autofill where the browser can), adding one on the
// account page, and choosing one instead of a password on the welcome page. Every control is in
// the markup, `hidden`, and shown here only where WebAuthn works, so without JavaScript the
// password form is all there is. The server's posts are src/lib/admin/actions/passkeys.ts.

/** What a person reads when the browser's part failed (cancelled, timed out, no passkey): never the library's or the browser's words. */
export const PASSKEY_WORDS = {
  signInFailed: 'No passkey was used. Try again, or sign in with your password.',
  addFailed: 'No passkey was added: it was cancelled, or this device could not make one. Please try again.',
  unanswered: 'The site did not answer. Please try again.',
} as const;

/** A JSON answer of the admin's passkey posts: `success`, and a `message`, `options` or `location`. */
type Answer = { success?: unknown; message?: unknown; options?: unknown; location?: unknown };

/** A failure whose message is the site's own, shown as it is. */
class Said extends Error {}

/** Posts `fields` as a form (the admin's posts read forms) and reads the JSON answer. */
async function post(url: string, fields: Record<string, string>, fetchImpl: typeof fetch): Promise<Answer> {
  let answer: Response;
  try {
    answer = await fetchImpl(url, {
      method: 'POST',
      body: new URLSearchParams(fields),
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    });
  } catch {
    throw new Said(PASSKEY_WORDS.unanswered);
  }
  const body = (await answer.json().catch(() => undefined)) as Answer | undefined;
  if (!body) throw new Said(PASSKEY_WORDS.unanswered);
  if (body.success !== true) throw new Said(typeof body.message === 'string' ? body.message : PASSKEY_WORDS.unanswered);
  return body;
}

/** Where an answer's `location` (a path of ours, such as `/admin`) is on this site, behind the integration's mount. */
function placeOf(root: HTMLElement, location: unknown, fallback: string): string {
  const path = typeof location === 'string' && location.startsWith('/') && !location.startsWith('//') ? location : fallback;
  return `${root.dataset.mount ?? ''}${path}`;
}

function show(error: HTMLElement | null, text: string): void {
  if (!error) return;
  error.textContent = text;
  error.hidden = false;
}

/**
 * The sign-in page's part (components/admin/PasskeySignIn.astro): shows "Sign in with a passkey"
 * where WebAuthn works; where the browser offers passkeys in autofill, begins a conditional
 * request at once (the form then carries `data-passkey="waiting"`). The button begins a modal
 * request, which ends the conditional one (the library aborts it).
 */
export async function enhancePasskeySignIn(root: HTMLElement, fetchImpl: typeof fetch = fetch): Promise<void> {
  if (!browserSupportsWebAuthn()) return;
  const button = root.querySelector('button');
  const error = root.querySelector<HTMLElement>('[data-passkey-error]');
  const optionsUrl = root.dataset.options;
  const signInUrl = root.dataset.signIn;
  if (!button || !optionsUrl || !signInUrl) return;

  // Once the button is pressed, a conditional request whose options arrive later does not begin
  // (it would abort the button's).
  let pressed = false;
  const signIn = async (conditional: boolean, waiting?: HTMLFormElement): Promise<void> => {
    const { options } = await post(optionsUrl, { purpose: 'authenticate' }, fetchImpl);
    if (conditional && pressed) return;
    if (waiting) waiting.dataset.passkey = 'waiting';
    const response = await startAuthentication({
      optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
      useBrowserAutofill: conditional,
    });
    const answer = await post(signInUrl, { response: JSON.stringify(response) }, fetchImpl);
    window.location.assign(placeOf(root, answer.location, '/admin'));
  };

  root.hidden = false;
  button.addEventListener('click', () => {
    pressed = true;
    if (error) error.hidden = true;
    button.disabled = true;
    signIn(false)
      .catch((failure: unknown) => show(error, failure instanceof Said ? failure.message : PASSKEY_WORDS.signInFailed))
      .finally(() => {
        button.disabled = false;
      });
  });

  const field = document.querySelector<HTMLInputElement>('input[autocomplete~="webauthn"]');
  if (!field?.form || !(await browserSupportsWebAuthnAutofill())) return;
  const { form } = field;
  signIn(true, form)
    .catch((failure: unknown) => {
      // Ended by the button (its own request aborts this one) or by the browser: nothing to say.
      // A passkey chosen in the autofill and refused by the site is said.
      if (failure instanceof Said) show(error, failure.message);
    })
    .finally(() => {
      delete form.dataset.passkey;
    });
}

/**
 * The account page's "Add a passkey" (components/admin/account/Passkeys.astro): options for this
 * session, the browser's registration, then the post that stores it under the typed name; the
 * page then goes where the answer says (the account page, or the overview after an enrolment).
 */
export function enhancePasskeyRegister(form: HTMLFormElement, fetchImpl: typeof fetch = fetch): void {
  if (!browserSupportsWebAuthn()) return;
  const error = form.querySelector<HTMLElement>('[data-passkey-error]');
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  const optionsUrl = form.dataset.options;
  const registerUrl = form.dataset.register;
  if (!button || !optionsUrl || !registerUrl) return;
  form.hidden = false;
  for (const note of document.querySelectorAll<HTMLElement>('[data-passkey-needs-script]')) note.hidden = true;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const fields = new FormData(form);
    const csrf = String(fields.get('csrf') ?? '');
    const name = String(fields.get('name') ?? '');
    if (error) error.hidden = true;
    button.disabled = true;
    (async () => {
      const { options } = await post(optionsUrl, { purpose: 'register', csrf }, fetchImpl);
      const response = await startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] });
      const answer = await post(registerUrl, { csrf, name, response: JSON.stringify(response) }, fetchImpl);
      window.location.assign(placeOf(form, answer.location, '/admin/account'));
    })()
      .catch((failure: unknown) => show(error, failure instanceof Said ? failure.message : PASSKEY_WORDS.addFailed))
      .finally(() => {
        button.disabled = false;
      });
  });
}

/**
 * The welcome page's "Use a passkey instead of a password" (decision 0298): shown where WebAuthn
 * works; while it is checked the password field is hidden and disabled (so the post carries no
 * password, and the server starts an enrolment that adds the passkey on the account page).
 */
export function enhancePasskeyInstead(choice: HTMLElement): void {
  if (!browserSupportsWebAuthn()) return;
  const box = choice.querySelector<HTMLInputElement>('input[type="checkbox"]');
  const form = choice.closest('form');
  const field = form?.querySelector<HTMLElement>('[data-password-field]');
  const password = field?.querySelector<HTMLInputElement>('input[type="password"]');
  if (!box || !field || !password) return;
  const apply = () => {
    field.hidden = box.checked;
    password.disabled = box.checked;
    password.required = !box.checked;
  };
  box.addEventListener('change', apply);
  apply();
  choice.hidden = false;
}

for (const root of document.querySelectorAll<HTMLElement>('[data-passkey-sign-in]')) void enhancePasskeySignIn(root);
for (const choice of document.querySelectorAll<HTMLElement>('[data-passkey-instead]')) enhancePasskeyInstead(choice);
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-passkey-register]')) enhancePasskeyRegister(form);
