import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAddressedToSite, MISDIRECTED_MESSAGE, type PublicAddressSettings } from '../lib/http/origin.ts';
import { pathOf } from '../lib/pipeline/routes.ts';
import type { FastPath } from './http-server.ts';

/** What every request meets first: its checks, and the security headers every answer carries. */
export type Front = {
  /** Refuses a request with two Host lines, or addressed to another name (421), and returns true; else false. */
  check: FastPath;
  /** Sets the security headers on an answer someone else writes (the built files, Astro). */
  dress(res: ServerResponse): void;
  /**
   * The security headers and an answer's own in one flat list for `writeHead`, the answer's
   * winning where both name one: Node stores and checks each header once, instead of once per
   * `setHeader` and again when `writeHead` merges its own.
   */
  headersWith(own: Readonly<Record<string, string>>): string[];
};

/**
 * What every request meets first, whatever answers it later (pages from memory, the API,
 * the adapter, a 413): the security headers are set on the answer (src/lib/http/security-headers.ts),
 * and once `PUBLIC_URL` is set, a request addressed to another name is refused with 421, so a
 * DNS-rebinding page can neither post nor read.
 */
export function createFront(settings: PublicAddressSettings & { headers: Readonly<Record<string, string>> }): Front {
  const headers = Object.entries(settings.headers);
  const dress = (res: ServerResponse) => {
    for (const [name, value] of headers) res.setHeader(name, value);
  };
  return {
    check: (req, res) => {
      if (hostLines(req) > 1) {
        dress(res);
        refuse(req, res, 400, 'Bad request: more than one Host header');
        return true;
      }
      if (!settings.publicUrl || isForSite(req, settings)) return false;
      dress(res);
      refuseMisdirected(req, res);
      return true;
    },
    dress,
    headersWith(own) {
      const list: string[] = [];
      for (const [name, value] of headers) if (!hasHeader(own, name)) list.push(name, value);
      for (const name in own) list.push(name, own[name]!);
      return list;
    },
  };
}

/** Whether `headers` names `name` (lower case), in any case. */
function hasHeader(headers: Readonly<Record<string, string>>, name: string): boolean {
  if (Object.hasOwn(headers, name)) return true;
  for (const key in headers) if (key.toLowerCase() === name) return true;
  return false;
}

/** A request-target in absolute form (`POST http://host/path`), as a client sends it to a proxy. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Whether a request names the site, in `Host` (or the trusted proxy's headers) and, for a
 * target in absolute form, in the target too.
 * Hint: in absolute form the target's host is the one that counts (RFC 9112 3.2.2) and Node
 * leaves `Host` as sent, so both must name the site: `POST http://evil.test/api/contact`
 * with our `Host` is refused as surely as the other way round.
 */
function isForSite(req: IncomingMessage, settings: PublicAddressSettings): boolean {
  if (!isAddressedToSite(addressHeaders(req), settings)) return false;
  if (!ABSOLUTE_FORM.test(req.url ?? '')) return true;
  const host = URL.parse(req.url ?? '')?.host;
  return Boolean(host) && isAddressedToSite(new Headers({ host: host! }), { ...settings, trustProxy: 0 });
}

function addressHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const name of ['host', 'x-forwarded-host']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/**
 * How many Host lines the request has. Node keeps the first of several, a proxy in front may
 * keep the last, so two are refused (RFC 9112 3.2) rather than read one way here and another there.
 */
function hostLines(req: IncomingMessage): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') count++;
  return count;
}

function refuseMisdirected(req: IncomingMessage, res: ServerResponse): void {
  refuse(req, res, 421, MISDIRECTED_MESSAGE);
}

/** Answers `status` with `message`: as the spec's JSON under /api/, as one line of text elsewhere. */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  const api = pathOf(req.url ?? '').startsWith('/api/');
  const body = api ? JSON.stringify({ success: false, error: message }) : `${message}.\n`;
  res.writeHead(status, {
    'content-type': api ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
