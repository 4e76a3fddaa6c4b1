import * as v from 'valibot';
import { type ConfigConcern, hasScheme, integer, optionalUrl, readVariables, text } from './variables.ts';

/** Which other websites may post to the forms, the site's own public address, and how many proxies to believe. */
export type OriginsConfig = {
  allowedOrigins: string[];
  /** How many reverse proxies sit in front; their `X-Forwarded-*` headers are believed. */
  trustProxy: number;
  /** The site's public origin (`PUBLIC_URL`), which alone is "same origin" when set. */
  publicUrl: string | undefined;
  /** The origin the contact script posts to when `CONTACT_FORM_ENDPOINT` is another site's: the CSP allows it. */
  contactEndpointOrigin: string | undefined;
};

const VARIABLES = {
  ALLOWED_ORIGINS: v.optional(text, ''),
  TRUST_PROXY: v.optional(integer(0, 20), '0'),
  PUBLIC_URL: optionalUrl,
  // Read by `npm run build` for the script, and here for the pages' CSP (connect-src).
  CONTACT_FORM_ENDPOINT: optionalUrl,
};

/** ALLOWED_ORIGINS, TRUST_PROXY, PUBLIC_URL and the origin of CONTACT_FORM_ENDPOINT. */
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
    const contactEndpointOrigin = e.CONTACT_FORM_ENDPOINT ? originOf(e.CONTACT_FORM_ENDPOINT) : undefined;
    return { config: { allowedOrigins, trustProxy: e.TRUST_PROXY, publicUrl, contactEndpointOrigin }, problems };
  },
  describe: ({ allowedOrigins, trustProxy, publicUrl, contactEndpointOrigin }) => ({ allowedOrigins, trustProxy, publicUrl, contactEndpointOrigin }),
};

function originOf(value: string): string | undefined {
  return hasScheme(value, ['http', 'https']) ? new URL(value).origin : undefined;
}

/** The origin of a URL that is nothing but an origin (no path, query, fragment or user). */
function bareOriginOf(value: string): string | undefined {
  const url = new URL(value);
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare ? url.origin : undefined;
}
