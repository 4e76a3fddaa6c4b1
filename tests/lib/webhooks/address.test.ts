import { describe, expect, test } from 'vitest';
import { isPrivateAddress, PrivateAddressError, publicOnlyLookup } from '../../../packages/site-forms/src/lib/webhooks/address.ts';

describe('the addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.31.255.255', true],
    ['192.168.0.10', true],
    ['100.64.0.1', true],
    ['169.254.169.254', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fd12:3456::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['not an address', true],
    ['93.184.216.34', false],
    ['172.32.0.1', false],
    ['2606:4700:4700::1111', false],
    ['::ffff:93.184.216.34', false],
  ])('%s: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });

  // Every way IPv6 carries an IPv4 address, and the IPv6 ranges that are not the Internet.
  test.each([
    // Site-local (deprecated, still routed inside some networks).
    ['fec0::1', true],
    ['feff:ffff::1', true],
    // 6to4: the IPv4 address is the 32 bits after 2002.
    ['2002:7f00:1::', true],
    ['2002:a00:1::1', true],
    ['2002:c0a8:101:1::1', true],
    ['2002:a9fe:a9fe::', true],
    ['2002:5db8:d822::1', false],
    // IPv4-compatible (::a.b.c.d): deprecated, never a public destination.
    ['::127.0.0.1', true],
    ['::7f00:1', true],
    ['::10.0.0.1', true],
    ['::169.254.169.254', true],
    ['::93.184.216.34', true],
    ['0:0:0:0:0:0:7f00:1', true],
    // IPv4-translated (::ffff:0:a.b.c.d).
    ['::ffff:0:127.0.0.1', true],
    ['::ffff:0:7f00:1', true],
    ['::ffff:0:a9fe:a9fe', true],
    ['::ffff:0:93.184.216.34', true],
    // Mapped and NAT64, however they are written.
    ['0:0:0:0:0:ffff:7f00:1', true],
    ['::FFFF:127.0.0.1', true],
    ['0000:0000:0000:0000:0000:ffff:10.0.0.1', true],
    ['64:ff9b:0:0:0:0:a9fe:a9fe', true],
    ['64:ff9b::5db8:d822', false],
    ['64:ff9b:1::1', true],
    // Teredo: the client's IPv4 address, inverted, in the last 32 bits (here 127.0.0.1).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', true],
    ['2001:0:4136:e378:8000:63bf:a247:27dd', false],
    // Discard-only, benchmarking, documentation.
    ['100::1', true],
    ['2001:2::1', true],
    ['3fff::1', true],
    ['fe80::1%eth0', true],
    ['2a00:1450:4001:80b::200e', false],
  ])('%s: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });
});

describe('IPv4 is read out of IPv6 only where the network delivers to it', () => {
  // Each address ends in (or, for Teredo, inverts to) a private IPv4 address, but sits outside the
  // mapped, NAT64, 6to4 and Teredo prefixes: reading the IPv4 out of it would refuse a public host.
  test.each([
    // Mapped needs all of the first 80 bits zero, then ffff.
    ['2606:4700:4700:0:0:ffff:7f00:1', false],
    ['::1:7f00:1', false],
    // NAT64 needs 64:ff9b and zeros up to the last 32 bits.
    ['2606:4700::7f00:1', false],
    ['2606:ff9b::7f00:1', false],
    ['64:ff9a::7f00:1', false],
    ['64:ff9b:2::7f00:1', false],
    // Teredo needs 2001:0000 (2001:0:…:80ff:fffe carries 127.0.0.1).
    ['2606:0:4136:e378:8000:63bf:80ff:fffe', false],
    ['2001:4860:4136:e378:8000:63bf:80ff:fffe', false],
  ])('%s: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });

  // A zone after a dotted tail: the whole zone goes before the tail is read.
  test.each([
    ['64:ff9b::93.184.216.34%eth0', false],
    ['64:ff9b::10.0.0.1%eth0', true],
    ['2001:0:4136:e378:8000:63bf:127.0.0.1%en0', false],
  ])('%s: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });

  // Only what Node takes for an IP address is parsed: text that merely starts like one is refused.
  test.each([
    ['2606:4700:4700::1111 ', true],
    ['2606:4700:4700:0:0:0:0:1111x', true],
  ])('%j: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });
});

/** What `publicOnlyLookup` called back with. */
function lookUp(hostname: string, options: object): Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown; args: number }> {
  return new Promise((resolve) => {
    publicOnlyLookup(hostname, options, (...args: unknown[]) => {
      const [error, address, family] = args as [NodeJS.ErrnoException | null, unknown, unknown];
      resolve({ error, address, family, args: args.length });
    });
  });
}

describe('the lookup of the connection: only public addresses are answered', () => {
  test('a name that resolves to a private address is refused, with no address to connect to', async () => {
    const { error, address, args } = await lookUp('localhost', {});
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect([error!.message, error!.code]).toEqual(['localhost resolves to a private address', 'EPRIVATEADDRESS']);
    expect([address, args]).toEqual([[], 2]);
  });

  test('a public address is answered as the agent asked: one address and its family', async () => {
    await expect(lookUp('93.184.216.34', {})).resolves.toEqual({ error: null, address: '93.184.216.34', family: 4, args: 3 });
    await expect(lookUp('2606:4700:4700::1111', { family: 6 })).resolves.toEqual({ error: null, address: '2606:4700:4700::1111', family: 6, args: 3 });
  });

  test('or every address, when it asked for all', async () => {
    await expect(lookUp('93.184.216.34', { all: true })).resolves.toEqual({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }],
      family: undefined,
      args: 2,
    });
  });

  test("a name that does not resolve: the resolver's own error, with no address", async () => {
    const { error, address, args } = await lookUp('hooks.invalid', {});
    expect(error).not.toBeInstanceOf(PrivateAddressError);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(error!.code);
    expect([address, args]).toEqual([[], 2]);
  });
});
