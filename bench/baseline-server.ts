/**
 * The bench's reference: a server that does the work of the two endpoints with none of our code
 * (it imports nothing from src/): node:http, the body buffered, `Request.formData()`, one valibot
 * object schema with the API contract's rules and messages, one prepared INSERT into SQLite with
 * WAL and synchronous=FULL, the newsletter's one POST to the provider, and the JSON answers.
 * BASELINE_COMMIT=each (the default) commits each INSERT on its own, one fsync per post, as a
 * person writes it by hand; BASELINE_COMMIT=group gathers the INSERTs of one event-loop turn
 * into one transaction and answers each post once it is committed (the disk's limit, and what
 * our store does since decision 0135), written here afresh. BASELINE_TABLE (below) chooses the table.
 * Started by bench/run.ts, never in production.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import * as v from 'valibot';
import { Contact, JSON_HEADERS, Newsletter, readFields } from './baseline-contract.ts';

const db = new DatabaseSync(join(process.env.DATA_DIR ?? '.', 'baseline.db'));
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
// BASELINE_TABLE=indexed: a table of a message as a form service keeps one to show and send it
// (who sent it from where, its state, when to try it; ids never reused; listed by time, by form
// and by what is due), so that the disk does the same work for a post as under our store;
// otherwise one plain row, the disk's least.
const INDEXED = process.env.BASELINE_TABLE === 'indexed';
db.exec(
  INDEXED
    ? `CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, name TEXT NOT NULL, email TEXT NOT NULL,
         message TEXT NOT NULL, status TEXT NOT NULL, next_attempt_at TEXT, reasons TEXT, client_ip TEXT, user_agent TEXT, form TEXT NOT NULL);
       CREATE INDEX IF NOT EXISTS messages_due ON messages (status, next_attempt_at);
       CREATE INDEX IF NOT EXISTS messages_created ON messages (created_at);
       CREATE INDEX IF NOT EXISTS messages_form ON messages (form, created_at);`
    : 'CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, created_at TEXT, name TEXT, email TEXT, message TEXT)',
);
const insert = INDEXED
  ? db.prepare(
      `INSERT INTO messages (created_at, name, email, message, status, reasons, client_ip, user_agent, form) VALUES (?, ?, ?, ?, 'held', '["unchecked"]', ?, ?, 'contact')`,
    )
  : db.prepare('INSERT INTO messages (created_at, name, email, message) VALUES (?, ?, ?, ?)');
type Row = [string, string, string, string] | [string, string, string, string, string, string];
const GROUP = process.env.BASELINE_COMMIT === 'group';
let waiting: Array<{ row: Row; settle: (error?: unknown) => void }> | undefined;

/** Stores one row; with group commit, answers once the turn's transaction holding it is committed. */
function store(row: Row): Promise<void> {
  if (!GROUP) {
    insert.run(...row);
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    if (!waiting) {
      waiting = [];
      setImmediate(commitWaiting);
    }
    waiting.push({ row, settle: (error) => (error ? reject(error) : resolve()) });
  });
}

function commitWaiting(): void {
  const batch = waiting ?? [];
  waiting = undefined;
  try {
    db.exec('BEGIN IMMEDIATE');
    for (const { row } of batch) insert.run(...row);
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    for (const { settle } of batch) settle(error);
    return;
  }
  for (const { settle } of batch) settle();
}
// Compiled to dist/bench/ by bench/run.ts, so the built pages are at ../client.
const home = readFileSync(new URL('../client/index.html', import.meta.url));
const provider = process.env.MAILCHIMP_API_BASE_URL ?? '';

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(home);
    return;
  }
  const fields = await readFields(req);
  let status = 200;
  let body = '{"success":true}';
  if (req.url === '/api/contact') {
    const parsed = v.safeParse(Contact, fields);
    if (parsed.success) {
      const { name, email, message } = parsed.output;
      const at = new Date().toISOString();
      await store(INDEXED ? [at, name, email, message, req.socket.remoteAddress ?? '', req.headers['user-agent'] ?? ''] : [at, name, email, message]);
    } else [status, body] = [400, JSON.stringify({ success: false, errors: v.flatten(parsed.issues).nested })];
  } else if (req.url === '/api/newsletter') {
    const parsed = v.safeParse(Newsletter, fields);
    if (!parsed.success) [status, body] = [400, JSON.stringify({ success: false, error: 'Please enter a valid email address' })];
    else {
      const answer = await fetch(`${provider}/lists/bench/members`, {
        method: 'POST',
        headers: { authorization: 'apikey bench-us1', 'content-type': 'application/json' },
        body: JSON.stringify({ email_address: parsed.output.email, status: 'subscribed' }),
      });
      await answer.arrayBuffer();
      if (!answer.ok) [status, body] = [503, '{"success":false,"error":"The newsletter service is busy right now. Please try again in a few minutes."}'];
    }
  } else [status, body] = [404, '{"success":false,"error":"Not found"}'];
  res.writeHead(status, JSON_HEADERS);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'server.listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
