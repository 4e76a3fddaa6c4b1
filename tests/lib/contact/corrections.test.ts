import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { markMessageAsSpam, releaseMessage } from '../../../packages/site-forms/src/lib/contact/corrections.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createAkismetClient } from '../../../packages/site-forms/src/lib/spam/akismet.ts';
import { type FakeHttpServer, startFakeHttpServer } from '../../support/fake-http.ts';
import { AKISMET_TEST_KEY, replyAkismet } from '../../support/fake-spam-services.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const INPUT = { name: 'Spammy', email: 'spam@example.com', message: 'Buy now, second line', honeypot: '' };

describe('an owner’s correction Akismet refuses', () => {
  let akismet: FakeHttpServer;
  let dir: string;
  let db: Store;
  const warnings: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    akismet = await startFakeHttpServer(replyAkismet());
  });
  afterAll(() => akismet.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-corrections-'));
    db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    warnings.length = 0;
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test.each([
    ['release', releaseMessage, 'ham'],
    ['marking as spam', markMessageAsSpam, 'spam'],
  ] as const)('a %s with a key Akismet does not know is logged naming the setting to check, and stands', async (_, correct, kind) => {
    const spam = db.spam;
    const id = await spam.hold(INPUT, { reasons: ['too-fast'], ip: '203.0.113.7', userAgent: 'Mozilla/5.0' });
    if (kind === 'spam') await spam.release(id);
    const deps = {
      spam,
      outbox: db.outbox,
      akismet: createAkismetClient({ apiKey: 'not-the-key', blog: 'https://www.example.com', baseUrl: akismet.url }),
      logger: createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) }),
    };
    await expect(correct(id, deps)).resolves.toMatchObject({ found: true, changed: true });
    expect((await db.outbox.find(id))?.status).toBe(kind === 'ham' ? 'pending' : 'spam');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        event: 'spam.akismet_correction_failed',
        id,
        kind,
        detail: 'refused the key (invalid)',
        check: 'AKISMET_API_KEY',
      }),
    ]);
  });

  test('each correction that changes a message is told to Akismet once, with the visitor the message came from', async () => {
    const spam = db.spam;
    const id = await spam.hold(INPUT, { reasons: ['too-fast'], ip: '203.0.113.7', userAgent: 'Mozilla/5.0' });
    const logger = createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) });
    const deps = {
      spam,
      outbox: db.outbox,
      akismet: createAkismetClient({ apiKey: AKISMET_TEST_KEY, blog: 'https://www.example.com', baseUrl: akismet.url }),
      logger,
    };
    akismet.requests.length = 0;
    await expect(releaseMessage(id, deps)).resolves.toMatchObject({ found: true, changed: true });
    await expect(releaseMessage(id, deps)).resolves.toMatchObject({ found: true, changed: false });
    await expect(markMessageAsSpam(id, deps)).resolves.toMatchObject({ found: true, changed: true });
    await expect(markMessageAsSpam(id, deps)).resolves.toMatchObject({ found: true, changed: false });
    await expect(releaseMessage(id + 1, deps)).resolves.toEqual({ found: false });
    await expect(markMessageAsSpam(id + 1, deps)).resolves.toEqual({ found: false });
    expect(
      akismet.requests.map(({ url, body }) => {
        const form = new URLSearchParams(body);
        return [url, form.get('user_ip'), form.get('user_agent'), form.get('comment_author')];
      }),
    ).toEqual([
      ['/1.1/submit-ham', '203.0.113.7', 'Mozilla/5.0', 'Spammy'],
      ['/1.1/submit-spam', '203.0.113.7', 'Mozilla/5.0', 'Spammy'],
    ]);
    expect(warnings).toEqual([]);
  });

  test('without Akismet, or without the visitor’s address, a correction stands and nobody is told', async () => {
    const spam = db.spam;
    const withAddress = await spam.hold(INPUT, { reasons: ['too-fast'], ip: '203.0.113.7' });
    const without = await spam.hold(INPUT, { reasons: ['too-fast'] });
    const logger = createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) });
    akismet.requests.length = 0;
    await expect(releaseMessage(withAddress, { spam, outbox: db.outbox, logger })).resolves.toMatchObject({ found: true, changed: true });
    const akismetClient = createAkismetClient({ apiKey: AKISMET_TEST_KEY, blog: 'https://www.example.com', baseUrl: akismet.url });
    await expect(releaseMessage(without, { spam, outbox: db.outbox, akismet: akismetClient, logger })).resolves.toMatchObject({ found: true, changed: true });
    expect((await db.outbox.find(without))?.status).toBe('pending');
    expect(akismet.requests).toEqual([]);
    expect(warnings).toEqual([]);
  });
});
