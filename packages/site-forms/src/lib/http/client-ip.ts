import { createHash, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The address of the client: the socket's, or with `trustProxy` n > 0 the n-th entry from
 * the right of `X-Forwarded-For`, the one the outermost trusted proxy saw.
 * Hint: the left end of the header is whatever the client wrote, so it is never trusted.
 */
export function clientIp(socketAddress: string, forwardedFor: string | null, trustProxy: number): string {
  if (trustProxy <= 0 || !forwardedFor) return socketAddress;
  const hops = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const candidate = hops[Math.max(0, hops.length - trustProxy)];
  return candidate && (isIPv4(candidate) || isIPv6(candidate)) ? candidate : socketAddress;
}

/**
 * The key a client is counted under: an IPv4 address as is, an IPv6 address by its /64,
 * since one subscriber line usually owns a whole /64.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%', 1)[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) takes two groups; it never matters for the /64.
  const missing = 8 - left.length - right.length;
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right];
  return groups.map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}

// A fresh salt per process: log lines can be correlated within a run, never reversed to an
// address. Only our server's bundle hashes clients (the pipeline and the admin's route), so
// one constant is the one salt of the process.
const SALT = randomBytes(16);

/** How many addresses' hashes are kept; past that the memory starts again empty, so a flood of addresses cannot grow it. */
export const HASH_CACHE_SIZE = 10_000;
// A salted SHA-256 per log line cost about a tenth of an invalid post's time; one client
// posting again (the usual case, and every load test) now pays a map look-up.
const hashes = new Map<string, string>();

/** A short, salted hash of a client's key, for log lines; the same for one client throughout a process. */
export function hashClient(ip: string): string {
  const known = hashes.get(ip);
  if (known !== undefined) return known;
  const hash = createHash('sha256').update(SALT).update(clientKey(ip)).digest('hex').slice(0, 12);
  if (hashes.size >= HASH_CACHE_SIZE) hashes.clear();
  hashes.set(ip, hash);
  return hash;
}
