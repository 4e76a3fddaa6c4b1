import { readFileSync } from 'node:fs';

/** What the build put into the pages that the server must agree with (written by the integration, src/integration/integration.ts). */
export type BuildSettings = { contactFormEndpoint: string | null };

/**
 * Reads dist/build-settings.json; `undefined` for a build made before the file existed.
 * Hint: the pages' script posts to the endpoint it was built with, so that one, not the
 * run-time CONTACT_FORM_ENDPOINT, is the one the Content-Security-Policy must allow.
 */
export function readBuildSettings(file: URL): BuildSettings | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const value = JSON.parse(text) as { contactFormEndpoint?: unknown };
  return { contactFormEndpoint: typeof value.contactFormEndpoint === 'string' && value.contactFormEndpoint ? value.contactFormEndpoint : null };
}

/** The origin the built contact script posts to, when it is another site's; `undefined` for this site or a malformed value. */
export function builtEndpointOrigin(settings: BuildSettings): string | undefined {
  if (!settings.contactFormEndpoint) return undefined;
  try {
    const url = new URL(settings.contactFormEndpoint);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
