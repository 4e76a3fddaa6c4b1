import { toolCommand } from '../../lib/commands.ts';
import { EXIT, readFormatOption } from '../../lib/cli.ts';
import { markMessageAsSpam, releaseMessage } from '../../lib/contact/corrections.ts';
import { type ExportOptions, exportChunks, type Spreadsheet } from '../../lib/contact/export.ts';
import type { DeliveryEvent, DeliveryStatus, Outbox, Submission } from '../../lib/contact/outbox.ts';
import type { ListedFile } from '../../lib/files/listing.ts';
import { formatSize } from '../../lib/files/size.ts';
import { formTitleOf, presentFields } from '../../lib/forms/registry.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import type { AkismetClient } from '../../lib/spam/akismet.ts';
import type { SpamStore } from '../../lib/spam/spam-store.ts';
import type { DigestOutcome, DigestReport } from '../../lib/spam/upkeep.ts';
import { REASON_TEXT, type SpamReason } from '../../lib/spam/verdict.ts';
import { STATUSES } from '../../lib/submissions/machine.ts';
import { formatTable, type TableColumn } from '../../lib/text-table.ts';
import type { Deliveries, ReplayOutcome } from '../../lib/webhooks/deliveries.ts';

/** The commands of `npm run inbox`, as parsed from its arguments. */
export type InboxCommand =
  | { name: 'help' }
  | { name: 'list'; status?: DeliveryStatus }
  | { name: 'show'; id: number }
  | { name: 'export'; format: 'csv' | 'json'; bom: boolean; excel?: true }
  | { name: 'retry'; id: number }
  | { name: 'release'; id: number }
  | { name: 'spam'; id: number }
  | { name: 'delete'; id: number }
  | { name: 'digest' }
  | { name: 'webhooks' }
  | { name: 'webhooks-replay'; id: number };

const WEBHOOK_COLUMNS: TableColumn[] = [
  { header: 'ID' },
  { header: 'CREATED (UTC)' },
  { header: 'EVENT' },
  { header: 'TO' },
  { header: 'STATUS' },
  { header: 'TRIES' },
  { header: 'LAST ERROR', maxWidth: 48 },
];

/** What `digest` says of each outcome, and whether it is a success; `sent` names whom it reached (people who asked, or CONTACT_TO). */
const DIGEST_OUTCOMES: Record<DigestOutcome, { ok: boolean; text: string | ((sentTo: readonly string[]) => string) }> = {
  sent: { ok: true, text: (sentTo) => `The digest of held messages was sent to ${sentTo.join(', ')}.\n` },
  'nothing held': { ok: true, text: 'Nothing was held as spam since the last digest, so none was sent.\n' },
  'not due': { ok: false, text: 'Another instance is sending the digest at this moment; try again in a minute.\n' },
  'no mail server': { ok: false, text: 'No mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM to send the digest.\n' },
  failed: { ok: false, text: 'The mail server did not take the digest (the line above says why); nothing is lost, try again later.\n' },
};

/** What `npm run inbox` prints for help, and after a usage error. */
export const INBOX_USAGE = `Usage: ${toolCommand('inbox', '<command>')}

Commands:
  list [--status <status>]   every contact message (or those pending, sent, failed or spam), newest first
  show <id>                  one message in full, why it was held as spam, and its delivery history
  export --format csv|json [--bom]   every message, to stdout (--bom: a UTF-8 mark for Excel; ${toolCommand('inbox', 'export --format json', { silent: true })} > all.json)
  export --format csv --excel         the CSV for Excel: labels, the site's time zone and the separator of its language
  retry <id>                 put a failed message back in the queue; the running server sends it within seconds
  release <id>               not spam: a held message is delivered (once)
  spam <id>                  spam: hold a message; a pending one is then not sent, nor its automatic reply and webhooks
  delete <id>                delete a message with its history, and its automatic reply and webhooks not yet sent
  digest                     email the digest of what was held as spam since the last one, now
  webhooks                   the newest deliveries to the webhook and chat services, with their status
  webhooks replay <id>       send a delivery again from the start of its schedule (one waiting: now)

Reads the database at DATABASE_URL when set, otherwise forms.db in DATA_DIR (default ./data);
variables may also come from .env, or the file ENV_FILE names.
`;

