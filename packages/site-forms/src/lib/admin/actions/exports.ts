import { subscribersToCsv } from '../../newsletter/subscribers.ts';
import { type AdminOutcome, type ExportGate, record, type SessionCall } from './shared.ts';

// The exports of the messages and subscribers pages, as CSV or JSON.

/** The messages or the subscribers as a file; messages streamed, one export at a time. */
export async function exportFile(call: SessionCall): Promise<AdminOutcome> {
  const { fields, deps, now } = call;
  const { what, format } = fields;
  if ((what !== 'messages' && what !== 'subscribers') || (format !== 'csv' && format !== 'json')) {
    return { kind: 'refused', status: 400, message: 'Choose what to export: messages or subscribers, as CSV or JSON.' };
  }
  // "For Excel": the same CSV with a UTF-8 byte-order mark, without which Excel shows Zoë as ZoÃ«.
  const byteOrderMark = fields.bom === '1';
  const day = now().toISOString().slice(0, 10);
  const file = {
    kind: 'download' as const,
    filename: `${what}-${day}.${format}`,
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8',
  };
  if (what === 'subscribers') {
    const rows = await deps.exports.subscribers();
    await record(call, 'export-subscribers', `${rows.length} as ${format.toUpperCase()}`);
    // The same columns and time format as `npm run subscribers -- export`.
    return { ...file, body: format === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : subscribersToCsv(rows, { byteOrderMark }) };
  }
  // Messages may be many and long: streamed from a cursor, one export at a time (decision 0127),
  // of the person's forms only.
  const { scope } = call.session.actor;
  const gate = deps.exporting ?? {};
  const started = now().getTime();
  if (gate.since !== undefined && started - gate.since < EXPORT_GATE_MS) {
    return { kind: 'refused', status: 429, message: 'An export is already being written. Try again when it has finished.', headers: { 'retry-after': '30' } };
  }
  gate.since = started;
  try {
    await record(call, 'export-messages', `${await deps.exports.countMessages(scope)} as ${format.toUpperCase()}`);
  } catch (error) {
    gate.since = undefined;
    throw error;
  }
  return { ...file, body: released(deps.exports.messages(format, { excel: byteOrderMark && format === 'csv', scope }), gate, started) };
}

/** One export at a time; a gate left by a download that never started to be written opens again after this long. */
const EXPORT_GATE_MS = 10 * 60 * 1000;

/** The chunks of an export, letting the next export start once they are written, or the download is abandoned. */
async function* released(chunks: AsyncIterable<string>, gate: ExportGate, started: number): AsyncGenerator<string> {
  try {
    yield* chunks;
  } finally {
    if (gate.since === started) gate.since = undefined;
  }
}
