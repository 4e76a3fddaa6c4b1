import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { postForm, type Site, startSite } from '../support/site.ts';

/**
 * Issue 42 step S8a on the built server: the passkey posts answer JSON, and the owner's build
 * finds @simplewebauthn/server itself at the first ceremony (it is loaded from site-forms' own
 * folder, not bundled). The browser's side, with Chromium's virtual authenticator, is
 * tests/e2e/passkeys.test.ts (step S8b).
 */
const PUBLIC_URL = 'https://forms.example.test';

describe('the passkey posts of the built server', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ PUBLIC_URL, ADMIN_PASSWORD_HASH: await hashPassword('correct horse battery staple') });
  });
  afterAll(async () => {
    await site?.stop();
  });

  test('a sign-in’s options: WebAuthn’s, for PUBLIC_URL’s domain, as JSON never cached', async () => {
    const answer = await postForm(`${site.url}/admin/actions/passkey-options`, { purpose: 'authenticate' }, { origin: PUBLIC_URL });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const body = (await answer.json()) as {
      success: boolean;
      options: { rpId: string; challenge: string; allowCredentials: unknown[]; userVerification: string };
    };
    expect(body).toMatchObject({ success: true, options: { rpId: 'forms.example.test', allowCredentials: [], userVerification: 'required' } });
    expect(body.options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('a made-up passkey’s sign-in: the one refusal, 403 JSON; from another site: refused before anything', async () => {
    const response = JSON.stringify({ id: 'made-up', rawId: 'made-up', type: 'public-key', response: {}, clientExtensionResults: {} });
    const answer = await postForm(`${site.url}/admin/actions/passkey-sign-in`, { response }, { origin: PUBLIC_URL });
    expect(answer.status).toBe(403);
    await expect(answer.json()).resolves.toEqual({ success: false, message: 'This passkey cannot sign in here.' });
    const foreign = await postForm(`${site.url}/admin/actions/passkey-sign-in`, { response }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
