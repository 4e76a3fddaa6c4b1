import { describeError } from '../log.ts';
import type { AbuseLimits } from '../rate-limit.ts';
import { forgetDraftsHolding } from '../sql/drafts.ts';
import type { Sql } from '../sql/sql.ts';
import { forgetEvents } from '../webhooks/deliveries.ts';

/** What an erasure reaches: the store, and the per-address counts (the server's limits, or Redis alone for a command). */
export type ErasureParts = { sql: Sql; limits?: Pick<AbuseLimits, 'forgetAddress'> | undefined };

/** What an erasure found, and why the address's count in Redis is still there, when it is (Redis unreachable). */
export type ErasureResult = { found: boolean; redisUnreachable?: string };

/**
 * Erases a subscriber's address everywhere it is kept (decision 0152): the local list, its consent
 * record, the signups waiting for the provider, the events that name it with their deliveries
 * still waiting, the drafts of refused posts that hold it, all in one transaction, then its count
 * in the per-address limit. Answers whether anything of it was found.
 * Hint: the admin's "Delete" and `npm run subscribers -- erase` both call this; the audit log
 * keeps only the domain (admin/audit.ts). A Redis that cannot be reached is said, not thrown:
 * the store's part is done, and running the erasure again finishes it.
 */
export async function eraseSubscriber({ sql, limits }: ErasureParts, email: string): Promise<ErasureResult> {
  // No stored address holds a control character (the forms refuse them), and PostgreSQL would
  // refuse a NUL as a parameter: such an address is simply not there.
  if (CONTROL.test(email)) return { found: false };
  const address = email.toLowerCase();
  // Case folded beyond ASCII on both engines (SQLite's lower() knows only A–Z; sql/sqlite.ts adds fold()).
  const lower = sql.engine === 'sqlite' ? 'fold' : 'lower';
  const stored = await sql.transaction(async (tx) => {
    let removed = 0;
    for (const table of ['subscribers', 'newsletter_consents', 'signup_queue']) {
      removed += (await tx.run(`DELETE FROM ${table} WHERE ${lower}(email) = ?`, [address])).changes;
    }
    return removed + (await forgetEvents(tx, sql.engine, { address })) + (await forgetDraftsHolding(tx, sql.engine, address));
  });
  try {
    const counted = (await limits?.forgetAddress(address)) ?? false;
    return { found: stored > 0 || counted };
  } catch (error) {
    return { found: stored > 0, redisUnreachable: describeError(error) };
  }
}

/** The control characters no stored text holds: the forms refuse them (tabs and line breaks aside, which no address has). */
const CONTROL = /[\u0000-\u001f\u007f]/;
