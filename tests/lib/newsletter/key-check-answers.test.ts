import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NewsletterConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { checkProviderKeys, classifyKeyCheck } from '../../../packages/site-forms/src/lib/newsletter/key-check.ts';
import { type FakeHttpServer, replyAfter, replyJson, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

// The start's read-only check, answer by answer to the exact verdict and detail the start prints.
let provider: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
});
afterAll(() => provider.close());

const NAMES = { key: 'THE_KEY', target: 'THE_TARGET', baseUrl: 'THE_BASE_URL' };
const kit = (version: 'v3' | 'v4', apiKey = 'k'): NewsletterConfig => ({
  provider: 'kit',
  kit: { apiKey, formId: '1234567', baseUrl: `${provider.url}/${version}`, version },
});

describe('what each status and body means', () => {
  test.each([
    [401, {}, { result: 'refused', variable: 'THE_KEY', detail: 'HTTP 401: the key was refused' }],
    [403, {}, { result: 'refused', variable: 'THE_KEY', detail: 'HTTP 403: the key was refused' }],
    [404, {}, { result: 'refused', variable: 'THE_TARGET', detail: 'HTTP 404: not found' }],
    [300, {}, { result: 'refused', variable: 'THE_BASE_URL', detail: 'HTTP 300 redirect, not followed' }],
    [399, undefined, { result: 'refused', variable: 'THE_BASE_URL', detail: 'HTTP 399 redirect, not followed' }],
    [199, {}, { result: 'unreachable', detail: 'HTTP 199' }],
    [400, {}, { result: 'unreachable', detail: 'HTTP 400' }],
    [503, undefined, { result: 'unreachable', detail: 'HTTP 503 that is not JSON' }],
    [200, undefined, { result: 'unreachable', detail: 'HTTP 200 that is not JSON' }],
    [299, {}, { result: 'ok', detail: 'HTTP 299' }],
  ])('HTTP %i with %j', (status, body, verdict) => {
    expect(classifyKeyCheck(status, body, NAMES)).toEqual(verdict);
  });

  test('a body the check does not find its item in names the target; one it finds is fine', () => {
    expect(classifyKeyCheck(200, { forms: [] }, NAMES, () => false)).toEqual({
      result: 'refused',
      variable: 'THE_TARGET',
      detail: 'the key works, but the form is not among its forms',
    });
    expect(classifyKeyCheck(200, { forms: [] }, NAMES, () => true)).toEqual({ result: 'ok', detail: 'HTTP 200' });
  });
});

describe('the calls at start, against a real HTTP server', () => {
  test('the local list needs none, and says why', async () => {
    await expect(checkProviderKeys({ provider: 'local' })).resolves.toEqual({ result: 'not needed', detail: 'subscribers are kept in the database' });
  });

  test("Kit v3's key is escaped in the query, and every call asks for JSON", async () => {
    provider.reply(replyJson(200, { forms: [{ id: '1234567' }] }));
    provider.requests.length = 0;
    await expect(checkProviderKeys(kit('v3', 'a b&c=d'))).resolves.toEqual({ result: 'ok', detail: 'HTTP 200' });
    expect(provider.requests.map((r) => r.url)).toEqual(['/v3/forms?api_key=a%20b%26c%3Dd']);
    expect(provider.requests[0]!.headers.accept).toBe('application/json');
  });

  test.each([
    ['forms that are not a list', { forms: { id: 1234567 } }],
    ['no forms at all', {}],
    ['forms without ids', { forms: [null, {}, { id: 123456 }] }],
  ])('Kit answering %s: the form is not there', async (_, body) => {
    provider.reply(replyJson(200, body));
    await expect(checkProviderKeys(kit('v4'))).resolves.toEqual({
      result: 'refused',
      variable: 'KIT_FORM_ID',
      detail: 'the key works, but the form is not among its forms',
    });
  });

  test.each<[string, () => NewsletterConfig, string]>([
    ['Kit', () => kit('v4'), 'KIT_API_BASE_URL'],
    ['Resend', () => ({ provider: 'resend', resend: { apiKey: 'k', target: { kind: 'segment', id: 's' }, baseUrl: provider.url } }), 'RESEND_BASE_URL'],
  ])('%s redirected names its base URL variable', async (_, config, variable) => {
    provider.reply((_, res) => void res.writeHead(308, { location: 'http://127.0.0.1:9/' }).end());
    await expect(checkProviderKeys(config())).resolves.toEqual({ result: 'refused', variable, detail: 'HTTP 308 redirect, not followed' });
  });

  test('Kit answering JSON null: the form is not there', async () => {
    provider.reply(replyText(200, 'null', 'application/json'));
    await expect(checkProviderKeys(kit('v3'))).resolves.toMatchObject({ result: 'refused', variable: 'KIT_FORM_ID' });
  });

  test('without a time given, an answer after a moment is still waited for', async () => {
    provider.reply(replyAfter(150, replyJson(200, { forms: [{ id: 1234567 }] })));
    await expect(checkProviderKeys(kit('v4'))).resolves.toEqual({ result: 'ok', detail: 'HTTP 200' });
  });
});
