import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { handleContactConfirmation, hasFetchMetadata } from '../../../packages/site-forms/src/lib/contact/contact-handlers.ts';
import type { SubmissionStore } from '../../../packages/site-forms/src/lib/contact/submission-store.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE } from '../../support/stores.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { Change } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { createSpamService } from '../../../packages/site-forms/src/lib/spam/service.ts';
import { createMemoryUsedChallenges } from '../../../packages/site-forms/src/lib/spam/used-challenges.ts';
import { SPAM_ON } from '../../support/fake-spam-services.ts';

const service = createSpamService(SPAM_ON, {
  secret: 's3cret',
  used: createMemoryUsedChallenges(),
  logger: createLogger({ level: 'error', write: () => {} }),
  blog: 'https://www.example.com',
});

function press(fields: Record<string, string>): Request {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return new Request('http://site.test/api/contact/confirm', { method: 'POST', body });
}

/** The confirmation's parts: a store answering `change` (and `form` when asked), a log, and the ids queued. */
function parts(change: Change, form?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const confirmed: number[] = [];
  const queued: number[] = [];
  const submissions: Pick<SubmissionStore, 'confirmBySender'> & Partial<Pick<SubmissionStore, 'formOf'>> = {
    confirmBySender: async (id) => {
      confirmed.push(id);
      return change;
    },
    ...(form !== undefined && { formOf: async () => form }),
  };
  const events = () => lines.map(({ event, id }) => ({ event, id }));
  return { deps: { submissions, logger, onStored: (id: number) => queued.push(id), spam: { service } }, confirmed, queued, events };
}

describe('POST /api/contact/confirm handler', () => {
  test('a good token queues its held message once, logs it, and lands on the thank-you page of the contact form', async () => {
    const { deps, confirmed, queued, events } = parts({ found: true, from: 'spam', changed: true, to: 'pending' }, 'contact');
    await expect(handleContactConfirmation(press({ token: await service.confirmationFor(42) }), deps)).resolves.toEqual({ kind: 'accepted' });
    expect(confirmed).toEqual([42]);
    expect(queued).toEqual([42]);
    expect(events()).toEqual([{ event: 'contact.confirmed_by_sender', id: 42 }]);
  });

  test('a store without formOf still answers accepted', async () => {
    const { deps, queued } = parts({ found: true, from: 'spam', changed: true, to: 'pending' });
    await expect(handleContactConfirmation(press({ token: await service.confirmationFor(7) }), deps)).resolves.toEqual({ kind: 'accepted' });
    expect(queued).toEqual([7]);
  });

  test.each<[string, Change]>([
    ['a message pressed again, already on its way', { found: true, from: 'pending', changed: false }],
    ['a message deleted meanwhile', { found: false }],
    ['a message that had been sent before it was held, back to sent', { found: true, from: 'spam', changed: true, to: 'sent' }],
    ['a change that did not happen', { found: true, from: 'spam', changed: false, to: 'pending' }],
  ])('%s is accepted, and neither queued nor logged', async (_, change) => {
    const { deps, queued, events } = parts(change, 'contact');
    await expect(handleContactConfirmation(press({ token: await service.confirmationFor(9) }), deps)).resolves.toEqual({ kind: 'accepted' });
    expect(queued).toEqual([]);
    expect(events()).toEqual([]);
  });

  test('a message of a form the site no longer has lands on the thank-you page of the contact form', async () => {
    const { deps } = parts({ found: true, from: 'spam', changed: true, to: 'pending' }, 'gone-form');
    await expect(handleContactConfirmation(press({ token: await service.confirmationFor(3) }), deps)).resolves.toEqual({ kind: 'accepted' });
  });

  test('a tampered token is refused with 400 and touches no message', async () => {
    const { deps, confirmed, queued } = parts({ found: true, from: 'spam', changed: true, to: 'pending' }, 'contact');
    const token = await service.confirmationFor(5);
    await expect(handleContactConfirmation(press({ token: `${token}x` }), deps)).resolves.toEqual({
      kind: 'failure',
      status: 400,
      error: 'This confirmation has expired. Please send your message again.',
    });
    expect([confirmed, queued]).toEqual([[], []]);
  });

  test('a body it cannot read is refused with 415 before any token is looked at', async () => {
    const { deps, confirmed } = parts({ found: true, from: 'spam', changed: true, to: 'pending' }, 'contact');
    const request = new Request('http://site.test/api/contact/confirm', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    await expect(handleContactConfirmation(request, deps)).resolves.toMatchObject({ kind: 'failure', status: 415 });
    expect(confirmed).toEqual([]);
  });
});

describe('fetch metadata', () => {
  test('a browser sends all three headers; any one missing is not a browser', () => {
    const all = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    expect(hasFetchMetadata(new Headers(all))).toBe(true);
    const without = (name: string) => new Headers(Object.fromEntries(Object.entries(all).filter(([key]) => key !== name)));
    expect(['sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest'].map((name) => hasFetchMetadata(without(name)))).toEqual([false, false, false]);
    expect(hasFetchMetadata(new Headers({ 'sec-fetch-mode': 'cors' }))).toBe(false);
  });
});

describe('the store the confirmation asks for the form', () => {
  test('answers the form of a stored message, and nothing for an id it does not have', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-confirm-'));
    const db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    try {
      const id = await db.submissions.save({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' });
      await expect(db.submissions.formOf(id)).resolves.toBe('contact');
      await expect(db.submissions.formOf(id + 1)).resolves.toBeUndefined();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
