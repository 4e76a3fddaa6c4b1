import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPrivateAddress, publicOnlyLookup } from './address.ts';
import type { TryEnd } from './deliveries.ts';

/** How long a receiver has to answer a delivery (Standard Webhooks recommends 15 s). */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** How much of an answer is read before the socket is let go: it is never stored or shown. */
const ANSWER_LIMIT = 64 * 1024;

/** What a try needs: where, what, and whether private addresses are allowed (`WEBHOOK_ALLOW_PRIVATE`). */
export type Post = { url: string; body: string; headers: Record<string, string>; allowPrivate: boolean; timeoutMs?: number };

/**
 * Posts one delivery and tells how it ended: a 2xx is delivered, a 410 stops the endpoint,
 * anything else (another status, a redirect, a timeout, a refused or private address) is retried.
 * Hint: redirects are never followed (a receiver could point the site at its own network), and
 * the receiver's answer is read only to be dropped: what the error says is ours, not its text.
 */
export function postDelivery({ url, body, headers, allowPrivate, timeoutMs = DELIVERY_TIMEOUT_MS }: Post): Promise<TryEnd> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ kind: 'retry', status: null, error: 'the address is not a URL' });
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
    return Promise.resolve({ kind: 'retry', status: null, error: 'the address is private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)' });
  }
  const https = target.protocol === 'https:';
  const lookup = allowPrivate ? undefined : publicOnlyLookup;
  const agent = https ? new HttpsAgent({ lookup, keepAlive: false }) : new HttpAgent({ lookup, keepAlive: false });
  return new Promise<TryEnd>((resolve) => {
    let settled = false;
    const end = (result: TryEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      agent.destroy();
      resolve(result);
    };
    const req = (https ? httpsRequest : httpRequest)(
      target,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'site-forms-webhooks/1' } },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_LIMIT) res.destroy();
        });
        res.on('error', () => {});
        res.on('close', () => end(classify(status, res.headers['retry-after'])));
        res.resume();
      },
    );
    const timer = setTimeout(() => {
      end({ kind: 'retry', status: null, error: `no answer within ${Math.round(timeoutMs / 1000)} s` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => end({ kind: 'retry', status: null, error: connectionError(error) }));
    req.end(body);
  });
}

function classify(status: number, retryAfter: string | string[] | undefined): TryEnd {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status: 410 };
  if (status >= 300 && status < 400) return { kind: 'retry', status, error: `a redirect (${status}), which is not followed` };
  const wait = status === 429 || status === 503 ? retryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) : undefined;
  return { kind: 'retry', status, error: `the receiver answered ${status}`, retryAfterMs: wait };
}

/** `Retry-After` in seconds or as a date, in milliseconds from now; `undefined` when unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function connectionError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EPRIVATEADDRESS') return 'the address is private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)';
  if (error.code === 'ECONNREFUSED') return 'the connection was refused';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'the name does not resolve';
  if (error.code === 'ECONNRESET') return 'the connection was reset';
  // A certificate from a CA nobody trusts is UNABLE_TO_VERIFY_LEAF_SIGNATURE: no CERT in its name.
  if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || error.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE') {
    return 'the certificate is not trusted';
  }
  return `the connection failed (${error.code ?? 'unknown'})`;
}
