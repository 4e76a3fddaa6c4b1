// @vitest-environment happy-dom
import { createChallenge, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { describe, expect, test, vi } from 'vitest';
import { checkProof, issueChallenge } from '../../packages/site-forms/src/lib/spam/proof.ts';
import { createMemoryUsedChallenges } from '../../packages/site-forms/src/lib/spam/used-challenges.ts';
import { enhanceContactForm } from '../../packages/site-forms/src/scripts/contact-form.ts';
import { enhanceNewsletterForm } from '../../packages/site-forms/src/scripts/newsletter-form.ts';
import { challengeUrl, type ProofChallenge, prepareProof, solveChallenge } from '../../packages/site-forms/src/scripts/proof.ts';
import { answering, jsonResponse, renderContactForm, renderNewsletterForm, settled, submit } from './form-dom.ts';

const SECRET = 'script-test-secret';

/** The field the server reads the proof from (spec: the form's `altcha` field). */
const PROOF = 'altcha';

/** A fetch stub that hands out one real challenge of the server, then answers the form with success. */
function serverFetch(challenge: Promise<unknown>) {
  return vi.fn<typeof fetch>(async (url) =>
    String(url).endsWith('/api/challenge') ? jsonResponse({ success: true, challenge: await challenge }) : jsonResponse({ success: true }),
  );
}

const proofOf = (form: HTMLFormElement) => new FormData(form).get(PROOF);

describe('solving a challenge in the browser', () => {
  test('solves a challenge the server issued, and the server accepts the answer', async () => {
    const challenge = await issueChallenge({ secret: SECRET, now: () => Date.now() - 10_000 });
    const payload = await solveChallenge(JSON.parse(JSON.stringify(challenge)) as ProofChallenge);
    expect(payload).toMatch(/^[A-Za-z0-9+/]+=*$/);
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toMatchObject({ ok: true });
    const { solution } = JSON.parse(atob(payload!));
    expect(Object.keys(solution)).toEqual(['counter', 'derivedKey']);
  });

  test('solves a challenge of several rounds, as altcha-lib derives it', async () => {
    const challenge = await createChallenge({ algorithm: 'SHA-256', cost: 3, counter: 7, deriveKey, hmacSignatureSecret: SECRET });
    const { solution } = JSON.parse(atob((await solveChallenge(challenge as ProofChallenge))!));
    expect(solution.counter).toBe(7);
    await expect(verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: SECRET })).resolves.toMatchObject({ verified: true });
  });

  test('gives up at its limit instead of running forever', async () => {
    const impossible: ProofChallenge = { parameters: { algorithm: 'SHA-256', nonce: '00', salt: '00', cost: 1, keyPrefix: 'zz' } };
    await expect(solveChallenge(impossible, 64)).resolves.toBeUndefined();
  });

  test('finds a key with the prefix of a known counter', async () => {
    // SHA-256 of bytes 01 02 00 00 00 03 (salt 01, nonce 02, counter 3).
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array([1, 2, 0, 0, 0, 3])));
    const prefix = Array.from(digest.subarray(0, 3), (b) => b.toString(16).padStart(2, '0')).join('');
    const payload = await solveChallenge({ parameters: { algorithm: 'SHA-256', nonce: '02', salt: '01', cost: 1, keyPrefix: prefix, keyLength: 8 } });
    const { solution } = JSON.parse(atob(payload!));
    expect(solution.counter).toBe(3);
    expect(solution.derivedKey).toHaveLength(16);
    expect(solution.derivedKey.startsWith(prefix)).toBe(true);
  });

  test('an empty salt and nonce leave the counter alone to hash', async () => {
    // SHA-256 of the four bytes 00 00 00 00 (counter 0), as `printf '\0\0\0\0' | sha256sum` gives it.
    const payload = await solveChallenge({ parameters: { algorithm: 'SHA-256', nonce: '', salt: '', cost: 1, keyPrefix: '', keyLength: 4 } });
    expect(JSON.parse(atob(payload!)).solution).toEqual({ counter: 0, derivedKey: 'df3f6198' });
  });
});

