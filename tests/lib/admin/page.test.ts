import { describe, expect, test } from 'vitest';
import {
  countSentence,
  findMessage,
  mailtoHref,
  noticeFor,
  openAdminPage,
  pageCount,
  pageLink,
  readMessageQuery,
  readPage,
  signInMessage,
} from '../../../packages/site-forms/src/lib/admin/admin-page.ts';
import { createSessions, type SessionRecord } from '../../../packages/site-forms/src/lib/admin/session.ts';

const params = (query: string) => new URLSearchParams(query);

describe("the inbox's address", () => {
  test.each([
    ['', { status: undefined, search: undefined, page: 1 }],
    ['status=failed', { status: 'failed', search: undefined, page: 1 }],
    ['status=spam&q=+Ada+&page=3', { status: 'spam', search: 'Ada', page: 3 }],
    ['status=deleted', { status: undefined, search: undefined, page: 1 }],
    ['status=FAILED', { status: undefined, search: undefined, page: 1 }],
    ['q=%20%20', { status: undefined, search: undefined, page: 1 }],
    [`q=${'x'.repeat(300)}`, { status: undefined, search: 'x'.repeat(200), page: 1 }],
  ])('?%s reads as %j', (query, expected) => {
    expect(readMessageQuery(params(query))).toEqual({ form: undefined, ...expected });
  });

  test.each([
    ['status=pending', { status: 'pending', form: undefined }],
    ['status=sent&form=contact', { status: 'sent', form: 'contact' }],
    ['form=no-such-form', { status: undefined, form: undefined }],
    ['form=', { status: undefined, form: undefined }],
    ['form=Contact', { status: undefined, form: undefined }],
  ])('?%s filters by %j', (query, expected) => {
    expect(readMessageQuery(params(query))).toEqual({ search: undefined, page: 1, ...expected });
  });

  test.each([
    ['page=1', 1],
    ['page=2', 2],
    ['page=999999', 999_999],
    ['page=1000000', 1],
    ['page=0', 1],
    ['page=-2', 1],
    ['page=02', 1],
    ['page=1.5', 1],
    ['page=abc', 1],
    ['', 1],
  ])('%s is page %i', (query, page) => {
    expect(readPage(params(query))).toBe(page);
  });

  test.each([
    [0, 1],
    [1, 1],
    [50, 1],
    [51, 2],
    [100, 2],
    [101, 3],
  ])('%i rows make %i pages of 50', (total, pages) => {
    expect(pageCount(total, 50)).toBe(pages);
  });

  test.each([
    ['status=failed&q=ada&page=2&done=deleted', 3, '/admin/messages?status=failed&q=ada&page=3'],
    ['status=failed&page=2', 1, '/admin/messages?status=failed'],
    ['page=2', 1, '/admin/messages'],
    ['', 2, '/admin/messages?page=2'],
  ])('from ?%s, page %i is %s (without the notice)', (query, page, link) => {
    expect(pageLink('/admin/messages', params(query), page)).toBe(link);
  });
});

describe('what the pages say after an action', () => {
  test.each([
    ['retry', 'The message is queued again; it will be sent within a few seconds.'],
    ['mark-spam', 'The message is held as spam; it will not be sent.'],
    ['release', 'The message is released; it will be sent once.'],
    ['unchanged', 'Nothing changed: the message was already in that state.'],
    ['deleted', 'Deleted.'],
    ['mark-spam-sent', 'The message is held as spam. It had already been sent before you marked it.'],
    ['mark-spam-deferred', 'The message was being sent at that moment: it is held as spam once that send ends, and never sent again.'],
    ['release-sent', 'The message is no longer marked as spam. It had already been sent, so it is not sent again.'],
    ['delete-message-deferred', 'The message was being sent at that moment: it is deleted, with its history, as soon as that send ends.'],
    ['replayed', 'The delivery is sent again from the start of its schedule, within a few seconds.'],
    ['unchanged-delivery', 'Nothing changed: that delivery is being sent right now, or is gone.'],
    ['delivery-due', 'The delivery was waiting for its next try: it is sent now, within a few seconds.'],
    ['signup-retried', 'The signup is tried again within a minute.'],
    ['unchanged-signup', 'Nothing changed: that signup is still waiting for the provider.'],
    [
      'deleted-count-kept',
      'Deleted, except the address’s count in the limits: Redis could not be reached. Once it is back, run npm run subscribers -- erase with the address (the count ends within 24 hours anyway).',
    ],
    ['something else', undefined],
    [null, undefined],
  ])('done=%s: %j', (done, notice) => {
    expect(noticeFor(done)).toBe(notice);
  });

  // NOTICES is a plain object: these once answered the function Object.prototype lends it.
  test.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])('done=%s, a name every object has, shows no notice', (done) => {
    expect(noticeFor(done)).toBeUndefined();
  });

  test.each([
    ['failed=1', { error: 'Wrong password.' }],
    ['failed=2', {}],
    ['failed=email', { error: 'Wrong email or password.' }],
    // ADMIN_REQUIRE_PASSKEY, a right password of a person who has a passkey (decision 0291).
    ['failed=passkey', { error: 'Sign in with your passkey: this site does not take a password from whoever has one.' }],
    ['ended=signed-out', { notice: 'You have signed out.' }],
    ['ended=expired', { notice: 'Your session has ended. Sign in again.' }],
    ['ended=none', {}],
    ['', {}],
  ])('the sign-in page at ?%s says %j', (query, message) => {
    expect(signInMessage(params(query))).toEqual(message);
  });
});

