import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { OutsideCheck } from '../../../packages/site-forms/src/lib/spam/outside.ts';
import { issueChallenge } from '../../../packages/site-forms/src/lib/spam/proof.ts';
import { DEFAULT_WEIGHTS } from '../../../packages/site-forms/src/lib/spam/weights.ts';
import { combineVerdict, judgeContact, type Layers, type SpamFilter, type Verdict } from '../../../packages/site-forms/src/lib/spam/verdict.ts';

const ISSUED = 1_000_000;
const later = (ms: number) => ISSUED + ms;
const proofOk = { ok: true, issuedAt: ISSUED, nonce: { id: 'nonce-1', expiresAtMs: ISSUED + 600_000 } } as const;
const SIGNAL_SPAM: OutsideCheck = { ok: true, spam: true };
const SIGNAL_HAM: OutsideCheck = { ok: true, spam: false };
const NO_ANSWER: OutsideCheck = { ok: false, detail: 'no answer within 5000 ms' };

describe('the verdict combines every layer', () => {
  test.each<[string, Layers, Verdict]>([
    [
      'a person with the page’s script, after a minute',
      { proof: proofOk, submittedAt: later(60_000), browser: true, content: [] },
      { spam: false, reasons: [] },
    ],
    ['exactly 3 seconds after the challenge', { proof: proofOk, submittedAt: later(3_000), browser: true, content: [] }, { spam: false, reasons: [] }],
    [
      '2.999 seconds after the challenge (a form the browser filled in): a weak sign alone',
      { proof: proofOk, submittedAt: later(2_999), browser: true, content: [] },
      { spam: false, reasons: ['too-fast'] },
    ],
    [
      'too fast, from a program',
      { proof: proofOk, submittedAt: later(2_999), browser: false, content: [] },
      { spam: true, reasons: ['too-fast', 'no-browser'] },
    ],
    [
      'no proof from a browser (JavaScript off): a weak sign alone',
      { proof: { ok: false, reason: 'missing' }, submittedAt: later(0), browser: true, content: [] },
      { spam: false, reasons: ['proof-missing'], confirmable: true },
    ],
    [
      'no proof from a program (curl): two weak signs',
      { proof: { ok: false, reason: 'missing' }, submittedAt: later(0), browser: false, content: [] },
      { spam: true, reasons: ['proof-missing', 'no-browser'], confirmable: true },
    ],
    [
      'no proof and link stuffing: held, and not for a click to let go',
      { proof: { ok: false, reason: 'missing' }, submittedAt: later(0), browser: true, content: ['too-many-links'] },
      { spam: true, reasons: ['proof-missing', 'too-many-links'] },
    ],
    [
      'an expired proof (a page left open for a day): a weak sign alone',
      { proof: { ok: false, reason: 'expired' }, submittedAt: later(0), browser: true, content: [] },
      { spam: false, reasons: ['proof-expired'] },
    ],
    [
      'a replayed proof',
      { proof: { ok: false, reason: 'replayed' }, submittedAt: later(60_000), browser: true, content: [] },
      { spam: true, reasons: ['proof-replayed'] },
    ],
    [
      'a forged proof',
      { proof: { ok: false, reason: 'forged' }, submittedAt: later(60_000), browser: true, content: [] },
      { spam: true, reasons: ['proof-forged'] },
    ],
    ['many links', { proof: proofOk, submittedAt: later(60_000), browser: true, content: ['too-many-links'] }, { spam: true, reasons: ['too-many-links'] }],
    [
      'Turnstile refused the visitor',
      { proof: proofOk, submittedAt: later(60_000), browser: true, content: [], turnstile: SIGNAL_SPAM },
      { spam: true, reasons: ['turnstile-failed'] },
    ],
    [
      'Turnstile passed the visitor',
      { proof: proofOk, submittedAt: later(60_000), browser: true, content: [], turnstile: SIGNAL_HAM },
      { spam: false, reasons: [] },
    ],
    [
      'Akismet says spam',
      { proof: proofOk, submittedAt: later(60_000), browser: true, content: [], akismet: SIGNAL_SPAM },
      { spam: true, reasons: ['akismet-spam'] },
    ],
    ['Akismet says not spam', { proof: proofOk, submittedAt: later(60_000), browser: true, content: [], akismet: SIGNAL_HAM }, { spam: false, reasons: [] }],
    [
      'both outside checks without an answer',
      { proof: proofOk, submittedAt: later(60_000), browser: true, content: [], turnstile: NO_ANSWER, akismet: NO_ANSWER },
      { spam: false, reasons: [] },
    ],
    [
      'everything at once, in a fixed order',
      {
        proof: { ok: false, reason: 'missing' },
        submittedAt: later(0),
        browser: false,
        content: ['too-many-links', 'link-in-name'],
        turnstile: SIGNAL_SPAM,
        akismet: SIGNAL_SPAM,
      },
      { spam: true, reasons: ['proof-missing', 'no-browser', 'too-many-links', 'link-in-name', 'turnstile-failed', 'akismet-spam'] },
    ],
  ])('%s', (_, layers, verdict) => {
    expect(combineVerdict(layers)).toEqual(verdict);
  });

  test.each<[string, Record<string, number>, number, boolean]>([
    ['the defaults: two weak signs hold', {}, 2, true],
    ['a higher threshold lets two weak signs through', {}, 3, false],
    ['a program that is welcome: no-browser weighs nothing', { 'no-browser': 0 }, 2, false],
    ['a stricter owner: a missing proof holds alone', { 'proof-missing': 2 }, 2, true],
  ])('the owner tunes the weighing: %s', (_, changes, threshold, spam) => {
    const layers: Layers = { proof: { ok: false, reason: 'missing' }, submittedAt: later(60_000), browser: false, content: [] };
    expect(combineVerdict(layers, { weights: { ...DEFAULT_WEIGHTS, ...changes }, threshold }).spam).toBe(spam);
  });

  // The threshold of 2 is shown by the verdicts above: one weak sign passes, two are held.
  test('the default weights: weak signs weigh 1, strong ones the threshold', () => {
    expect(
      Object.entries(DEFAULT_WEIGHTS)
        .filter(([, weight]) => weight === 1)
        .map(([reason]) => reason),
    ).toEqual(['proof-missing', 'proof-expired', 'too-fast', 'no-browser']);
    expect(Object.values(DEFAULT_WEIGHTS).filter((weight) => weight === 2)).toHaveLength(9);
  });

  // Each reason's sentence for the owner: tests/lib/spam/inbox.test.ts, as `npm run inbox -- show` prints it.
});