describe('the proof on a form', () => {
  test.each([
    ['the same site', '/api/contact', 'http://localhost:3000/contact/', 'http://localhost:3000/api/challenge'],
    ['another site', 'https://forms.example.com/api/contact', 'http://localhost:3000/contact/', 'https://forms.example.com/api/challenge'],
    ['the newsletter', '/', 'https://www.example.com/', 'https://www.example.com/api/challenge'],
  ])('a form posting to %s asks %s', (_, endpoint, page, expected) => {
    expect(challengeUrl(endpoint, page)).toBe(expected);
  });

  test('the challenge is fetched once, when the visitor first moves into the form', async () => {
    const page = renderContactForm();
    const fetchImpl = serverFetch(issueChallenge({ secret: SECRET }));
    prepareProof(page.form, 'http://localhost/api/challenge', fetchImpl);
    expect(fetchImpl).not.toHaveBeenCalled();
    page.field('name').dispatchEvent(new FocusEvent('focusin', { bubbles: true }));
    page.field('email').dispatchEvent(new FocusEvent('focusin', { bubbles: true }));
    expect(fetchImpl.mock.calls.map(([url, init]) => [String(url), init])).toEqual([
      ['http://localhost/api/challenge', { headers: { Accept: 'application/json' } }],
    ]);
  });

  test('the contact form sends the solved proof with its fields', async () => {
    const page = renderContactForm();
    const fetchImpl = serverFetch(issueChallenge({ secret: SECRET }));
    let sent: FormData | undefined;
    const post = vi.fn<typeof fetch>(async (_, init) => {
      sent = init?.body as FormData;
      return jsonResponse({ success: true });
    });
    enhanceContactForm(page.form, { fetchImpl: post, beforeSend: prepareProof(page.form, '/api/challenge', fetchImpl) });
    page.field('name').dispatchEvent(new FocusEvent('focusin', { bubbles: true }));
    submit(page.form);
    await settled(page);
    expect(post).toHaveBeenCalledTimes(1);
    expect(sent!.get('name')).toBe('Ada Lovelace');
    await expect(checkProof(sent!.get(PROOF), createMemoryUsedChallenges(), { secret: SECRET })).resolves.toMatchObject({ ok: true });
  });

  test('the newsletter form sends the proof too, starting it at the submit when no focus came first', async () => {
    const page = renderNewsletterForm();
    const fetchImpl = serverFetch(issueChallenge({ secret: SECRET }));
    enhanceNewsletterForm(page.form, fetchImpl, prepareProof(page.form, '/api/challenge', fetchImpl));
    submit(page.form);
    await settled(page);
    expect(fetchImpl.mock.calls.map(([url]) => String(url))).toEqual(['/api/challenge', '/api/newsletter']);
    const sent = fetchImpl.mock.calls[1]![1]!.body as FormData;
    expect(typeof sent.get(PROOF)).toBe('string');
  });

  test.each<[string, () => ReturnType<typeof vi.fn<typeof fetch>>]>([
    ['the challenge cannot be fetched', () => vi.fn<typeof fetch>(async () => Promise.reject(new TypeError('Failed to fetch')))],
    ['the challenge is not one', () => answering({ success: false, error: 'Not found' }, 404)],
  ])('when %s the form posts without a proof', async (_, failing) => {
    const page = renderContactForm();
    const post = answering({ success: true });
    enhanceContactForm(page.form, { fetchImpl: post, beforeSend: prepareProof(page.form, '/api/challenge', failing()) });
    submit(page.form);
    await settled(page);
    expect(post).toHaveBeenCalledTimes(1);
    expect((post.mock.calls[0]![1]!.body as FormData).has(PROOF)).toBe(false);
    expect(page.status.textContent).toBe("Thanks for your message! We'll get back to you soon.");
  });

  test('by default a challenge that never comes holds the post for 5 seconds: not at 4 999 ms, at 5 000 ms', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const page = renderContactForm();
      let ready = false;
      void prepareProof(
        page.form,
        '/api/challenge',
        vi.fn<typeof fetch>(() => new Promise(() => {})),
      )().then(() => {
        ready = true;
      });
      await vi.advanceTimersByTimeAsync(4_999);
      expect(ready).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(ready).toBe(true);
      expect(proofOf(page.form)).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  test('a challenge that never comes delays the post by the wait only', async () => {
    const page = renderContactForm();
    const ready = prepareProof(
      page.form,
      '/api/challenge',
      vi.fn<typeof fetch>(() => new Promise(() => {})),
      20,
    );
    await ready();
    expect(proofOf(page.form)).toBeNull();
  });

  test('a site with Turnstile gets Cloudflare’s widget above the button, from Cloudflare’s script', async () => {
    const page = renderContactForm();
    const challenge = await issueChallenge({ secret: SECRET });
    const fetchImpl = vi.fn<typeof fetch>(async () => jsonResponse({ success: true, challenge, turnstileSiteKey: '1x00000000000000000000AA' }));
    const rendered: unknown[] = [];
    vi.stubGlobal('turnstile', { render: (box: HTMLElement, options: unknown) => rendered.push([box.nextElementSibling?.tagName, options]) });
    await prepareProof(page.form, '/api/challenge', fetchImpl)();
    const script = document.head.querySelector<HTMLScriptElement>('script[src="https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit"]');
    expect(script).not.toBeNull();
    script!.onload!(new Event('load'));
    expect(rendered).toEqual([['BUTTON', { sitekey: '1x00000000000000000000AA' }]]);
    expect(typeof proofOf(page.form)).toBe('string');
    vi.unstubAllGlobals();
  });

  test('a site without Turnstile loads nothing from Cloudflare', async () => {
    const page = renderContactForm();
    document.head.innerHTML = '';
    await prepareProof(page.form, '/api/challenge', serverFetch(issueChallenge({ secret: SECRET })))();
    expect(document.head.querySelector('script')).toBeNull();
  });

  test('a second submit reuses the proof field instead of adding another', async () => {
    const page = renderContactForm();
    const ready = prepareProof(page.form, '/api/challenge', serverFetch(issueChallenge({ secret: SECRET })));
    await ready();
    await ready();
    expect(new FormData(page.form).getAll(PROOF)).toHaveLength(1);
    expect(page.form.querySelector('input[name="altcha"]')!.getAttribute('type')).toBe('hidden');
  });
});
