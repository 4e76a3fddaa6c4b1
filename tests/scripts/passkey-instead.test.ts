// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { enhancePasskeyInstead } from '../../packages/site-forms/src/scripts/passkeys.ts';

/**
 * The welcome page's "Use a passkey instead of a password" (decision 0298) in a DOM: shown only
 * where the browser has WebAuthn; checked, the password field is hidden and disabled (the post
 * then carries no password), unchecked it is required again. Chromium runs it whole in
 * tests/e2e/passkeys.test.ts.
 */
const MARKUP = `
  <form method="post" action="/admin/actions/accept-link">
    <div class="field" data-passkey-instead hidden>
      <div><input id="welcome-passkey" type="checkbox" /><label for="welcome-passkey">Use a passkey instead of a password</label></div>
    </div>
    <div class="field" data-password-field>
      <input id="welcome-password" name="password" type="password" minlength="12" required />
    </div>
  </form>`;

const parts = () => ({
  choice: document.querySelector<HTMLElement>('[data-passkey-instead]')!,
  box: document.querySelector<HTMLInputElement>('#welcome-passkey')!,
  field: document.querySelector<HTMLElement>('[data-password-field]')!,
  password: document.querySelector<HTMLInputElement>('#welcome-password')!,
});

const webAuthn = globalThis as { PublicKeyCredential?: unknown };
afterEach(() => {
  delete webAuthn.PublicKeyCredential;
});

describe('a passkey instead of a password', () => {
  test('without WebAuthn the choice stays hidden and the password required', () => {
    document.body.innerHTML = MARKUP;
    const { choice, password } = parts();
    enhancePasskeyInstead(choice);
    expect(choice.hidden).toBe(true);
    expect(password.required).toBe(true);
  });

  test('with WebAuthn it is shown; checked, the password is hidden and out of the post; unchecked, required again', () => {
    webAuthn.PublicKeyCredential = function PublicKeyCredential() {};
    document.body.innerHTML = MARKUP;
    const { choice, box, field, password } = parts();
    enhancePasskeyInstead(choice);
    expect(choice.hidden).toBe(false);
    expect([field.hidden, password.disabled, password.required]).toEqual([false, false, true]);
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    expect([field.hidden, password.disabled, password.required]).toEqual([true, true, false]);
    expect([...new FormData(password.form!).keys()]).not.toContain('password');
    box.checked = false;
    box.dispatchEvent(new Event('change'));
    expect([field.hidden, password.disabled, password.required]).toEqual([false, false, true]);
  });
});
