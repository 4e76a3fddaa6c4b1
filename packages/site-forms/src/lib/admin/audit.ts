import type { Sql } from '../sql/sql.ts';

/** What the audit log records: every sign-in, and everything the owner does to the data. */
export type AuditAction =
  | 'sign-in'
  | 'sign-in-failed'
  | 'sign-out'
  | 'export-messages'
  | 'export-subscribers'
  | 'delete-message'
  | 'delete-subscriber'
  | 'release'
  | 'mark-spam'
  | 'retry'
  | 'replay-delivery'
  | 'retry-signup'
  | 'retention'
  | 'refused'
  | 'passkey-added'
  | 'passkey-removed'
  | 'passkey-renamed'
  | 'invite'
  | 'accept-link'
  | 'update-person'
  | 'remove-person'
  | 'send-link'
  | 'revoke-link'
  | 'key-created'
  | 'key-revoked'
  | 'mail-preferences';

/**
 * One entry of the audit log; `client` is the salted hash of the address, as in the logs (or
 * `OTHER_CLIENTS`), and `repeats` how many times the same client did the same within
 * `REPEAT_WINDOW_MS` (at least 1). `actor` and `actorName` say who did it when someone known
 * did (access/permissions.ts `actorLabel`: `person:<id>` or `key:<id>`, and the name as it was
 * then); entries from before people, and refusals of nobody known, have neither.
 */
export type AuditEntry = {
  at: string;
  action: AuditAction;
  detail: string;
  client: string;
  repeats?: number;
  /** Who did it (issue 42): `person:<id>`, `key:<id>` (an API key); none before people existed. */
  actor?: string | undefined;
  /** Their name as it was then (`Eddie <eddie@…>`, `key ci-export`), kept when the person or the key is gone. */
  actorName?: string | undefined;
};

/** Within this long, the same refusal of the same client adds to one entry instead of a new row. */
export const REPEAT_WINDOW_MS = 15 * 60 * 1000;

/** How many clients a refusal gets a row each for within the window; the others share one. */
export const CLIENTS_PER_WINDOW = 10;

/** The `client` of the row that counts a refusal for every client beyond the first `CLIENTS_PER_WINDOW`. */
export const OTHER_CLIENTS = 'others';

/**
 * How long the audit log is kept when RETENTION_DAYS is not set: a year, so it cannot grow
 * forever; with RETENTION_DAYS it is kept as long as the messages.
 */
export const AUDIT_DEFAULT_RETENTION_DAYS = 365;

/** The words the audit page shows for each action. */
export const AUDIT_LABELS: Record<AuditAction, string> = {
  'sign-in': 'Signed in',
  'sign-in-failed': 'Sign-in failed',
  'sign-out': 'Signed out',
  'export-messages': 'Exported messages',
  'export-subscribers': 'Exported subscribers',
  'delete-message': 'Deleted a message',
  'delete-subscriber': 'Deleted a subscriber',
  release: 'Released from spam',
  'mark-spam': 'Marked as spam',
  retry: 'Retried delivery',
  'replay-delivery': 'Replayed a webhook delivery',
  'retry-signup': 'Retried a newsletter signup',
  retention: 'Deleted old messages',
  refused: 'Refused (the role cannot do this)',
  'passkey-added': 'Added a passkey',
  'passkey-removed': 'Removed a passkey',
  'passkey-renamed': 'Renamed a passkey',
  invite: 'Invited',
  'accept-link': 'Followed a link',
  'update-person': 'Changed a person',
  'remove-person': 'Removed a person',
  'send-link': 'Sent a sign-in link',
  'revoke-link': 'Revoked a link',
  'key-created': 'Made an API key',
  'key-revoked': 'Revoked an API key',
  'mail-preferences': 'Chose the mail they get',
};

/**
 * What the audit page shows of an entry: what happened, how often within its quarter-hour, and
 * who: the person or key by name, with the client's hash (or "other addresses" for the entry that
 * counts a flood's others), or the client alone when nobody known did it.
 */
export function describeEntry(entry: AuditEntry): { what: string; who: string } {
  const repeats = entry.repeats ?? 1;
  const client = entry.client === OTHER_CLIENTS ? 'other addresses' : entry.client;
  return {
    what: `${AUDIT_LABELS[entry.action] ?? entry.action}${entry.detail ? `: ${entry.detail}` : ''}${repeats > 1 ? ` (${repeats} times within a quarter of an hour)` : ''}`,
    who: entry.actorName ? `${entry.actorName} (${client})` : client,
  };
}

