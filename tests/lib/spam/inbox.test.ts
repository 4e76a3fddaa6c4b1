import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { EXIT } from '../../../packages/site-forms/src/lib/cli.ts';
import { type InboxCommand, parseInboxArgs, runInboxCommand } from '../../../packages/site-forms/src/cli/inbox/commands.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createAkismetClient } from '../../../packages/site-forms/src/lib/spam/akismet.ts';
import type { SpamStore } from '../../../packages/site-forms/src/lib/spam/spam-store.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type FakeHttpServer, replyText, startFakeHttpServer } from '../../support/fake-http.ts';
import { AKISMET_TEST_KEY, replyAkismet } from '../../support/fake-spam-services.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const INPUT = { name: 'Spammy', email: 'spam@example.com', message: 'Buy now\nsecond line', honeypot: '' };

describe('reading the spam commands of npm run inbox', () => {
  test.each([
    [['list', '--status', 'spam'], { name: 'list', status: 'spam' }],
    [['list', '--status', 'pending'], { name: 'list', status: 'pending' }],
    [['release', '4'], { name: 'release', id: 4 }],
    [['spam', '5'], { name: 'spam', id: 5 }],
  ])('%j is %j', (args, command) => {
    expect(parseInboxArgs(args)).toEqual({ ok: true, command });
  });

  test.each([
    [['list', '--status'], '--status takes one of pending, sent, failed, spam.'],
    [['list', '--status', 'junk'], '--status takes one of pending, sent, failed, spam.'],
    [['list', '--status', 'spam', 'more'], 'Unexpected argument: more'],
    [['release'], 'release needs the id of a message, a whole number such as 12.'],
    [['spam', 'x'], 'spam needs the id of a message, a whole number such as 12.'],
  ])('%j is a usage error: %s', (args, problem) => {
    expect(parseInboxArgs(args)).toEqual({ ok: false, problem });
  });
});

