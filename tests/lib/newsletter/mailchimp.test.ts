import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

/** Turns the event loop until `condition` holds, without moving a fake clock. */
async function turnsUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn > 100_000) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const provider = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list 42', baseUrl: `${mailchimp.url}/3.0` });
/** One attempt, as `resilient.ts` makes it: with a signal and the time left. */
const attempt = (timeoutMs = 2_000) => provider().subscribe('ada@example.com', { signal: AbortSignal.timeout(timeoutMs), timeoutMs });

const problem = (status: number, title: string, more: Record<string, unknown> = {}) =>
  replyJson(
    status,
    { type: 'https://mailchimp.com/developer/marketing/docs/errors/', title, status, detail: '…', ...more },
    { 'content-type': 'application/problem+json' },
  );

describe('Mailchimp wire format (SPEC.md 2.4 row 1)', () => {
  test('posts the address to the list-members resource with an apikey header and a JSON body', async () => {
    mailchimp.reply(replyJson(200, { id: 'abc', status: 'subscribed' }));
    mailchimp.requests.length = 0;
    await expect(provider().subscribe('ada@example.com')).resolves.toEqual({ ok: true });

    expect(mailchimp.requests).toHaveLength(1);
    const [request] = mailchimp.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/3.0/lists/list%2042/members');
    expect(request!.headers.authorization).toBe('apikey key123-us21');
    expect(request!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(request!.body)).toEqual({ email_address: 'ada@example.com', status: 'subscribed' });
  });
});

describe('Mailchimp with NEWSLETTER_DOUBLE_OPT_IN', () => {
  test('creates the member as pending: Mailchimp sends its own confirmation email', async () => {
    mailchimp.reply(replyJson(200, { id: 'abc', status: 'pending' }));
    mailchimp.requests.length = 0;
    const doubleOptIn = createMailchimpProvider({ apiKey: 'key123-us21', listId: 'l', baseUrl: `${mailchimp.url}/3.0` }, { doubleOptIn: true });
    await expect(doubleOptIn.subscribe('ada@example.com')).resolves.toEqual({ ok: true });
    expect(JSON.parse(mailchimp.requests[0]!.body)).toEqual({ email_address: 'ada@example.com', status: 'pending' });
  });
});

describe('Mailchimp connections', () => {
  test('calls one after another share one kept-alive connection rather than opening one each', async () => {
    const ports = new Set<number | undefined>();
    const connection = new Set<string | undefined>();
    mailchimp.reply((request, res, req) => {
      ports.add(req.socket.remotePort);
      connection.add(request.headers.connection);
      return replyJson(200, { id: 'abc', status: 'subscribed' })(request, res, req);
    });
    const client = provider();
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) await expect(client.subscribe(email)).resolves.toEqual({ ok: true });
    expect(connection).toEqual(new Set(['keep-alive']));
    expect(ports.size).toBe(1);
  });
});

describe('Mailchimp outcomes of one attempt', () => {
  test.each<[string, FakeReply, Record<string, unknown>]>([
    ['a new member', replyJson(200, { id: 'abc', status: 'subscribed' }), { ok: true }],
    ['a member that exists', problem(400, 'Member Exists'), { ok: true }],
    [
      'an invalid address',
      problem(400, 'Invalid Resource', { errors: [{ field: 'email_address', message: 'This value should be a valid email.' }] }),
      { reason: 'invalid-address' },
    ],
    [
      'a fake address',
      problem(400, 'Invalid Resource', { detail: 'ada@example.com looks fake or invalid, please enter a real email address.' }),
      { reason: 'invalid-address' },
    ],
    [
      'an audience that requires a name',
      problem(400, 'Invalid Resource', { detail: 'Your merge fields were invalid.', errors: [{ field: 'FNAME', message: 'Please enter a value' }] }),
      { reason: 'misconfigured', check: expect.stringContaining('merge fields') },
    ],
    ['an address in compliance state', problem(400, 'Member In Compliance State'), { reason: 'not-resubscribable' }],
    ['a forgotten address', problem(400, 'Forgotten Email Not Subscribed'), { reason: 'forgotten' }],
    ['a bad key', problem(401, 'API Key Invalid'), { reason: 'misconfigured', check: 'MAILCHIMP_API_KEY' }],
    ['a forbidden key', problem(403, 'Forbidden'), { reason: 'misconfigured', check: 'MAILCHIMP_API_KEY' }],
    ['a wrong list', problem(404, 'Resource Not Found'), { reason: 'misconfigured', check: 'MAILCHIMP_LIST_ID' }],
    ['another 400', problem(400, 'Bad Request'), { reason: 'misconfigured', check: 'MAILCHIMP_API_KEY and MAILCHIMP_LIST_ID' }],
    ['too many requests', problem(429, 'Too Many Requests'), { reason: 'unavailable' }],
    ['a server error', problem(500, 'Internal Server Error'), { reason: 'unavailable' }],
    ['a bad gateway', problem(502, 'Bad Gateway'), { reason: 'unavailable' }],
    ['a maintenance window', problem(503, 'Service Unavailable'), { reason: 'unavailable' }],
    ['an HTML error page', replyText(502, '<html><body>Bad gateway</body></html>'), { reason: 'unavailable' }],
    ['an HTML page with 200', replyText(200, '<html><body>Sign in to the Wi-Fi</body></html>'), { reason: 'unavailable' }],
    ['an HTML page with 400', replyText(400, '<html><body>Bad request</body></html>'), { reason: 'unavailable' }],
    ['JSON that does not parse', replyText(200, '{"id": "abc', 'application/json'), { reason: 'unavailable' }],
    ['a reset connection', replyReset(), { reason: 'unavailable' }],
  ])('maps %s to its outcome', async (_, reply, outcome) => {
    mailchimp.reply(reply);
    await expect(attempt()).resolves.toEqual(expect.objectContaining(outcome));
  });

  test('gives up on a server that never answers when the time given runs out: waiting at 299 ms, unavailable at 300 ms', async () => {
    mailchimp.reply(replyHang());
    const before = mailchimp.requests.length;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      let outcome: unknown;
      void provider()
        .subscribe('ada@example.com', { timeoutMs: 300 })
        .then((answer) => {
          outcome = answer;
        });
      await turnsUntil(() => mailchimp.requests.length > before);
      await vi.advanceTimersByTimeAsync(299);
      expect(outcome).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await turnsUntil(() => outcome !== undefined);
      expect(outcome).toEqual(expect.objectContaining({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/timeout/) }));
    } finally {
      vi.useRealTimers();
    }
  });

  test('never puts the key in the detail that is logged', async () => {
    mailchimp.reply(problem(401, 'API Key Invalid', { detail: 'Your API key key123-us21 may be invalid' }));
    const outcome = await attempt();
    expect(JSON.stringify(outcome)).not.toContain('key123');
  });
});
