import * as v from 'valibot';
import { type PasswordHash, parsePasswordHash } from '../admin/password.ts';
import { relyingPartyId } from '../people/relying-party.ts';
import { type ConfigConcern, integer, optionalText, readVariables } from './variables.ts';

/**
 * The owner's inbox at /admin, on when `ADMIN_PASSWORD_HASH` holds a hash made by
 * `npm run admin -- hash-password`; how many days messages are kept (`RETENTION_DAYS`); and
 * whether a password only lets a person register a passkey (`ADMIN_REQUIRE_PASSKEY`, decision 0291).
 */
export type AdminConfig = {
  admin: { passwordHash: PasswordHash; hashText: string } | undefined;
  retentionDays: number | undefined;
  requirePasskey: boolean;
  /** The domain passkeys belong to (PUBLIC_URL's host), for the start-up log; none: passkeys off. */
  passkeyDomain?: string | undefined;
};

const VARIABLES = {
  ADMIN_PASSWORD_HASH: optionalText,
  RETENTION_DAYS: v.optional(v.union([v.literal(''), integer(1, 36_500)], 'must be a whole number of days from 1 to 36500')),
  ADMIN_REQUIRE_PASSKEY: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false', ''], 'must be true or false')), 'false'),
};

/** ADMIN_PASSWORD_HASH, RETENTION_DAYS, ADMIN_REQUIRE_PASSKEY (which reads PUBLIC_URL: passkeys need its domain). */
export const admin: ConfigConcern<AdminConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    let passwordHash: PasswordHash | undefined;
    if (e.ADMIN_PASSWORD_HASH !== undefined) {
      // The problem never repeats the value: a password pasted here by mistake stays out of the log.
      const parsed = parsePasswordHash(e.ADMIN_PASSWORD_HASH);
      if (parsed.ok) passwordHash = parsed.hash;
      else problems.push(`ADMIN_PASSWORD_HASH ${parsed.problem}`);
    }
    const requirePasskey = e.ADMIN_REQUIRE_PASSKEY === 'true';
    const passkeyDomain = relyingPartyId(env.PUBLIC_URL);
    // Without a relying party nobody could register the passkey the password would then only lead to.
    if (requirePasskey && passkeyDomain === undefined) {
      problems.push(
        'ADMIN_REQUIRE_PASSKEY needs PUBLIC_URL with the site’s domain name, such as https://www.example.com (passkeys work on a domain, not on an IP address)',
      );
    }
    return {
      config: {
        admin: passwordHash && e.ADMIN_PASSWORD_HASH !== undefined ? { passwordHash, hashText: e.ADMIN_PASSWORD_HASH } : undefined,
        retentionDays: typeof e.RETENTION_DAYS === 'number' ? e.RETENTION_DAYS : undefined,
        requirePasskey,
        ...(passkeyDomain !== undefined && { passkeyDomain }),
      },
      problems,
    };
  },
  describe: ({ admin: on, retentionDays, requirePasskey, passkeyDomain }) => ({
    admin: on ? `on at /admin (${on.passwordHash.algorithm})` : 'off (set ADMIN_PASSWORD_HASH to turn it on)',
    retentionDays: retentionDays ?? 'off (messages are kept until deleted)',
    passkeys: passkeyDomain === undefined ? 'off (set PUBLIC_URL to the site’s address on its domain)' : `on for ${passkeyDomain}`,
    ...(requirePasskey && { requirePasskey: 'on (a password only registers a passkey)' }),
  }),
};
