import { type Actor, actorLabel } from '../../access/permissions.ts';
import { type AuditAction, createAuditLog } from '../../admin/audit.ts';
import type { Services } from '../../app/services.ts';
import { hashClient } from '../../http/client-ip.ts';
import type { HandlerContext } from '../../pipeline/routes.ts';
import type { KeyContext } from '../auth.ts';

// What the /api/v1 handlers share: their context, the page size, the audit of a change. Decision 0282.

/** An /api/v1 handler's context: the pipeline's, with the key that called. */
export type V1Context = KeyContext<HandlerContext>;

/** The rows of a page when `limit` is not given, and the most a page may have. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

/** `limit` from a query: 1–100, 50 when absent; `undefined` for anything else (a 400). */
export function limitOf(text: string | null): number | undefined {
  if (text === null) return DEFAULT_LIMIT;
  if (!/^[0-9]{1,3}$/.test(text)) return undefined;
  const limit = Number(text);
  return limit >= 1 && limit <= MAX_LIMIT ? limit : undefined;
}

/**
 * Records a change a key made in the admin's audit log (the same table, the same actions as the
 * admin's buttons), naming the key (`key:<id>`, `key <name>`) and the client's hash.
 */
export async function auditChange(services: Services, context: { ip: string; actor: Actor }, action: AuditAction, detail: string, at: Date): Promise<void> {
  await createAuditLog(services.store.sql).record({ at: at.toISOString(), action, detail, client: hashClient(context.ip), ...actorLabel(context.actor) });
}

/** The query of a request's URL. */
export function queryOf(url: string): URLSearchParams {
  const start = url.indexOf('?');
  return new URLSearchParams(start === -1 ? '' : url.slice(start + 1).split('#', 1)[0]);
}