/** Reads the arguments after `npm run inbox --`, answering a command or what is wrong with them. */
export function parseInboxArgs(args: readonly string[]): { ok: true; command: InboxCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  const noMore = (command: InboxCommand, extra: readonly string[]) =>
    extra.length === 0 ? { ok: true as const, command } : { ok: false as const, problem: `Unexpected argument: ${extra[0]}` };
  const id = (value: string | undefined) => (value !== undefined && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : undefined);
  switch (name) {
    case undefined:
      return { ok: false, problem: 'No command given.' };
    case 'help':
    case '--help':
    case '-h':
      return { ok: true, command: { name: 'help' } };
    case 'list': {
      if (rest[0] !== '--status') return noMore({ name: 'list' }, rest);
      const status = STATUSES.find((known) => known === rest[1]);
      if (!status) return { ok: false, problem: `--status takes one of ${STATUSES.join(', ')}.` };
      return noMore({ name: 'list', status }, rest.slice(2));
    }
    case 'show':
    case 'retry':
    case 'release':
    case 'spam':
    case 'delete': {
      const value = id(rest[0]);
      if (value === undefined) return { ok: false, problem: `${name} needs the id of a message, a whole number such as 12.` };
      return noMore({ name, id: value }, rest.slice(1));
    }
    case 'digest':
      return noMore({ name: 'digest' }, rest);
    case 'webhooks': {
      if (rest[0] !== 'replay') return noMore({ name: 'webhooks' }, rest);
      const value = id(rest[1]);
      if (value === undefined) return { ok: false, problem: 'webhooks replay needs the id of a delivery, a whole number such as 12.' };
      return noMore({ name: 'webhooks-replay', id: value }, rest.slice(2));
    }
    case 'export': {
      const option = readFormatOption(rest);
      if (!option.ok) return option;
      if (option.rest[0] === '--excel') {
        if (option.format !== 'csv') return { ok: false, problem: '--excel writes CSV: use it with --format csv.' };
        return noMore({ name: 'export', format: 'csv', bom: false, excel: true }, option.rest.slice(1));
      }
      const bom = option.rest[0] === '--bom';
      return noMore({ name: 'export', format: option.format, bom }, bom ? option.rest.slice(1) : option.rest);
    }
    default:
      return { ok: false, problem: `Unknown command: ${name}` };
  }
}

/**
 * Where a command writes: `out` is its result (stdout), `err` is for people (stderr).
 * Hint: `out` answers a promise while its stream is full (`streamOut`); an export waits for it.
 */
export type InboxIo = {
  outbox: Outbox;
  out: (text: string) => void | Promise<void>;
  err: (text: string) => void;
  now?: () => Date;
  /** The spam records, for `release` and `spam`; Akismet is told of each correction when configured. */
  spam?: SpamStore;
  akismet?: AkismetClient | undefined;
  logger?: Logger;
  /** Sends the digest of held messages now, for `digest`, and says whom it reached. */
  sendDigest?: () => Promise<DigestReport>;
  /** The webhooks' deliveries, for `webhooks`. */
  webhooks?: Pick<Deliveries, 'list' | 'replay'>;
  /** What `export --excel` is written for: the site's language, time zone and forms. */
  spreadsheet?: Spreadsheet;
  /** Where `export` and `show` read the messages' files (names and sizes): the file fields' columns, and show's list. */
  files?: ExportOptions['files'];
};

