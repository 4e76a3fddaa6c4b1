import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkProviderKeys } from '../../../packages/site-forms/src/lib/newsletter/key-check.ts';
import type { NewsletterConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

let provider: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
});
afterAll(() => provider.close());

const KEY = 'secret-key-us21';
const mailchimp = (): NewsletterConfig => ({ provider: 'mailchimp', mailchimp: { apiKey: KEY, listId: 'list 1', baseUrl: `${provider.url}/3.0` } });
const kit = (version: 'v3' | 'v4'): NewsletterConfig => ({
  provider: 'kit',
  kit: { apiKey: KEY, formId: '1234567', baseUrl: `${provider.url}/${version}`, version },
});
const resend = (kind: 'segment' | 'audience'): NewsletterConfig => ({
  provider: 'resend',
  resend: { apiKey: KEY, target: { kind, id: 'seg/1' }, baseUrl: provider.url },
});
const forms = replyJson(200, { forms: [{ id: 99 }, { id: 1234567 }] });

describe('the read-only call each provider gets at start', () => {
  test.each<[string, () => NewsletterConfig, string, Record<string, string | undefined>]>([
    ['Mailchimp: the list, with the key as apikey', mailchimp, '/3.0/lists/list%201?fields=id', { authorization: `apikey ${KEY}` }],
    ['Kit v3: the forms, with the key in the query', () => kit('v3'), `/v3/forms?api_key=${KEY}`, { accept: 'application/json' }],
    ['Kit v4: the forms, with the key in X-Kit-Api-Key', () => kit('v4'), '/v4/forms?per_page=1000', { 'x-kit-api-key': KEY }],
    ['Resend: the segment', () => resend('segment'), '/segments/seg%2F1', { authorization: `Bearer ${KEY}` }],
    ['Resend: the audience', () => resend('audience'), '/audiences/seg%2F1', { authorization: `Bearer ${KEY}` }],
  ])('%s', async (_, config, url, headers) => {
    provider.reply(forms);
    provider.requests.length = 0;
    await expect(checkProviderKeys(config())).resolves.toEqual({ result: 'ok', detail: 'HTTP 200' });
    expect(provider.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${url}`]);
    expect(provider.requests[0]!.headers).toMatchObject(headers);
  });

  test('the local list is not checked and asks nobody', async () => {
    provider.requests.length = 0;
    await expect(checkProviderKeys({ provider: 'local' })).resolves.toMatchObject({ result: 'not needed' });
    expect(provider.requests).toEqual([]);
  });
});

describe('what each answer means for the start', () => {
  test.each<[string, () => NewsletterConfig, FakeReply, Record<string, unknown>]>([
    ['Mailchimp refuses the key', mailchimp, replyJson(401, { title: 'API Key Invalid' }), { result: 'refused', variable: 'MAILCHIMP_API_KEY' }],
    ['Mailchimp has no such list', mailchimp, replyJson(404, { title: 'Resource Not Found' }), { result: 'refused', variable: 'MAILCHIMP_LIST_ID' }],
    ['Kit v3 refuses the key', () => kit('v3'), replyJson(401, { error: 'Authorization Failed' }), { result: 'refused', variable: 'KIT_API_KEY' }],
    ['a v3 key on Kit v4', () => kit('v4'), replyJson(401, { errors: ['The access token is invalid'] }), { result: 'refused', variable: 'KIT_API_KEY' }],
    [
      'Kit knows the key but not the form',
      () => kit('v4'),
      replyJson(200, { forms: [{ id: 99 }] }),
      { result: 'refused', variable: 'KIT_FORM_ID', detail: 'the key works, but the form is not among its forms' },
    ],
    [
      'Resend refuses a sending-only key',
      () => resend('segment'),
      replyJson(401, { name: 'restricted_api_key' }),
      { result: 'refused', variable: 'RESEND_API_KEY' },
    ],
    ['Resend has no such segment', () => resend('segment'), replyJson(404, { name: 'not_found' }), { result: 'refused', variable: 'RESEND_SEGMENT_ID' }],
    ['Resend has no such audience', () => resend('audience'), replyJson(404, { name: 'not_found' }), { result: 'refused', variable: 'RESEND_AUDIENCE_ID' }],
    [
      'a redirect',
      mailchimp,
      (_, res) => void res.writeHead(301, { location: 'http://127.0.0.1:9/' }).end(),
      { result: 'refused', variable: 'MAILCHIMP_API_BASE_URL' },
    ],
    ['a provider that is down', mailchimp, replyJson(503, { title: 'Service Unavailable' }), { result: 'unreachable', detail: 'HTTP 503' }],
    ['a captive portal', () => resend('segment'), replyText(200, '<html>Wi-Fi</html>'), { result: 'unreachable', detail: 'HTTP 200 that is not JSON' }],
  ])('%s', async (_, config, reply, outcome) => {
    provider.reply(reply);
    await expect(checkProviderKeys(config())).resolves.toEqual(expect.objectContaining(outcome));
  });

  test('a provider that never answers is unreachable after the time given, not a refusal', async () => {
    provider.reply(replyHang());
    await expect(checkProviderKeys(mailchimp(), 200)).resolves.toEqual({ result: 'unreachable', detail: 'no answer (timeout)' });
  });

  test('a provider nobody listens at is unreachable', async () => {
    const config: NewsletterConfig = { provider: 'mailchimp', mailchimp: { apiKey: KEY, listId: 'l', baseUrl: 'http://127.0.0.1:9/3.0' } };
    await expect(checkProviderKeys(config)).resolves.toEqual({ result: 'unreachable', detail: expect.stringMatching(/^no answer \(network error/) });
  });
});
