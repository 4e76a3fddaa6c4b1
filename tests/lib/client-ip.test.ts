import { describe, expect, test } from 'vitest';
import { clientIp, clientKey, HASH_CACHE_SIZE, hashClient } from '../../packages/site-forms/src/lib/http/client-ip.ts';

describe('clientIp', () => {
  test.each([
    ['no proxy: the socket, whatever the header says', '10.0.0.9', '1.2.3.4', 0, '10.0.0.9'],
    ['one proxy: the rightmost entry', '10.0.0.1', '6.6.6.6, 203.0.113.7', 1, '203.0.113.7'],
    ['two proxies: the second from the right', '10.0.0.1', '6.6.6.6, 203.0.113.7, 10.0.0.2', 2, '203.0.113.7'],
    ['one proxy, no header: the socket', '10.0.0.1', null, 1, '10.0.0.1'],
    ['more proxies than entries: the leftmost', '10.0.0.1', '203.0.113.7', 3, '203.0.113.7'],
    ['garbage in the header: the socket', '10.0.0.1', 'not-an-ip', 1, '10.0.0.1'],
    ['IPv6 entries', '::1', '2001:db8::1', 1, '2001:db8::1'],
  ])('%s', (_, socket, header, trust, expected) => {
    expect(clientIp(socket, header, trust)).toBe(expected);
  });
});

describe('clientKey', () => {
  test.each([
    ['IPv4 as is', '203.0.113.7', '203.0.113.7'],
    ['IPv4-mapped IPv6 as IPv4', '::ffff:203.0.113.7', '203.0.113.7'],
    ['IPv6 by its /64', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['compressed IPv6 by its /64', '2001:db8::1', '2001:db8:0:0::/64'],
    ['loopback IPv6', '::1', '0:0:0:0::/64'],
  ])('%s', (_, ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });

  test('two addresses of one /64 share a key, another /64 does not', () => {
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff::9'));
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });

  test('the log hash is short, stable within a process, and not the address', () => {
    expect(hashClient('203.0.113.7')).toMatch(/^[0-9a-f]{12}$/);
    expect(hashClient('203.0.113.7')).toBe(hashClient('203.0.113.7'));
    expect(hashClient('203.0.113.8')).not.toBe(hashClient('203.0.113.7'));
  });

  test('a client keeps its hash after many other clients have come and gone', () => {
    const first = hashClient('203.0.113.9');
    const others = Array.from({ length: HASH_CACHE_SIZE + 5 }, (_, i) => hashClient(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`));
    expect(hashClient('203.0.113.9')).toBe(first);
    expect(new Set(others).size).toBe(10_005);
    expect(hashClient('10.0.0.0')).toBe(others[0]);
    expect(hashClient('2001:db8:1:2::1')).toBe(hashClient('2001:db8:1:2:ffff::9'));
  });
});