describe('reviewing held messages', () => {
  let akismet: FakeHttpServer;
  let dir: string;
  let db: Store;
  let spam: SpamStore;
  const warnings: string[] = [];
  beforeAll(async () => {
    akismet = await startFakeHttpServer(replyAkismet());
  });
  afterAll(() => akismet.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-spam-inbox-'));
    db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    spam = db.spam;
    akismet.requests.length = 0;
    akismet.reply(replyAkismet());
    warnings.length = 0;
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(command: InboxCommand, withAkismet = false) {
    let out = '';
    let err = '';
    const code = await runInboxCommand(command, {
      outbox: db.outbox,
      out: (t) => {
        out += t;
      },
      err: (t) => (err += t),
      spam,
      akismet: withAkismet ? createAkismetClient({ apiKey: AKISMET_TEST_KEY, blog: 'https://www.example.com', baseUrl: akismet.url }) : undefined,
      logger: createLogger({ level: 'warn', write: (line) => warnings.push(line) }),
    });
    return { code, out, err };
  }

  test('list --status spam shows only the held messages', async () => {
    const held = await spam.hold(INPUT, { reasons: ['too-fast'] });
    await db.submissions.save({ ...INPUT, name: 'Person' });
    const { code, out } = await run({ name: 'list', status: 'spam' });
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('Spammy');
    expect(out).not.toContain('Person');
    expect(out.split('\n')[1]).toMatch(new RegExp(`^${held}\\s.*spam$`));
  });

  test('list --status spam with nothing held says so', async () => {
    await expect(run({ name: 'list', status: 'spam' })).resolves.toEqual({ code: EXIT.ok, out: '', err: 'No spam messages.\n' });
  });

  test('export carries the status and the reasons, a list in JSON and words separated by spaces in CSV', async () => {
    const id = await spam.hold(INPUT, { reasons: ['proof-missing', 'too-fast'] });
    const json = JSON.parse((await run({ name: 'export', format: 'json', bom: false })).out);
    expect(json).toEqual([expect.objectContaining({ id, status: 'spam', spamReasons: ['proof-missing', 'too-fast'] })]);
    expect((await run({ name: 'export', format: 'csv', bom: false })).out).toMatch(/,spam,0,,,,proof-missing too-fast\r\n$/);
  });

  test.each([
    ['proof-missing', "no proof that the page's script ran (JavaScript off, or a program posting directly)"],
    ['too-fast', 'sent less than 3 seconds after the form was opened'],
    ['marked-by-owner', 'marked as spam by the owner'],
    ['no-browser', 'sent without the headers every current browser sends (a program, or a very old browser)'],
  ])('show says %s in the owner’s words', async (reason, words) => {
    const id = await spam.hold(INPUT, { reasons: [reason] });
    const { out } = await run({ name: 'show', id });
    expect(out).toContain(`Spam:     ${words}\n`);
  });

  test('show gives the reasons in words', async () => {
    const id = await spam.hold(INPUT, { reasons: ['proof-missing', 'too-many-links', 'some-old-rule'] });
    const { out } = await run({ name: 'show', id });
    expect(out).toContain(`Status:   held as spam, not sent (npm run inbox -- release ${id} delivers it)\n`);
    expect(out).toContain(
      "Spam:     no proof that the page's script ran (JavaScript off, or a program posting directly); more links in the message than SPAM_MAX_LINKS allows; some-old-rule\n",
    );
  });

  test('show of a message never judged spam has no spam line', async () => {
    const id = await db.submissions.save(INPUT);
    expect((await run({ name: 'show', id })).out).not.toContain('Spam:');
  });

  test('release puts a held message in the queue once, and says so', async () => {
    const id = await spam.hold(INPUT, { reasons: ['too-fast'] });
    await expect(run({ name: 'release', id })).resolves.toEqual({
      code: EXIT.ok,
      out: `Message #${id} is not spam: it is delivered within a few seconds by the running server (if SMTP_URL is set).\n`,
      err: '',
    });
    expect((await db.outbox.find(id))?.status).toBe('pending');
    await expect(run({ name: 'release', id })).resolves.toEqual({
      code: EXIT.notFound,
      out: '',
      err: `Message #${id} is not held as spam (it is pending); nothing to release.\n`,
    });
    expect((await db.outbox.history(id)).map((e) => [e.outcome, e.error])).toEqual([['requeued', 'released from spam by the owner']]);
  });

  test('spam holds a pending message, which is then not sent; twice is fine', async () => {
    const id = await db.submissions.save(INPUT);
    await expect(run({ name: 'spam', id })).resolves.toEqual({ code: EXIT.ok, out: `Message #${id} is held as spam and will not be sent.\n`, err: '' });
    const later = new Date(Date.now() + 60_000);
    await expect(db.outbox.claim(later, later)).resolves.toBeUndefined();
    await expect(run({ name: 'spam', id })).resolves.toEqual({ code: EXIT.ok, out: '', err: `Message #${id} is already held as spam.\n` });
  });

  test('marking a sent message as spam, then releasing it, does not send it again', async () => {
    const id = await db.submissions.save(INPUT);
    await db.outbox.markSent(id, new Date());
    await expect(run({ name: 'spam', id })).resolves.toEqual({ code: EXIT.ok, out: `Message #${id} is held as spam.\n`, err: '' });
    await run({ name: 'release', id });
    expect((await db.outbox.find(id))?.status).toBe('sent');
  });

  test.each(['release', 'spam'] as const)('%s of a message that does not exist is exit 1', async (name) => {
    await expect(run({ name, id: 77 })).resolves.toEqual({ code: EXIT.notFound, out: '', err: 'No contact message #77. See npm run inbox -- list.\n' });
  });

  test('retry of a held message points at release', async () => {
    const id = await spam.hold(INPUT, { reasons: ['too-fast'] });
    await expect(run({ name: 'retry', id })).resolves.toEqual({
      code: EXIT.notFound,
      out: '',
      err: `Message #${id} is held as spam; npm run inbox -- release ${id} delivers it.\n`,
    });
  });

  test('with Akismet, a release is reported as ham and a marking as spam, with the visitor’s address', async () => {
    const held = await spam.hold(INPUT, { reasons: ['akismet-spam'], ip: '203.0.113.7', userAgent: 'Mozilla/5.0' });
    await run({ name: 'release', id: held }, true);
    await run({ name: 'spam', id: held }, true);
    expect(akismet.requests.map((r) => r.url)).toEqual(['/1.1/submit-ham', '/1.1/submit-spam']);
    expect(Object.fromEntries(new URLSearchParams(akismet.requests[0]!.body))).toMatchObject({
      user_ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0',
      comment_author: 'Spammy',
      comment_type: 'contact-form',
    });
  });

  test('a correction Akismet cannot take is logged, and the owner’s decision stands', async () => {
    akismet.reply(replyText(500, 'down', 'text/plain'));
    const held = await spam.hold(INPUT, { reasons: ['too-fast'], ip: '203.0.113.7' });
    await expect(run({ name: 'release', id: held }, true)).resolves.toMatchObject({ code: EXIT.ok });
    expect((await db.outbox.find(held))?.status).toBe('pending');
    expect(warnings.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ event: 'spam.akismet_correction_failed', id: held, kind: 'ham', detail: 'HTTP 500 without a verdict' }),
    ]);
  });

  test('a message without the visitor’s address is not reported', async () => {
    const held = await spam.hold(INPUT, { reasons: ['too-fast'] });
    await run({ name: 'release', id: held }, true);
    expect(akismet.requests).toEqual([]);
  });
});