/** Runs one inbox command against the outbox and answers its exit code. */
export async function runInboxCommand(
  command: InboxCommand,
  { outbox, out, err, now = () => new Date(), spam, akismet, logger = silentLogger, sendDigest, webhooks, spreadsheet, files }: InboxIo,
): Promise<number> {
  switch (command.name) {
    case 'webhooks': {
      const list = (await webhooks?.list(50)) ?? [];
      if (list.length === 0) {
        err('No webhook deliveries yet.\n');
        return EXIT.ok;
      }
      out(
        formatTable(
          WEBHOOK_COLUMNS,
          list.map((d) => [String(d.id), shortTime(d.createdAt), d.type, d.endpoint, d.status, String(d.attempts), d.lastError ?? '']),
        ),
      );
      return EXIT.ok;
    }
    case 'webhooks-replay': {
      const replay: ReplayOutcome = webhooks ? await webhooks.replay(command.id, now()) : { kind: 'missing' };
      if (replay.kind === 'missing') {
        err(`No webhook delivery #${command.id}. See ${toolCommand('inbox', 'webhooks')}.\n`);
        return EXIT.notFound;
      }
      out(`Delivery #${command.id} ${replayed(replay)}\n`);
      return EXIT.ok;
    }
    case 'digest': {
      if (!sendDigest) throw new Error('the digest cannot be sent from here');
      const { outcome, sentTo } = await sendDigest();
      const said = DIGEST_OUTCOMES[outcome];
      (said.ok ? out : err)(typeof said.text === 'string' ? said.text : said.text(sentTo));
      return said.ok ? EXIT.ok : EXIT.failed;
    }
    case 'help':
      out(INBOX_USAGE);
      return EXIT.ok;
    case 'list': {
      const all = (await outbox.list()).filter((s) => !command.status || s.status === command.status);
      if (all.length === 0) {
        err(command.status ? `No ${command.status} messages.\n` : 'No contact messages yet.\n');
        return EXIT.ok;
      }
      out(
        formatTable(
          LIST_COLUMNS,
          all.map((s) => [String(s.id), shortTime(s.createdAt), oneLine(s.name), oneLine(s.email), s.status]),
        ),
      );
      return EXIT.ok;
    }
    case 'show': {
      const submission = await outbox.find(command.id);
      if (!submission) return notFound(command.id, err);
      // The files by name and size, as the admin lists them; the download is the admin's (or the mail's).
      const listed = files ? await files([command.id]) : [];
      out(describe(submission, await outbox.history(command.id), listed));
      return EXIT.ok;
    }
    case 'export': {
      // One chunk at a time: a pipe read slower than the database (gzip, ssh) holds one chunk, not the export.
      if (command.excel && !spreadsheet) throw new Error('the site settings for the spreadsheet export are not given');
      const options = command.excel ? { spreadsheet, files } : { byteOrderMark: command.bom, files };
      for await (const chunk of exportChunks(outbox, command.format, options)) await out(chunk);
      return EXIT.ok;
    }
    case 'retry': {
      const result = await outbox.requeue(command.id, now());
      if (!result.found) return notFound(command.id, err);
      const s = result.submission;
      switch (result.from) {
        case 'failed':
          out(`Message #${s.id} is pending again; the running server sends it within a few seconds (if SMTP_URL is set).\n`);
          return EXIT.ok;
        case 'pending':
          out(`Message #${s.id} is already pending; next attempt at ${s.nextAttemptAt ?? 'once the server runs'}.\n`);
          return EXIT.ok;
        case 'sent':
          err(`Message #${s.id} was delivered at ${s.sentAt}; there is nothing to retry.\n`);
          return EXIT.notFound;
        case 'spam':
          err(`Message #${s.id} is held as spam; ${toolCommand('inbox', `release ${s.id}`)} delivers it.\n`);
          return EXIT.notFound;
        case 'sending':
          out(`Message #${s.id} is being sent right now; nothing to retry.\n`);
          return EXIT.ok;
      }
      return EXIT.notFound;
    }
    case 'delete': {
      // The admin's "Delete" runs the same move of the state machine (outbox.remove).
      const change = await outbox.remove(command.id, now());
      if (!change.found) return notFound(command.id, err);
      if (!change.changed) {
        err(`Message #${command.id} was changed meanwhile; nothing deleted. Try again.\n`);
        return EXIT.failed;
      }
      out(
        change.deferred
          ? `Message #${command.id} is being sent right now: it is deleted with its history once that send ends.\n`
          : `Message #${command.id} is deleted with its history; its automatic reply and webhooks not yet sent never will be.\n`,
      );
      return EXIT.ok;
    }
    case 'release':
    case 'spam': {
      if (!spam) throw new Error('the spam records are not open');
      const deps = { spam, outbox, akismet, logger };
      const result = command.name === 'release' ? await releaseMessage(command.id, deps) : await markMessageAsSpam(command.id, deps);
      if (!result.found) return notFound(command.id, err);
      if (command.name === 'release') {
        if (result.changed) {
          out(
            result.to === 'sent'
              ? `Message #${command.id} is not spam. It had already been sent, so it is not sent again.\n`
              : `Message #${command.id} is not spam: it is delivered within a few seconds by the running server (if SMTP_URL is set).\n`,
          );
          return EXIT.ok;
        }
        err(`Message #${command.id} is not held as spam (it is ${result.from}); nothing to release.\n`);
        return EXIT.notFound;
      }
      if (result.changed) {
        out(
          result.deferred
            ? `Message #${command.id} is being sent right now: it is held as spam once that send ends, and never sent again.\n`
            : `Message #${command.id} is held as spam${result.from === 'pending' ? ' and will not be sent' : ''}.\n`,
        );
        return EXIT.ok;
      }
      err(`Message #${command.id} is already held as spam.\n`);
      return EXIT.ok;
    }
  }
}

