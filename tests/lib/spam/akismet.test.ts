import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { type AkismetComment, akismetFields, createAkismetClient } from '../../../packages/site-forms/src/lib/spam/akismet.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';
import { AKISMET_TEST_KEY, replyAkismet } from '../../support/fake-spam-services.ts';

let akismet: FakeHttpServer;
beforeAll(async () => {
  akismet = await startFakeHttpServer(replyAkismet());
});
afterAll(() => akismet.close());

const BLOG = 'https://www.example.com';
const client = (apiKey = AKISMET_TEST_KEY, timeoutMs = 2_000) => createAkismetClient({ apiKey, blog: BLOG, baseUrl: akismet.url, timeoutMs });
const comment = (name = 'Ada Lovelace'): AkismetComment => ({
  name,
  email: 'ada@example.com',
  message: 'Hello there, a question.',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0',
  referrer: 'https://www.example.com/contact/',
});

describe('Akismet', () => {
  test('a client given no address asks Akismet’s', async () => {
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (url) => {
        asked.push(String(url));
        return new Response('false');
      }),
    );
    try {
      await expect(createAkismetClient({ apiKey: AKISMET_TEST_KEY, blog: BLOG }).check(comment())).resolves.toEqual({ ok: true, spam: false });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(asked).toEqual(['https://rest.akismet.com/1.1/comment-check']);
  });

  test('comment-check posts the message as a contact form', async () => {
    akismet.reply(replyAkismet());
    akismet.requests.length = 0;
    await client().check(comment());
    const [request] = akismet.requests;
    expect(request!.url).toBe('/1.1/comment-check');
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({
      api_key: AKISMET_TEST_KEY,
      blog: BLOG,
      user_ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0',
      referrer: 'https://www.example.com/contact/',
      comment_type: 'contact-form',
      comment_author: 'Ada Lovelace',
      comment_author_email: 'ada@example.com',
      comment_content: 'Hello there, a question.',
      blog_charset: 'UTF-8',
    });
  });

  test('without a browser or a referrer those fields are left out', () => {
    expect(Object.keys(akismetFields('k', BLOG, { ...comment(), userAgent: undefined, referrer: undefined }))).toEqual([
      'api_key',
      'blog',
      'user_ip',
      'comment_type',
      'comment_author',
      'comment_author_email',
      'comment_content',
      'blog_charset',
    ]);
  });

  test.each([
    ['Akismet’s guaranteed-spam author', 'akismet-guaranteed-spam', { ok: true, spam: true }],
    ['a person', 'Ada Lovelace', { ok: true, spam: false }],
  ])('comment-check for %s', async (_, name, expected) => {
    akismet.reply(replyAkismet());
    await expect(client().check(comment(name))).resolves.toEqual(expected);
  });

  test('a wrong key is no signal, naming the variable to check', async () => {
    akismet.reply(replyAkismet());
    await expect(client('wrong-key').check(comment())).resolves.toEqual({ ok: false, detail: 'refused the key (invalid)', check: 'AKISMET_API_KEY' });
    await expect(client('wrong-key').submitHam(comment())).resolves.toEqual({ ok: false, detail: 'refused the key (invalid)', check: 'AKISMET_API_KEY' });
  });

  test.each<[string, FakeReply, string]>([
    ['a server error', replyText(503, 'Service Unavailable', 'text/plain'), 'HTTP 503 without a verdict'],
    ['an unexpected word', replyText(200, 'maybe', 'text/plain'), 'HTTP 200 without a verdict'],
    ['a reset connection', replyReset(), 'no answer (connection failed)'],
    ['no answer', replyHang(), 'no answer within 300 ms'],
  ])('%s is no signal', async (_, reply, detail) => {
    akismet.reply(reply);
    // 300 ms only where the wait is what is tested: an answer on a busy machine may take longer.
    const timeoutMs = detail.startsWith('no answer within') ? 300 : 2_000;
    await expect(client(AKISMET_TEST_KEY, timeoutMs).check(comment())).resolves.toEqual({ ok: false, detail });
  });

  test.each([
    ['submitSpam', '/1.1/submit-spam'],
    ['submitHam', '/1.1/submit-ham'],
  ] as const)('%s tells Akismet about a correction', async (method, path) => {
    akismet.reply(replyAkismet());
    akismet.requests.length = 0;
    await expect(client()[method](comment())).resolves.toEqual({ ok: true });
    expect(akismet.requests.map((r) => r.url)).toEqual([path]);
    expect(new URLSearchParams(akismet.requests[0]!.body).get('comment_type')).toBe('contact-form');
  });

  test('a correction Akismet did not thank for is reported', async () => {
    akismet.reply(replyText(500, 'oops', 'text/plain'));
    await expect(client().submitSpam(comment())).resolves.toEqual({ ok: false, detail: 'HTTP 500 without a verdict' });
    akismet.reply(replyHang());
    await expect(client(AKISMET_TEST_KEY, 300).submitSpam(comment())).resolves.toEqual({ ok: false, detail: 'no answer within 300 ms' });
  });
});
