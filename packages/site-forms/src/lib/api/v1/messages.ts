import { authorize } from '../../access/permissions.ts';
import { markMessageAsSpam, releaseMessage } from '../../contact/corrections.ts';
import { publicOrigin } from '../../http/origin.ts';
import type { Outcome } from '../../http/outcome.ts';
import { scopeClause } from '../../access/permissions.ts';
import type { IncomingRequest } from '../../http/form.ts';
import type { SqlValue } from '../../sql/sql.ts';
import { type Change, STATUSES, type Status } from '../../submissions/machine.ts';
import { apiFailure } from './body.ts';
import { decodeMessageCursor, encodeCursor } from './cursor.ts';
import { auditChange, limitOf, queryOf, type V1Context, type V1Services } from './shared.ts';

// /api/v1/messages (issue 42): the messages of the key's forms, newest first by cursor; one
// message with its files as signed links; spam, not spam and delete through the same state
// machine as the admin's buttons, audited with the key. Decision 0282.

/** The characters of a message a list shows. */
export const EXCERPT_LENGTH = 200;

const NOT_FOUND = 'No such message, or not one of this key’s forms.';

type ListRow = { id: number | string; form: string; status: Status; created_at: string; name: string; email: string; message: string };

/** GET /api/v1/messages?form=&status=&since=&until=&limit=&cursor= */
export async function listMessages(request: IncomingRequest, services: V1Services, { actor }: V1Context): Promise<Outcome> {
  const query = queryOf(request.url);
  const limit = limitOf(query.get('limit'));
  if (limit === undefined) return apiFailure(400, 'bad_request', 'limit must be a whole number from 1 to 100.');
  const where: string[] = [];
  const params: SqlValue[] = [];
  const scope = scopeClause(services.store.sql.engine, actor.scope);
  if (scope.sql) {
    where.push(scope.sql);
    params.push(...scope.params);
  }
  const form = query.get('form');
  if (form !== null) {
    if (authorize(actor, 'messages.read', { form }) !== 'allow') return apiFailure(404, 'not_found', 'No such form, or not one of this key’s forms.');
    where.push('form = ?');
    params.push(form);
  }
  const status = query.get('status');
  if (status !== null) {
    if (!(STATUSES as readonly string[]).includes(status)) return apiFailure(400, 'bad_request', `status must be one of ${STATUSES.join(', ')}.`);
    where.push('status = ?');
    params.push(status);
  }
  for (const [name, operator] of [
    ['since', '>='],
    ['until', '<'],
  ] as const) {
    const text = query.get(name);
    if (text === null) continue;
    const moment = momentOf(text);
    if (moment === undefined) return apiFailure(400, 'bad_request', `${name} must be a date and time (ISO 8601, 2030-01-31T12:00:00Z).`);
    where.push(`created_at ${operator} ?`);
    params.push(moment);
  }
  const cursorText = query.get('cursor');
  if (cursorText !== null) {
    const cursor = decodeMessageCursor(cursorText);
    if (!cursor) return apiFailure(400, 'bad_request', 'cursor is not one this server gave: send the `next` of the previous page as it is.');
    where.push('(created_at < ? OR (created_at = ? AND id < ?))');
    params.push(cursor.c, cursor.c, cursor.i);
  }
  const rows = await services.store.sql.all<ListRow>(
    `SELECT id, form, status, created_at, name, email, message FROM submissions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at DESC, id DESC LIMIT ?`,
    [...params, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    kind: 'data',
    status: 200,
    body: {
      success: true,
      messages: page.map((row) => ({
        id: Number(row.id),
        form: row.form,
        status: row.status,
        createdAt: row.created_at,
        name: row.name,
        email: row.email,
        excerpt: [...row.message].slice(0, EXCERPT_LENGTH).join(''),
      })),
      next: rows.length > limit && last ? encodeCursor({ c: last.created_at, i: Number(last.id) }) : null,
    },
  };
}

/** A date and time a program sent, as the tables keep it, or `undefined`. */
function momentOf(text: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** The id of a message from the path (the route's check lets only digits through), or `undefined` past the integers. */
function idOf(text: string | undefined): number | undefined {
  const id = Number(text);
  return Number.isSafeInteger(id) && id >= 1 ? id : undefined;
}

/** GET /api/v1/messages/{id} */
export async function getMessage(request: IncomingRequest, services: V1Services, { actor, params }: V1Context): Promise<Outcome> {
  const id = idOf(params.id);
  const message = id === undefined ? undefined : await services.store.outbox.find(id);
  if (!message || authorize(actor, 'messages.read', { form: message.form }) !== 'allow') return apiFailure(404, 'not_found', NOT_FOUND);
  const now = new Date();
  const origin = publicOrigin(request.headers, services.config) ?? '';
  const files = await Promise.all(
    (await services.files.records.filesOf(message.id)).map(async (file) => {
      const path = await services.files.links.sign(file.id, now);
      const expires = Number(new URL(path, 'http://x').searchParams.get('expires'));
      return {
        id: file.id,
        field: file.field,
        name: file.name,
        size: file.size,
        type: file.type,
        url: `${origin}${path}`,
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    }),
  );
  return {
    kind: 'data',
    status: 200,
    body: {
      success: true,
      message: {
        id: message.id,
        form: message.form,
        status: message.status,
        createdAt: message.createdAt,
        name: message.name,
        email: message.email,
        message: message.message,
        fields: message.fields,
        attempts: message.attempts,
        sentAt: message.sentAt,
        files,
      },
    },
  };
}

/** The message commands a key may give, as the admin's actions name them in the audit log. */
type Command = 'mark-spam' | 'release' | 'delete-message';

/**
 * The form of the message a key wants to change, when the key may change it: `undefined` for a
 * message that does not exist or is not of the key's forms (the same 404).
 */
async function formToChange(services: V1Services, { actor, params }: V1Context, command: Command): Promise<number | undefined> {
  const id = idOf(params.id);
  if (id === undefined) return undefined;
  const row = await services.store.sql.get<{ form: string }>('SELECT form FROM submissions WHERE id = ?', [id]);
  const permission = command === 'delete-message' ? 'messages.delete' : 'messages.triage';
  return row && authorize(actor, permission, { form: row.form }) === 'allow' ? id : undefined;
}

/** Runs a command through the machine as the admin's buttons do (Akismet told of a correction, a released message sent). */
function run(services: V1Services, command: Command, id: number): Promise<Change> {
  const corrections = { spam: services.spam.store, outbox: services.store.outbox, akismet: services.spam.service.akismet, logger: services.logger };
  if (command === 'mark-spam') return markMessageAsSpam(id, corrections);
  if (command === 'release')
    return releaseMessage(id, corrections).then((change) => {
      if (change.found && change.changed) services.onStored(id);
      return change;
    });
  // No time of this process: whether the message is being sent is the queue's clock's to say (decision 0270), as for the admin's Delete.
  return services.store.messages.remove(id);
}

/** The handler of POST …/spam, POST …/not-spam or DELETE: `{ success, changed, status, deferred }` (or `deleted`). */
export function messageCommand(command: Command): (request: IncomingRequest, services: V1Services, context: V1Context) => Promise<Outcome> {
  return async (_request, services, context) => {
    const id = await formToChange(services, context, command);
    if (id === undefined) return apiFailure(404, 'not_found', NOT_FOUND);
    const now = new Date();
    const change = await run(services, command, id);
    // Deleted meanwhile (by the admin or another program): as if it never was.
    if (!change.found || (command === 'delete-message' && !change.changed)) return apiFailure(404, 'not_found', NOT_FOUND);
    // Only the call whose write moved the message records it: concurrent calls audit once.
    if (change.changed) await auditChange(services, context, command, `#${id}${change.deferred ? ' (when its send ends)' : ''}`, now);
    const deferred = change.deferred === true;
    if (command === 'delete-message') return { kind: 'data', status: 200, body: { success: true, deleted: true, deferred } };
    return {
      kind: 'data',
      status: 200,
      body: { success: true, changed: change.changed, status: change.changed && !deferred ? (change.to ?? change.from) : change.from, deferred },
    };
  };
}
