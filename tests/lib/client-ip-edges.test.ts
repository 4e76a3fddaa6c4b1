import { describe, expect, test } from 'vitest';
import { clientIp, clientKey } from '../../packages/site-forms/src/lib/http/client-ip.ts';

describe('the client behind proxies: edge cases', () => {
  test.each([
    ['a negative proxy count counts as none', '10.0.0.1', '203.0.113.7', -1, '10.0.0.1'],
    ['an empty header: the socket', '10.0.0.1', '', 1, '10.0.0.1'],
    ['entries without spaces', '10.0.0.1', '6.6.6.6,203.0.113.7', 1, '203.0.113.7'],
    ['spaces and empty entries around the one that counts', '10.0.0.1', '6.6.6.6 ,, 203.0.113.7 ,', 1, '203.0.113.7'],
  ])('%s', (_, socket, header, trust, expected) => {
    expect(clientIp(socket, header, trust)).toBe(expected);
  });
});

describe('the key a client is counted under: edge cases', () => {
  test.each([
    ['an IPv4-mapped address in capitals', '::FFFF:203.0.113.7', '203.0.113.7'],
    ['a mapped-looking address with more in front is IPv6', '1::ffff:203.0.113.7', '1:0:0:0::/64'],
    ['a mapped address with two-digit parts', '::ffff:10.20.30.40', '10.20.30.40'],
    ['IPv6 in capitals with leading zeros', '2001:0DB8:00A1:0002::1', '2001:db8:a1:2::/64'],
    ['a group of only zeros stays 0', '2001:db8:0000:2::1', '2001:db8:0:2::/64'],
    ['the /64 ends in ::', '2001:db8:1:2::', '2001:db8:1:2::/64'],
    ['a zone index is left out', 'fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['a short head and a long tail', '2001::5:6:7:8', '2001:0:0:0::/64'],
    ['the tail reaches into the /64', '2001:db8::3:4:5:6:7', '2001:db8:0:3::/64'],
  ])('%s', (_, ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});
