import type { Sql } from '../store/sql.ts';

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
  | 'retention';

/** One entry of the audit log; `client` is the salted hash of the address, as in the logs. */
export type AuditEntry = { at: string; action: AuditAction; detail: string; client: string };

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
  retention: 'Deleted old messages',
};

/** The audit log in the database, so every instance writes to one log. */
export interface AuditLog {
  /** Adds one entry. */
  record(entry: AuditEntry): Promise<void>;
  /** The newest entries first, `limit` of them after skipping `offset`, and how many there are. */
  list(limit: number, offset: number): Promise<{ entries: AuditEntry[]; total: number }>;
}

/** The audit log over the store's SQL (table `admin_audit`). */
export function createAuditLog(sql: Sql): AuditLog {
  return {
    async record({ at, action, detail, client }) {
      await sql.run('INSERT INTO admin_audit (at, action, detail, client) VALUES (?, ?, ?, ?)', [at, action, detail, client]);
    },
    async list(limit, offset) {
      const [entries, count] = await Promise.all([
        sql.all<AuditEntry>('SELECT at, action, detail, client FROM admin_audit ORDER BY id DESC LIMIT ? OFFSET ?', [limit, offset]),
        sql.get<{ n: number | string }>('SELECT count(*) AS n FROM admin_audit'),
      ]);
      return { entries, total: Number(count?.n ?? 0) };
    },
  };
}
