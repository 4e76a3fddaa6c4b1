import type { NewFile } from '../files/files.ts';
import type { Sql, SqlValue } from '../sql/sql.ts';

/** What the one statement stores: the message's columns, and the texts of its news for each way it can end. */
export type OneStatement = {
  name: string;
  email: string;
  message: string;
  /** The reasons the filter held it for (empty: none), and the same with the replayed proof's reason added. */
  reasons: readonly string[];
  reasonsIfReplayed: readonly string[];
  ip: string | null;
  userAgent: string | null;
  form: string;
  fields: string | null;
  shownPerson: boolean;
  proof: { id: string; expiresAt: string } | undefined;
  files: readonly NewFile[] | undefined;
  /**
   * The data of its event without the id (JSON of an object whose first key is `createdAt`),
   * accepted and held (with its reasons, and with the replayed proof's too), and the event id's
   * first part (`msg_` and the time); absent when no webhook, alert or reply reads the news.
   */
  news: { received: string; held: string; heldIfReplayed: string; idPrefix: string } | undefined;
};

/**
 * Stores a new message on PostgreSQL in one statement, so one round trip and one commit: the
 * proof's challenge consumed, the message (held when the filter held it or the challenge was
 * already used), its files and the news of it, together or not at all.
 * Hint: it does what `receive` does on SQLite in a transaction of several statements
 * (submissions/machine.ts); the event's id is `messageEventId` finished in SQL (sha256 of the
 * type, the message's id and its time), since the message's id is only known inside.
 */
export async function receiveInOneStatement(
  sql: Sql,
  m: OneStatement,
  now: string,
): Promise<{ id: number; status: 'pending' | 'spam'; reasons: readonly string[] }> {
  const params: SqlValue[] = [];
  // Numbered here, each value once: `?` would need a value for each of its uses.
  const p = (value: SqlValue, type = 'text') => {
    params.push(value);
    return `$${params.length}::${type}`;
  };
  const parts: string[] = [];
  // Replayed: a proof was sent and its challenge was already in the table (or is being stored by
  // another post, whose commit this one waits for on the key).
  let replayed = 'false';
  if (m.proof) {
    parts.push(
      `challenge AS (INSERT INTO used_challenges (id, expires_at) VALUES (${p(m.proof.id)}, ${p(m.proof.expiresAt)}) ON CONFLICT (id) DO NOTHING RETURNING id)`,
    );
    replayed = 'NOT EXISTS (SELECT 1 FROM challenge)';
  }
  const at = p(now);
  parts.push(
    `judged AS (SELECT CASE WHEN ${m.reasons.length > 0 ? 'true' : replayed} THEN 'spam' ELSE 'pending' END AS status, (${replayed}) AS replayed)`,
    `message AS (INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at, spam_reasons, client_ip, user_agent, form, fields, shown_person)
       SELECT ${at}, ${p(m.name)}, ${p(m.email)}, ${p(m.message)}, status, CASE WHEN status = 'pending' THEN date_trunc('milliseconds', now()) END,
         CASE WHEN replayed THEN ${p(JSON.stringify(m.reasonsIfReplayed))} WHEN status = 'spam' THEN ${p(JSON.stringify(m.reasons))} END,
         CASE WHEN status = 'spam' THEN ${p(m.ip)} END, CASE WHEN status = 'spam' THEN ${p(m.userAgent)} END,
         ${p(m.form)}, ${p(m.fields)}, ${p(m.shownPerson ? 1 : 0, 'integer')}
       FROM judged RETURNING id, status)`,
  );
  if (m.files?.length) {
    const files = JSON.stringify(m.files.map((file, position) => ({ ...file, position })));
    parts.push(`files_stored AS (INSERT INTO files (id, submission_id, field, name, size, type, storage_key, created_at, position)
       SELECT f.id, message.id, f.field, f.name, f.size, f.type, f."storageKey", ${at}, f.position
       FROM message, json_to_recordset(${p(files, 'json')}) AS f(id text, field text, name text, size bigint, type text, "storageKey" text, position integer))`);
  }
  if (m.news) {
    // As recordEvent writes it, with the id first in the data, and the id as messageEventId makes it.
    parts.push(`news AS (SELECT CASE WHEN message.status = 'pending' THEN 'contact.received' ELSE 'contact.held' END AS type,
         CASE WHEN message.status = 'pending' THEN ${p(m.news.received)} WHEN judged.replayed THEN ${p(m.news.heldIfReplayed)} ELSE ${p(m.news.held)} END AS data,
         message.id FROM message, judged)`);
    parts.push(`event AS (INSERT INTO events (id, type, data, created_at)
       SELECT ${p(m.news.idPrefix)} || left(encode(sha256(convert_to(type || E'\\n' || id || E'\\n' || ${at}, 'UTF8')), 'hex'), 16),
         type, '{"id":' || id || ',' || substr(data, 2), ${at}
       FROM news ON CONFLICT (id) DO NOTHING)`);
  }
  const row = await sql.get<{ id: number | string; status: 'pending' | 'spam'; replayed: boolean }>(
    `WITH ${parts.join(',\n')} SELECT message.id, message.status, judged.replayed FROM message, judged`,
    params,
  );
  const status = row!.status;
  return { id: Number(row!.id), status, reasons: status === 'pending' ? [] : row!.replayed ? m.reasonsIfReplayed : m.reasons };
}
