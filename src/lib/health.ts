import type { DatabaseSync } from 'node:sqlite';
import type { Data } from './pipeline/outcome.ts';

/** What the health check reads. */
export type HealthDeps = { db: DatabaseSync; providerName: string };

/**
 * GET /api/health: 200 with the provider, whether the database takes writes and how many
 * messages wait for delivery; 503 when the database does not take writes.
 * Hint: the write is a real insert, rolled back, so a read-only or full disk shows here.
 */
export function handleHealth({ db, providerName }: HealthDeps): Data {
  const databaseWritable = canWrite(db);
  let pendingMessages: number | null = null;
  try {
    pendingMessages = (db.prepare("SELECT count(*) AS n FROM submissions WHERE status = 'pending'").get() as { n: number }).n;
  } catch {}
  return {
    kind: 'data',
    status: databaseWritable ? 200 : 503,
    body: { success: databaseWritable, provider: providerName, databaseWritable, pendingMessages },
  };
}

function canWrite(db: DatabaseSync): boolean {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch {
    return false;
  }
  try {
    db.prepare('INSERT INTO subscribers (email, created_at) VALUES (?, ?)').run(`health-check-${process.pid}`, '');
    return true;
  } catch {
    return false;
  } finally {
    db.exec('ROLLBACK');
  }
}
