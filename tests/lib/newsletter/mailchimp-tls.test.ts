import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { makeCertificates, opensslAvailable } from '../../support/certificates.ts';

// Mailchimp is called over HTTPS with the certificate checked: a server whose certificate nobody
// vouches for gets a TLS handshake, and never the request that carries the key.
let server: Server | undefined;
let url = '';
let requests = 0;
beforeAll(async () => {
  if (!opensslAvailable) return;
  const { selfSigned } = makeCertificates();
  server = createServer({ key: selfSigned.key, cert: selfSigned.cert }, (_, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"abc"}');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

describe('Mailchimp over HTTPS', () => {
  test.skipIf(!opensslAvailable)('a certificate nobody vouches for is refused before the key is sent', async () => {
    const provider = createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${url}/3.0` });
    await expect(provider.subscribe('ada@example.com', { timeoutMs: 5_000 })).resolves.toEqual({
      ok: false,
      reason: 'unavailable',
      detail: 'no answer (network error DEPTH_ZERO_SELF_SIGNED_CERT)',
    });
    expect(requests).toBe(0);
  });
});