// A long name or address is cut rather than pushing the status off a 100-column terminal;
// `show <id>` prints it whole.
const LIST_COLUMNS: TableColumn[] = [
  { header: 'ID' },
  { header: 'RECEIVED (UTC)' },
  { header: 'NAME', maxWidth: 24 },
  { header: 'EMAIL', maxWidth: 32 },
  { header: 'STATUS' },
];

/** What a replay did, after "Delivery #id". */
function replayed(replay: Exclude<ReplayOutcome, { kind: 'missing' }>): string {
  if (replay.kind === 'replayed') return 'is sent again within a few seconds by the running server.';
  if (replay.kind === 'due') {
    return `was waiting for its next try (due ${shortTime(replay.was)}): it is due now, and the running server sends it within a few seconds.`;
  }
  return `is being sent right now; its try ends by ${shortTime(replay.until)} (${toolCommand('inbox', 'webhooks')} shows how it went).`;
}

function notFound(id: number, err: (text: string) => void): number {
  err(`No contact message #${id}. See ${toolCommand('inbox', 'list')}.\n`);
  return EXIT.notFound;
}

function describe(s: Submission, history: DeliveryEvent[], files: readonly ListedFile[]): string {
  const status =
    s.status === 'sent'
      ? `sent at ${s.sentAt}`
      : s.status === 'failed'
        ? `failed: ${oneLine(s.lastError ?? 'unknown reason')} (${toolCommand('inbox', `retry ${s.id}`)} sends it again)`
        : s.status === 'spam'
          ? `held as spam, not sent (${toolCommand('inbox', `release ${s.id}`)} delivers it)`
          : s.attempts === 0
            ? 'pending, not attempted yet'
            : `pending, ${s.attempts} failed attempt${s.attempts === 1 ? '' : 's'}, next at ${s.nextAttemptAt}`;
  const lines = [
    `Message #${s.id}`,
    `Received: ${s.createdAt}`,
    `From:     ${oneLine(s.name)} <${oneLine(s.email)}>`,
    ...(s.form !== 'contact' ? [`Form:     ${oneLine(formTitleOf(s.form))} (${s.form})`] : []),
    `Status:   ${status}`,
    ...(s.spamReasons.length > 0 ? [`Spam:     ${s.spamReasons.map((r) => REASON_TEXT[r as SpamReason] ?? r).join('; ')}`] : []),
    '',
    printable(s.message),
    ...presentFields(s.form, s.fields).map(({ label, value }) => oneLine(`${label}: ${value}`)),
    ...(files.length > 0 ? ['Files:', ...files.map((file) => `  ${oneLine(file.name)} (${formatSize(file.size, 'en')})`)] : []),
    '',
    history.length === 0 ? 'Delivery history: none yet' : 'Delivery history:',
    ...history.map((e) => `  ${e.at}  ${e.outcome.padEnd(8)}  ${e.error ? oneLine(e.error) : ''}`.trimEnd()),
  ];
  return `${lines.join('\n')}\n`;
}

function shortTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

// What reaches the terminal is what a visitor typed: control characters (escape sequences
// above all) are shown as U+FFFD rather than obeyed by the terminal.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

function printable(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(CONTROL, '\uFFFD');
}

function oneLine(text: string): string {
  return printable(text).replace(/[\n\t\u2028\u2029]/g, ' ');
}