/** The audit log in the database, so every instance writes to one log. */
export interface AuditLog {
  /** Adds one entry. */
  record(entry: AuditEntry): Promise<void>;
  /**
   * Adds one, or counts it on the same action, detail and client's entry of the last quarter-hour;
   * beyond `CLIENTS_PER_WINDOW` clients in that quarter-hour, on one entry for all the others.
   */
  recordRepeated(entry: AuditEntry): Promise<void>;
  /** Deletes the entries older than `cutoff`; answers how many. */
  deleteBefore(cutoff: Date): Promise<number>;
  /** The newest entries first, `limit` of them after skipping `offset`, and how many there are. */
  list(limit: number, offset: number): Promise<{ entries: AuditEntry[]; total: number }>;
}

/** The audit log over the store's SQL (table `admin_audit`). */
export function createAuditLog(sql: Sql): AuditLog {
  return {
    async record({ at, action, detail, client, actor, actorName }) {
      await sql.run('INSERT INTO admin_audit (at, action, detail, client, actor, actor_name) VALUES (?, ?, ?, ?, ?, ?)', [
        at,
        action,
        detail,
        client,
        actor ?? null,
        actorName ?? null,
      ]);
    },
    // Counted on the entry of the same action, detail and client (the first one's actor stays);
    // with an actor, only on that actor's: two people behind one address are two entries.
    recordRepeated: ({ at, action, detail, client, actor, actorName }) =>
      sql.transaction(async (tx) => {
        const since = new Date(new Date(at).getTime() - REPEAT_WINDOW_MS).toISOString();
        const countOn = async (who: string) =>
          (
            await tx.run(
              `UPDATE admin_audit SET repeats = repeats + 1 WHERE id = (
                 SELECT id FROM admin_audit WHERE action = ? AND detail = ? AND client = ? AND coalesce(actor, '') = ? AND at >= ? ORDER BY id DESC LIMIT 1)`,
              [action, detail, who, actor ?? '', since],
            )
          ).changes === 1;
        if (await countOn(client)) return;
        // A flood from many addresses: a row for each of the first few, one for all the others.
        const seen = await tx.get<{ n: number | string }>('SELECT count(*) AS n FROM admin_audit WHERE action = ? AND detail = ? AND client <> ? AND at >= ?', [
          action,
          detail,
          OTHER_CLIENTS,
          since,
        ]);
        const who = Number(seen?.n ?? 0) < CLIENTS_PER_WINDOW ? client : OTHER_CLIENTS;
        if (who === OTHER_CLIENTS && (await countOn(who))) return;
        await tx.run('INSERT INTO admin_audit (at, action, detail, client, actor, actor_name) VALUES (?, ?, ?, ?, ?, ?)', [
          at,
          action,
          detail,
          who,
          actor ?? null,
          actorName ?? null,
        ]);
      }),
    deleteBefore: async (cutoff) => (await sql.run('DELETE FROM admin_audit WHERE at < ?', [cutoff.toISOString()])).changes,
    async list(limit, offset) {
      const [rows, count] = await Promise.all([
        sql.all<Omit<AuditEntry, 'actor' | 'actorName'> & { repeats: number | string; actor: string | null; actor_name: string | null }>(
          'SELECT at, action, detail, client, repeats, actor, actor_name FROM admin_audit ORDER BY id DESC LIMIT ? OFFSET ?',
          [limit, offset],
        ),
        sql.get<{ n: number | string }>('SELECT count(*) AS n FROM admin_audit'),
      ]);
      return {
        entries: rows.map(({ actor, actor_name, ...row }) => ({
          ...row,
          repeats: Number(row.repeats),
          ...(actor !== null && { actor }),
          ...(actor_name !== null && { actorName: actor_name }),
        })),
        total: Number(count?.n ?? 0),
      };
    },
  };
}

/**
 * How the audit log names an erased subscriber: only the domain, so the entry says that one
 * was deleted without keeping the address the erasure removed.
 */
export function erasedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '…' : `…${email.slice(at)}`;
}
