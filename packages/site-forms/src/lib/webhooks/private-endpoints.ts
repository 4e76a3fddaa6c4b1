import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress } from './address.ts';
import type { Endpoint } from './endpoints.ts';

/** How long the check at start waits for a name to resolve: a slow resolver delays the start by this much at most. */
const LOOKUP_TIMEOUT_MS = 2_000;

/** Every address a host name resolves to, as the system's resolver (and so the deliveries) finds them. */
async function resolveAll(host: string): Promise<readonly string[]> {
  return (await lookup(host, { all: true })).map((entry) => entry.address);
}

/**
 * The endpoints whose address is private (loopback, a private network, link-local…), which every
 * delivery refuses unless WEBHOOK_ALLOW_PRIVATE is set, with the host their URL names.
 * Hint: checked once at start so that the owner reads it in the start log, not at the first
 * message; a name that does not resolve now is left to the deliveries, which retry it.
 */
export async function privateEndpoints(endpoints: readonly Endpoint[]): Promise<Array<{ name: string; host: string }>> {
  const checked = await Promise.all(
    endpoints
      .filter((endpoint) => endpoint.kind !== 'auto-reply')
      .map(async (endpoint) => {
        const host = new URL(endpoint.url).hostname.replace(/^\[(.*)\]$/, '$1');
        return { name: endpoint.name, host, private: await isPrivateHost(host) };
      }),
  );
  return checked.filter((endpoint) => endpoint.private).map(({ name, host }) => ({ name, host }));
}

async function isPrivateHost(host: string): Promise<boolean> {
  if (isIP(host) !== 0) return isPrivateAddress(host);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<readonly string[]>((done) => {
    timer = setTimeout(() => done([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const addresses = await Promise.race([resolveAll(host), late]);
    return addresses.some((address) => isPrivateAddress(address));
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
