import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMailchimpProvider } from '../../../src/lib/newsletter/mailchimp.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';

let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const provider = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list 42', baseUrl: `${mailchimp.url}/3.0` });

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

  test.each([
    ['a member that exists', 400, { title: 'Member Exists' }, { ok: true }],
    ['an invalid address', 400, { title: 'Invalid Resource' }, { ok: false, reason: 'invalid-address' }],
    ['an address in compliance state', 400, { title: 'Member In Compliance State' }, { ok: false, reason: 'not-resubscribable' }],
    ['a forgotten address', 400, { title: 'Forgotten Email Not Subscribed' }, { ok: false, reason: 'not-resubscribable' }],
    ['a bad key', 401, { title: 'API Key Invalid' }, { ok: false, reason: 'misconfigured' }],
    ['a wrong list', 404, { title: 'Resource Not Found' }, { ok: false, reason: 'misconfigured' }],
    ['too many requests', 429, { title: 'Too Many Requests' }, { ok: false, reason: 'unavailable' }],
    ['a server error', 500, { title: 'Internal Server Error' }, { ok: false, reason: 'unavailable' }],
  ])('maps %s (%i) to its outcome', async (_, status, body, outcome) => {
    mailchimp.reply(replyJson(status, { status, ...body }));
    await expect(provider().subscribe('ada@example.com')).resolves.toEqual(expect.objectContaining(outcome));
  });
});
