import { authorize } from '../../access/permissions.ts';
import { erasedAddress } from '../../admin/audit.ts';
import type { IncomingRequest } from '../../http/form.ts';
import type { Outcome } from '../../http/outcome.ts';
import { eraseSubscriber } from '../../newsletter/erasure.ts';
import type { SqlValue } from '../../sql/sql.ts';
import { apiFailure, readJsonObject } from './body.ts';
import { decodeSubscriberCursor, encodeCursor } from './cursor.ts';
import { auditChange, limitOf, queryOf, type V1Context, type V1Services } from './shared.ts';

// /api/v1/subscribers (issue 42): the local list, for a key with `newsletter` among its forms;
// erasure by an address sent in the body, never in a path (access logs keep paths). Decision 0282.

const NOT_FOUND = 'No such list: this key’s forms do not include newsletter.';

type Row = { email: string; created_at: string; confirmed_at: string | null; consent_version: string | null; page: string | null };

/** GET /api/v1/subscribers?limit=&cursor= */
export async function listSubscribers(request: IncomingRequest, services: V1Services, { actor }: V1Context): Promise<Outcome> {
  if (authorize(actor, 'subscribers.read') !== 'allow') return apiFailure(404, 'not_found', NOT_FOUND);
  const query = queryOf(request.url);
  const limit = limitOf(query.get('limit'));
  if (limit === undefined) return apiFailure(400, 'bad_request', 'limit must be a whole number from 1 to 100.');
  let after = '';
  const params: SqlValue[] = [];
  const cursorText = query.get('cursor');
  if (cursorText !== null) {
    const cursor = decodeSubscriberCursor(cursorText);
    if (!cursor) return apiFailure(400, 'bad_request', 'cursor is not one this server gave: send the `next` of the previous page as it is.');
    after = 'WHERE (s.created_at < ? OR (s.created_at = ? AND s.email < ?))';
    params.push(cursor.c, cursor.c, cursor.e);
  }
  const rows = await services.store.sql.all<Row>(
    `SELECT s.email, s.created_at, c.confirmed_at, c.consent_version, c.page FROM subscribers s LEFT JOIN newsletter_consents c ON c.email = s.email
     ${after} ORDER BY s.created_at DESC, s.email DESC LIMIT ?`,
    [...params, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    kind: 'data',
    status: 200,
    body: {
      success: true,
      subscribers: page.map((row) => ({
        email: row.email,
        createdAt: row.created_at,
        ...(row.consent_version !== null && { consent: { version: row.consent_version, confirmedAt: row.confirmed_at, page: row.page } }),
      })),
      next: rows.length > limit && last ? encodeCursor({ c: last.created_at, e: last.email }) : null,
    },
  };
}

/** POST /api/v1/subscribers/erase `{"email": "…"}`: `{ success, found }`. */
export async function eraseSubscriberByKey(request: IncomingRequest, services: V1Services, context: V1Context): Promise<Outcome> {
  if (authorize(context.actor, 'subscribers.erase') !== 'allow') return apiFailure(404, 'not_found', NOT_FOUND);
  const body = await readJsonObject(request);
  if (!body.ok) return body.failure;
  const email = body.value.email;
  if (typeof email !== 'string' || email === '' || email.length > 320) return apiFailure(400, 'bad_request', 'Send {"email": "<address>"}.');
  const erased = await eraseSubscriber({ sql: services.store.sql, limits: services.limits }, email);
  if (erased.found) await auditChange(services, context, 'delete-subscriber', erasedAddress(email), new Date());
  return { kind: 'data', status: 200, body: { success: true, found: erased.found } };
}
