/**
 * The proof that the page's script ran: fetch a challenge from the server while the visitor
 * fills in the form, solve it with `crypto.subtle` (ALTCHA's protocol, decision 0091), and
 * send the answer with the form in a hidden field. Without a proof the form still posts.
 */

/** The hidden field that carries the proof, named as ALTCHA's widget names it. */
export const PROOF_FIELD = 'altcha';

/** Where the server hands out challenges. */
export const CHALLENGE_PATH = '/api/challenge';

/** A form's endpoint at the end of its path: what comes before it is the prefix of the routes. */
const ENDPOINT_TAIL = /\/api\/(?:contact|newsletter|forms\/[^/]+)$/;

/** How long a submit waits for an unfinished proof before posting without one. */
export const PROOF_WAIT_MS = 5_000;

/** Hashes asked of `crypto.subtle` at once: one at a time spends most of the time waiting. */
const BATCH = 32;

/** The most counters tried: far above the server's bound, so a broken challenge cannot run forever. */
const MAX_COUNTER = 1 << 20;

/** A challenge as the server signs it (altcha-lib 2's `Challenge`), read only as far as solving needs. */
export type ProofChallenge = {
  parameters: { algorithm: string; nonce: string; salt: string; cost: number; keyPrefix: string; keyLength?: number };
  signature?: string;
};

/** The answer of GET /api/challenge: the challenge, and Turnstile's site key when the site uses it. */
export type ChallengeAnswer = { success?: unknown; challenge?: ProofChallenge; turnstileSiteKey?: unknown };

/** Cloudflare's script, loaded only on sites that configured Turnstile. */
export const TURNSTILE_SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

/**
 * Finds the counter whose derived key starts with the challenge's prefix, and answers the
 * field's value: base64 JSON of `{ challenge, solution }`, or undefined when none is found.
 * Hint: the key is SHA applied `cost` times to salt, nonce and the counter as 4 bytes (big-endian).
 */
export async function solveChallenge(challenge: ProofChallenge, limit = MAX_COUNTER): Promise<string | undefined> {
  const { algorithm, nonce, salt, cost, keyPrefix, keyLength = 32 } = challenge.parameters;
  const head = fromHex(salt + nonce);
  const derive = async (counter: number): Promise<string> => {
    let data = new Uint8Array(head.length + 4);
    data.set(head);
    new DataView(data.buffer).setUint32(head.length, counter);
    for (let round = 0; round < cost; round++) data = new Uint8Array(await crypto.subtle.digest(algorithm, data));
    return toHex(data.subarray(0, keyLength));
  };
  for (let start = 0; start < limit; start += BATCH) {
    const keys = await Promise.all(Array.from({ length: BATCH }, (_, i) => derive(start + i)));
    const found = keys.findIndex((key) => key.startsWith(keyPrefix));
    if (found >= 0) return btoa(JSON.stringify({ challenge, solution: { counter: start + found, derivedKey: keys[found] } }));
  }
  return undefined;
}

/**
 * Starts the proof when the visitor first moves into the form, and answers a function that
 * the submit awaits: it puts the proof into the form when one is ready within PROOF_WAIT_MS.
 * Hint: every failure (no challenge, no answer) leaves the form without a proof, never stuck.
 */
export function prepareProof(form: HTMLFormElement, challengeUrl: string, fetchImpl: typeof fetch = fetch, waitMs = PROOF_WAIT_MS): () => Promise<void> {
  let proof: Promise<string | undefined> | undefined;
  const start = () =>
    (proof ??= fetchImpl(challengeUrl, { headers: { Accept: 'application/json' } })
      .then((response) => response.json() as Promise<ChallengeAnswer>)
      .then(({ challenge, turnstileSiteKey }) => {
        if (typeof turnstileSiteKey === 'string') showTurnstile(form, turnstileSiteKey);
        return challenge && solveChallenge(challenge);
      })
      .catch(() => undefined));
  // Starting at the first focus lets the work run while the visitor types, so the submit rarely waits.
  form.addEventListener('focusin', start, { once: true });
  return async () => {
    const payload = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      // start() never rejects: every failure ends as "no proof".
      void start().then((value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });
    if (payload) hiddenField(form).value = payload;
  };
}

/** The challenge address beside a form's endpoint, so a form posting to another site asks that site. */
export function challengeUrl(endpoint: string, page: string): string {
  const url = new URL(endpoint, page);
  // Under the routes' prefix (`/forms/api/contact`), the challenge is there too (decision 0230).
  const tail = ENDPOINT_TAIL.exec(url.pathname);
  return new URL(`${tail ? url.pathname.slice(0, tail.index) : ''}${CHALLENGE_PATH}`, url).href;
}

/**
 * Puts Cloudflare's widget above the submit button; it adds its token to the form as
 * `cf-turnstile-response`.
 */
function showTurnstile(form: HTMLFormElement, sitekey: string): void {
  const box = document.createElement('div');
  form.querySelector('button[type="submit"]')?.before(box);
  const script = document.createElement('script');
  script.src = TURNSTILE_SCRIPT;
  // Rendered from the script's load event: `render=explicit` leaves it to us, and the page stays usable without it.
  script.onload = () =>
    (window as unknown as { turnstile?: { render(box: HTMLElement, options: { sitekey: string }): void } }).turnstile?.render(box, { sitekey });
  document.head.append(script);
}

function hiddenField(form: HTMLFormElement): HTMLInputElement {
  let field = form.querySelector<HTMLInputElement>(`input[name="${PROOF_FIELD}"]`);
  if (!field) {
    field = document.createElement('input');
    field.type = 'hidden';
    field.name = PROOF_FIELD;
    form.append(field);
  }
  return field;
}

function fromHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
