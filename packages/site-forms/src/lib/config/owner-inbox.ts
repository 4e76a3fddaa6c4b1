import * as v from 'valibot';
import { type PasswordHash, parsePasswordHash } from '../admin/password.ts';
import { type ConfigConcern, integer, optionalText, readVariables } from './variables.ts';

/**
 * The owner's inbox at /admin, on when `ADMIN_PASSWORD_HASH` holds a hash made by
 * `npm run admin -- hash-password`; and how many days messages are kept (`RETENTION_DAYS`).
 */
export type AdminConfig = { admin: { passwordHash: PasswordHash; hashText: string } | undefined; retentionDays: number | undefined };

const VARIABLES = {
  ADMIN_PASSWORD_HASH: optionalText,
  RETENTION_DAYS: v.optional(v.union([v.literal(''), integer(1, 36_500)], 'must be a whole number of days from 1 to 36500')),
};

/** ADMIN_PASSWORD_HASH, RETENTION_DAYS. */
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
    return {
      config: {
        admin: passwordHash && e.ADMIN_PASSWORD_HASH !== undefined ? { passwordHash, hashText: e.ADMIN_PASSWORD_HASH } : undefined,
        retentionDays: typeof e.RETENTION_DAYS === 'number' ? e.RETENTION_DAYS : undefined,
      },
      problems,
    };
  },
  describe: ({ admin: on, retentionDays }) => ({
    admin: on ? `on at /admin (${on.passwordHash.algorithm})` : 'off (set ADMIN_PASSWORD_HASH to turn it on)',
    retentionDays: retentionDays ?? 'off (messages are kept until deleted)',
  }),
};
