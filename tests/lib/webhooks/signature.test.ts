import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { isWebhookSecret, signedHeaders } from '../../../packages/site-forms/src/lib/webhooks/signature.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PREVIOUS = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const BODY = '{"type":"contact.received","timestamp":"2026-11-24T12:00:00.000Z","data":{"id":1,"name":"Zoë"}}';

describe('the signature of a delivery, as a receiver checks it with the standardwebhooks package', () => {
  test('verifies, and the package hands back the body', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders('msg_2b7f', now, BODY, [SECRET]);
    expect(Object.keys(headers)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(SECRET).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  test('a known signature: the HMAC-SHA256 of "id.timestamp.body" with the secret’s bytes', () => {
    // Computed by the standardwebhooks package's own `sign` for the same input.
    const expected = new Webhook(SECRET).sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), '{"test": 2432232314}');
    expect(signedHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}', [SECRET])['webhook-signature']).toBe(expected);
  });

  test('during a rotation both signatures go, and a receiver with either secret accepts', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders('msg_rotate', now, BODY, [SECRET, PREVIOUS]);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(SECRET).verify(BODY, headers)).not.toThrow();
    expect(() => new Webhook(PREVIOUS).verify(BODY, headers)).not.toThrow();
  });

  test.each([
    ['a changed body', (h: Record<string, string>) => ({ headers: h, body: BODY.replace('Zoë', 'Eve') })],
    ['another id', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-id': 'msg_other' }, body: BODY })],
    [
      'a timestamp an hour old',
      (h: Record<string, string>) => ({ headers: { ...h, 'webhook-timestamp': String(Number(h['webhook-timestamp']) - 3600) }, body: BODY }),
    ],
  ])('a receiver refuses %s', (_, change) => {
    const { headers, body } = change(signedHeaders('msg_x', Math.floor(Date.now() / 1000), BODY, [SECRET]));
    expect(() => new Webhook(SECRET).verify(body, headers)).toThrow();
  });

  test.each([
    [SECRET, true],
    ['whsec_dG9vIHNob3J0', false],
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', false],
    ['whsec_not base64!', false],
    // The whole secret is `whsec_` and base64: nothing before it, nothing after it.
    [`x${SECRET}`, false],
    [`${SECRET}!!`, false],
    // Base64 decoding skips what is not base64: the 24 bytes behind the run must not make it one.
    [`whsec_${'%'.repeat(40)}${SECRET.slice('whsec_'.length)}`, false],
    // 24 to 64 bytes, both ends included.
    [`whsec_${Buffer.alloc(64, 7).toString('base64')}`, true],
    [`whsec_${Buffer.alloc(65, 7).toString('base64')}`, false],
  ])('%s is a webhook secret: %s', (secret, ok) => {
    expect(isWebhookSecret(secret)).toBe(ok);
  });
});
