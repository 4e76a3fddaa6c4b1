import { afterEach, describe, expect, test, vi } from 'vitest';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import { privateEndpoints } from '../../../packages/site-forms/src/lib/webhooks/private-endpoints.ts';

/** An endpoint of the standard kind at `url`; the check reads only its name, kind and address. */
const at = (name: string, url: string): Endpoint => ({
  name,
  kind: 'standard',
  url,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  events: ['contact.received'],
});

/** The automatic reply goes by mail: it has no address to check (and an empty one is no URL). */
const AUTO_REPLY: Endpoint = { name: 'auto-reply', kind: 'auto-reply', url: '', events: ['contact.received'] };

afterEach(() => {
  vi.useRealTimers();
});

describe('the check at start for webhooks on a private address', () => {
  test('names each endpoint whose host is or resolves to a private address, with the host its URL names', async () => {
    await expect(
      privateEndpoints([
        at('webhook', 'http://localhost:8080/hook'),
        at('slack', 'https://93.184.216.34/services/T000/B000'),
        AUTO_REPLY,
        at('discord', 'http://10.0.0.5/api/webhooks/1/abc'),
        at('ntfy', 'http://[::1]:2586/forms'),
      ]),
    ).resolves.toEqual([
      { name: 'webhook', host: 'localhost' },
      { name: 'discord', host: '10.0.0.5' },
      { name: 'ntfy', host: '::1' },
    ]);
  });

  test('a name that does not resolve now is not named: the deliveries retry it', async () => {
    await expect(privateEndpoints([at('webhook', 'https://nothing.invalid/hook'), at('ntfy', 'https://[2606:4700:4700::1111]/forms')])).resolves.toEqual([]);
  });

  test('a list with only the automatic reply, or none, names nothing', async () => {
    await expect(privateEndpoints([AUTO_REPLY])).resolves.toEqual([]);
    await expect(privateEndpoints([])).resolves.toEqual([]);
  });

  test('a name the resolver has not answered within 2 s is not named, and holds up the start no longer; an address needs no resolver', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const checked = privateEndpoints([at('webhook', 'http://localhost:8080/hook'), at('discord', 'http://10.0.0.5/api/webhooks/1/abc')]);
    // Two seconds pass before the resolver's answer can come back (it needs a turn of the event loop).
    vi.advanceTimersByTime(2_000);
    await expect(checked).resolves.toEqual([{ name: 'discord', host: '10.0.0.5' }]);
  });

  test('a check that has ended leaves no timer behind to keep the process alive', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await expect(privateEndpoints([at('webhook', 'http://localhost:8080/hook'), at('ntfy', 'https://nothing.invalid/forms')])).resolves.toEqual([
      { name: 'webhook', host: 'localhost' },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