describe('who looks at an admin page', () => {
  const records = new Map<string, SessionRecord>();
  const sessions = createSessions({
    create: async (s) => {
      records.set(s.tokenHash, s);
    },
    find: async (h) => {
      const record = records.get(h);
      return record && { ...record, person: { id: record.userId, name: 'Owner', email: null, role: 'owner', forms: null }, legacy: false };
    },
    touch: async () => {},
    delete: async (h) => records.delete(h),
    deleteExpired: async () => 0,
  });
  const look = async (cookie: string | undefined, publicOrigin: string | undefined, on: boolean | 'off' = true) => {
    const admin = on === 'off' ? { sessions, isOn: async () => false } : on ? { sessions, isOn: async () => true } : undefined;
    const response = { headers: new Headers() };
    const access = await openAdminPage(new Request('http://site.test/admin', cookie ? { headers: { cookie } } : {}), response, admin, publicOrigin);
    return { kind: access.kind, headers: Object.fromEntries(response.headers) };
  };
  const HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' };

  test('nobody when the admin is off: the page is absent, never cached', async () => {
    await expect(look(undefined, 'http://site.test', false)).resolves.toEqual({ kind: 'absent', headers: HEADERS });
  });

  test('nobody while the admin is off (no ADMIN_PASSWORD_HASH, nobody added), even with a live session', async () => {
    const { token } = await sessions.start({ userId: 1, stage: 'full', method: 'password' });
    await expect(look(`admin_session=${token}`, 'http://site.test', 'off')).resolves.toEqual({ kind: 'absent', headers: HEADERS });
  });

  test('the owner with a live session, by the cookie the origin calls for', async () => {
    const { token } = await sessions.start({ userId: 1, stage: 'full', method: 'password' });
    await expect(look(`admin_session=${token}`, 'http://site.test')).resolves.toEqual({ kind: 'signed-in', headers: HEADERS });
    await expect(look(`__Host-admin_session=${token}`, 'https://site.test')).resolves.toEqual({ kind: 'signed-in', headers: HEADERS });
    await expect(look(`admin_session=${token}`, 'https://site.test')).resolves.toEqual({ kind: 'signed-out', headers: HEADERS });
    await expect(look(`admin_session=${token}`, undefined)).resolves.toEqual({ kind: 'signed-in', headers: HEADERS });
  });

  test('a visitor without a session', async () => {
    await expect(look(undefined, 'http://site.test')).resolves.toEqual({ kind: 'signed-out', headers: HEADERS });
  });
});

describe("the message a page's address names", () => {
  const admin = { message: async (id: number) => (id === 7 ? { submission: { id: 7 }, history: [], spamReasons: [] } : undefined) } as never;

  test.each([
    ['7', 7],
    ['8', undefined],
    [undefined, undefined],
    ['07', undefined],
    ['0', undefined],
    ['-7', undefined],
    ['7.0', undefined],
    [' 7', undefined],
    ['7abc', undefined],
    ['1'.repeat(17), undefined],
  ])('[id] = %j finds message %j', async (param, expected) => {
    const found = await findMessage(admin, param);
    expect(found?.submission.id).toBe(expected);
  });
});

describe('the mailto link to a visitor', () => {
  test.each([
    ['a plain address', 'ada@example.com', 'mailto:ada@example.com'],
    ['an apostrophe and a plus (encoded, which mail clients decode)', "o'brien+tag@example.com", "mailto:o'brien%2Btag@example.com"],
    [
      'an address stored before ? % & were refused: no query reaches the reply',
      'owner?bcc=spy%40evil.test&subject=Invoice%20paid@example.com',
      'mailto:owner%3Fbcc%3Dspy%2540evil.test%26subject%3DInvoice%2520paid@example.com',
    ],
    ['no @ at all: all of it encoded', 'owner?bcc=spy', 'mailto:owner%3Fbcc%3Dspy'],
    ['two @: the domain is after the last one', 'a@b@example.com', 'mailto:a%40b@example.com'],
    ['a domain that would add a query', 'ada@example.com?cc=spy@evil.test', 'mailto:ada%40example.com%3Fcc%3Dspy@evil.test'],
  ])('%s', (_, address, href) => {
    expect(mailtoHref(address)).toBe(href);
  });
});

describe('the sentence above the inbox', () => {
  test.each<[number, boolean, number, number, string]>([
    [0, false, 1, 1, 'No messages yet.'],
    [0, true, 1, 1, 'No message matches.'],
    [1, true, 1, 1, '1 message matches; page 1 of 1.'],
    [2, true, 1, 1, '2 messages match; page 1 of 1.'],
    [1, false, 1, 1, '1 message; page 1 of 1.'],
    [120, false, 2, 3, '120 messages; page 2 of 3.'],
  ])('%i messages, filtered %s, page %i of %i: %s', (total, filtered, page, pages, sentence) => {
    expect(countSentence(total, filtered, page, pages)).toBe(sentence);
  });
});
