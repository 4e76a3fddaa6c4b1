import * as v from 'valibot';
import { type ConfigConcern, integer, optionalUrl, readVariables, text } from './variables.ts';

/** Which other websites may post to the forms, the site's own public address, and how many proxies to believe. */
export type OriginsConfig = {
  allowedOrigins: string[];
  /** How many reverse proxies sit in front; their `X-Forwarded-*` headers are believed. */
  trustProxy: number;
  /** The site's public origin (`PUBLIC_URL`), which alone is "same origin" when set. */
  publicUrl: string | undefined;
};

const VARIABLES = {
  ALLOWED_ORIGINS: v.optional(text, ''),
  TRUST_PROXY: v.optional(integer(0, 20), '0'),
  PUBLIC_URL: optionalUrl,
};

/** ALLOWED_ORIGINS, TRUST_PROXY and PUBLIC_URL. */
export const origins: ConfigConcern<OriginsConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const allowedOrigins: string[] = [];
    for (const item of e.ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const origin = originOf(item);
      if (origin === undefined) problems.push('ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com');
      else allowedOrigins.push(origin);
    }
    // An origin only: a path would suggest the forms live elsewhere, which they cannot.
    const publicUrl = e.PUBLIC_URL ? bareOriginOf(e.PUBLIC_URL) : undefined;
    if (e.PUBLIC_URL && publicUrl === undefined) {
      problems.push('PUBLIC_URL must be the address visitors type, such as https://www.example.com, without a path');
    }
    return { config: { allowedOrigins, trustProxy: e.TRUST_PROXY, publicUrl }, problems };
  },
  describe: ({ allowedOrigins, trustProxy, publicUrl }) => ({ allowedOrigins, trustProxy, publicUrl }),
};

function originOf(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  return /^https?:$/.test(url.protocol) ? url.origin : undefined;
}

/** The origin of a URL that is nothing but an origin (no path, query, fragment or user). */
function bareOriginOf(value: string): string | undefined {
  const url = new URL(value);
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare ? url.origin : undefined;
}
