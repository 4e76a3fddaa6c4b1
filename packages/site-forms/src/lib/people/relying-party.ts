import { isIP } from 'node:net';

// Where passkeys live: the relying party of WebAuthn is the site's domain, from PUBLIC_URL.
// Pure, so that the configuration can check it before anything starts (decision 0290).

/** The relying party of the passkey ceremonies: the domain (`id`), the exact origin the browser must report, and the site's name. */
export type RelyingParty = { id: string; origin: string; name: string };

/**
 * The relying party's id for this PUBLIC_URL: its host name, or `undefined` (passkeys off)
 * without one, when it cannot be read, or when the host is an IP address, which WebAuthn
 * refuses as an RP ID. `localhost` is a domain, and a secure context even on http.
 */
export function relyingPartyId(publicUrl: string | undefined): string | undefined {
  if (!publicUrl?.trim()) return undefined;
  let url: URL;
  try {
    url = new URL(publicUrl.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return host === '' || isIP(host) !== 0 ? undefined : host;
}

/** The relying party of the site at PUBLIC_URL named `siteName`, or `undefined` when passkeys are off (see `relyingPartyId`). */
export function relyingPartyOf(publicUrl: string | undefined, siteName: string): RelyingParty | undefined {
  const id = relyingPartyId(publicUrl);
  return id === undefined ? undefined : { id, origin: new URL(publicUrl!.trim()).origin, name: siteName };
}
