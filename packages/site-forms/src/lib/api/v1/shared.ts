import { type Actor, actorLabel } from '../../access/permissions.ts';
import { type AuditAction, createAuditLog } from '../../admin/audit.ts';
import type { Store } from '../../database/database.ts';
import type { FileRecords } from '../../files/files.ts';
import type { FileLinks } from '../../files/links.ts';
import { hashClient } from '../../http/client-ip.ts';
import type { PublicAddressSettings } from '../../http/origin.ts';
import type { Logger } from '../../log.ts';
import type { ErasureParts } from '../../newsletter/erasure.ts';
import type { AkismetClient } from '../../spam/akismet.ts';
import type { SpamStore } from '../../spam/spam-store.ts';
import type { ApiAccess, KeyContext } from '../auth.ts';

// What the /api/v1 handlers share: what they use of the services, their context, the page size,
// the audit of a change. Decision 0282.

/**
 * What the /api/v1 handlers use of a process's services (app/services.ts `Services` is one): the
 * store, the spam records and Akismet for corrections, the files' records and links, the public
 * address, the abuse limits an erasure clears, the logger, the worker's poke, the keys.
 * Hint: named here rather than imported, so that api/ stays below app/ in the folder map.
 */
export type V1Services = {
  store: Store;
  spam: { store: SpamStore; service: { readonly akismet?: AkismetClient | undefined } };
  files: { records: FileRecords; links: FileLinks };
  config: PublicAddressSettings;
  limits?: ErasureParts['limits'];
  logger: Logger;
  /** Pokes the mail worker: a released message is due. */
  onStored(id: number): void;
  api: ApiAccess;
};

/** An /api/v1 handler's context: the client, a templated route's parameters (pipeline/routes.ts `HandlerContext`), the key that called. */
export type V1Context = KeyContext<{ ip: string; params: Readonly<Record<string, string>> }>;

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
export async function auditChange(services: V1Services, context: { ip: string; actor: Actor }, action: AuditAction, detail: string, at: Date): Promise<void> {
  await createAuditLog(services.store.sql).record({ at: at.toISOString(), action, detail, client: hashClient(context.ip), ...actorLabel(context.actor) });
}

/** The query of a request's URL. */
export function queryOf(url: string): URLSearchParams {
  const start = url.indexOf('?');
  return new URLSearchParams(start === -1 ? '' : url.slice(start + 1).split('#', 1)[0]);
}
