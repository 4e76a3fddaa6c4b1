import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The networks a webhook may not reach unless the owner allows it (`WEBHOOK_ALLOW_PRIVATE`):
 * loopback, private, shared (CGNAT), link-local (where cloud metadata answers), multicast and
 * reserved ranges, in IPv4 and IPv6; IPv4 carried inside IPv6 is judged by the IPv4 address
 * (see `embeddedIpv4`).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // IPv4-compatible (::a.b.c.d, with :: and ::1): deprecated by RFC 4291, never a destination.
  ['::', 96],
  // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765): deprecated, and the IPv4 behind it is anyone's guess.
  ['::ffff:0:0:0', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:2::', 48],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local: deprecated, but still routed inside some networks.
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address lies in a network a webhook may not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  if (!groups) return true;
  const canonical = groups.map((group) => group.toString(16)).join(':');
  if (PRIVATE.check(canonical, 'ipv6')) return true;
  const ipv4 = embeddedIpv4(groups);
  return ipv4 !== undefined && isPrivateAddress(ipv4);
}

/**
 * The IPv4 address an IPv6 address carries, where the network delivers to it: mapped
 * (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::) and Teredo (the
 * client's address, inverted, in the last 32 bits).
 */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return dotted(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return dotted(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return dotted(groups[1]!, groups[2]!);
  if (groups[0] === 0x2001 && groups[1] === 0) return dotted(groups[6]! ^ 0xffff, groups[7]! ^ 0xffff);
  return undefined;
}

function dotted(high: number, low: number): string {
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * The eight 16-bit groups of an IPv6 address in any of its spellings (`::`, leading zeros, a
 * dotted IPv4 tail, a `%zone`), or `undefined` when it is not one.
 */
function ipv6Groups(address: string): number[] | undefined {
  const text = address.replace(/%.*$/, '');
  const dottedTail = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const hex = dottedTail
    ? `${dottedTail[1]}${((Number(dottedTail[2]) << 8) | Number(dottedTail[3])).toString(16)}:${((Number(dottedTail[4]) << 8) | Number(dottedTail[5])).toString(16)}`
    : text;
  const halves = hex.split('::');
  if (halves.length > 2) return undefined;
  const part = (half: string | undefined) => (half ? half.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return undefined;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

/** The error of a connection refused because its address is private. */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
}

/**
 * A `lookup` for the HTTP agent that answers only public addresses: the check happens on the
 * address the socket will connect to, so a name that resolves to 127.0.0.1 (or changes to it
 * between two lookups) is refused as the literal would be.
 */
export function publicOnlyLookup(
  hostname: string,
  options: object,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((entry) => isPrivateAddress(entry.address))) {
      return callback(new PrivateAddressError(`${hostname} resolves to a private address`), []);
    }
    if ((options as { all?: boolean }).all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}