const SECRET = 'verdict-test-secret';

async function solvedProof(issuedAt: number): Promise<string> {
  const challenge: Challenge = await issueChallenge({ secret: SECRET, now: () => issuedAt });
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

function filter(overrides: Partial<SpamFilter> = {}, lines: string[] = []): SpamFilter {
  return {
    enabled: true,
    maxLinks: 2,
    secret: SECRET,
    logger: createLogger({ level: 'info', write: (line) => lines.push(line) }),
    ...overrides,
  };
}

const message = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'A question about your opening hours.', ip: '203.0.113.7', browser: true };

describe('judging a contact message', () => {
  test('a solved proof sent a minute later is clean and hands its nonce on, unconsumed: the store consumes it with the message', async () => {
    const now = Date.now();
    const proof = await solvedProof(now - 60_000);
    const spam = filter({ now: () => now });
    const first = await judgeContact({ ...message, proof }, spam);
    expect(first).toEqual({
      spam: false,
      reasons: [],
      proof: { id: expect.stringMatching(/^[0-9a-f]{16,}$/), expiresAtMs: expect.any(Number) },
      shownPerson: true,
    });
    // Judging again finds nothing new: only the store's transaction knows whether it was used.
    await expect(judgeContact({ ...message, proof }, spam)).resolves.toEqual(first);
  });

  test('with the filter off nothing is checked', async () => {
    await expect(judgeContact({ ...message, proof: undefined }, filter({ enabled: false }))).resolves.toEqual({ spam: false, reasons: [] });
  });

  test('the outside checks are asked with the token and the message', async () => {
    const asked: unknown[] = [];
    const spam = filter({
      turnstile: {
        verify: async (token, ip) => {
          asked.push(['turnstile', token, ip]);
          return SIGNAL_HAM;
        },
      },
      akismet: {
        check: async (comment) => {
          asked.push(['akismet', comment.name, comment.ip]);
          return SIGNAL_SPAM;
        },
        submitSpam: async () => ({ ok: true }),
        submitHam: async () => ({ ok: true }),
      },
    });
    // Turnstile passed the visitor: a person's browser, though Akismet holds the message.
    await expect(judgeContact({ ...message, proof: undefined, turnstileToken: 'tok' }, spam)).resolves.toEqual({
      spam: true,
      reasons: ['proof-missing', 'akismet-spam'],
      shownPerson: true,
    });
    expect(asked).toEqual([
      ['turnstile', 'tok', '203.0.113.7'],
      ['akismet', 'Ada Lovelace', '203.0.113.7'],
    ]);
  });

  test('a token that is not text counts as no token', async () => {
    let seen: string | undefined;
    const spam = filter({
      turnstile: {
        verify: async (token) => {
          seen = token;
          return SIGNAL_SPAM;
        },
      },
    });
    await judgeContact({ ...message, proof: undefined, turnstileToken: new Blob(['x']) }, spam);
    expect(seen).toBe('');
  });

  test('an outside check that fails is logged once per outage, and its return once', async () => {
    const lines: string[] = [];
    let answer: OutsideCheck = { ok: false, detail: 'refused the key (invalid)', check: 'AKISMET_API_KEY' };
    const spam = filter({ akismet: { check: async () => answer, submitSpam: async () => ({ ok: true }), submitHam: async () => ({ ok: true }) } }, lines);
    await judgeContact({ ...message, proof: undefined }, spam);
    await judgeContact({ ...message, proof: undefined }, spam);
    answer = SIGNAL_HAM;
    await judgeContact({ ...message, proof: undefined }, spam);
    await judgeContact({ ...message, proof: undefined }, spam);
    const logged = lines.map((line) => {
      const { time: _, ...rest } = JSON.parse(line);
      return rest;
    });
    expect(logged).toEqual([
      {
        level: 'warn',
        event: 'spam.outside_check_failed',
        service: 'akismet',
        detail: 'refused the key (invalid)',
        check: 'AKISMET_API_KEY',
        note: 'the message is judged without it',
      },
      { level: 'info', event: 'spam.outside_check_back', service: 'akismet' },
    ]);
  });

  test('a failure without a variable to check names none', async () => {
    const lines: string[] = [];
    const spam = filter({ turnstile: { verify: async () => NO_ANSWER } }, lines);
    await judgeContact({ ...message, proof: undefined }, spam);
    expect(JSON.parse(lines[0]!)).not.toHaveProperty('check');
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'turnstile', detail: 'no answer within 5000 ms' });
  });
});
