import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The networks a webhook may not reach unless the owner allows it (`WEBHOOK_ALLOW_PRIVATE`):
 * loopback, private, shared (CGNAT), link-local (where cloud metadata answers), multicast and
 * reserved ranges, in IPv4 and IPv6, and IPv4 inside IPv6 (mapped and NAT64).
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
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address lies in a network a webhook may not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // IPv4 written inside IPv6 (::ffff:10.0.0.1, 64:ff9b::a00:1) is the IPv4 address it carries.
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return isPrivateAddress(embedded[1]!);
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1]!, 16);
    const low = Number.parseInt(hex[2]!, 16);
    return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return PRIVATE.check(address, 'ipv6');
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
