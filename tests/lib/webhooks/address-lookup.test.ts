import type { LookupAddress } from 'node:dns';
import { describe, expect, test, vi } from 'vitest';

// The resolver's answer for `rebind.test`. This machine's resolver (/etc/hosts, no DNS) has no
// name with both a public and a private address, the answer a rebinding attacker gives, so only
// node:dns's `lookup` is replaced: every other name still goes to the real resolver.
const answer = vi.hoisted(() => ({ list: [] as LookupAddress[] }));
vi.mock('node:dns', async (original) => {
  const dns = await original<typeof import('node:dns')>();
  const lookup = (hostname: string, options: object, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
    hostname === 'rebind.test' ? callback(null, answer.list) : dns.lookup(hostname, options as { all: true }, callback);
  return { ...dns, default: { ...dns, lookup }, lookup };
});

const { PrivateAddressError, publicOnlyLookup } = await import('../../../packages/site-forms/src/lib/webhooks/address.ts');

/** What `publicOnlyLookup` called back with for `rebind.test` when the resolver answers `list`. */
function lookUp(list: LookupAddress[]): Promise<{ error: Error | null; address: unknown }> {
  answer.list = list;
  return new Promise((resolve) => {
    publicOnlyLookup('rebind.test', {}, (error, address) => resolve({ error, address }));
  });
}

describe('a name is refused when any of its addresses is private', () => {
  test.each([
    [
      [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    ],
    [
      [
        { address: '10.0.0.1', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ],
    ],
    [
      [
        { address: '2606:4700:4700::1111', family: 6 },
        { address: '::1', family: 6 },
      ],
    ],
  ])('%j', async (list) => {
    const { error, address } = await lookUp(list);
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect([error!.message, address]).toEqual(['rebind.test resolves to a private address', []]);
  });

  test('and when the resolver answers no address at all', async () => {
    const { error, address } = await lookUp([]);
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect(address).toEqual([]);
  });

  test('a name whose every address is public is answered with the first', async () => {
    const list = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ];
    await expect(lookUp(list)).resolves.toEqual({ error: null, address: '93.184.216.34' });
  });
});
