import { toolCommand } from '../commands.ts';
import { EXIT, readFormatOption } from '../cli.ts';
import { toCsv } from '../csv.ts';
import { formatTable } from '../text-table.ts';
import type { Subscriber, SubscriberList } from './local.ts';
import type { ErasureResult } from './erasure.ts';
import type { Signups } from './signups.ts';

export type { Subscriber } from './local.ts';

/** The commands of `npm run subscribers`, as parsed from its arguments. */
export type SubscribersCommand =
  | { name: 'help' }
  | { name: 'export'; format: 'csv' | 'json'; bom: boolean }
  | { name: 'waiting' }
  | { name: 'retry'; id: number }
  | { name: 'erase'; email: string };

/** What `npm run subscribers` prints for help, and after a usage error. */
export const SUBSCRIBERS_USAGE = `Usage: ${toolCommand('subscribers', '<command>')}

Commands:
  export --format csv|json   every subscriber of the local newsletter list, oldest first, to stdout
                             (${toolCommand('subscribers', 'export --format csv', { silent: true })} > subscribers.csv)
  waiting                    signups the provider could not take at once: waiting to be tried again, or given up
  retry <id>                 try a given-up signup again, for another day
  erase <email>              erase an address everywhere it is kept: the list, its consent record, waiting
                             signups, webhook events not yet sent, drafts, and its count in the limits (Redis)

The CSV has the columns "Email Address" and "Created", which Mailchimp's import
(Audience > Add contacts > Import contacts > Upload a file) recognises, then each subscriber's
record of consent: its status, when they signed up and confirmed, the text they agreed to, its
version, the page and the client's network.
Reads the database at DATABASE_URL when set, otherwise forms.db in DATA_DIR (default ./data);
variables may also come from .env, or the file ENV_FILE names.
`;

/** Reads the arguments after `npm run subscribers --`, answering a command or what is wrong with them. */
export function parseSubscribersArgs(args: readonly string[]): { ok: true; command: SubscribersCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  switch (name) {
    case undefined:
      return { ok: false, problem: 'No command given.' };
    case 'help':
    case '--help':
    case '-h':
      return { ok: true, command: { name: 'help' } };
    case 'export': {
      const option = readFormatOption(rest);
      if (!option.ok) return option;
      const bom = option.rest[0] === '--bom';
      const more = bom ? option.rest.slice(1) : option.rest;
      if (more.length > 0) return { ok: false, problem: `Unexpected argument: ${more[0]}` };
      return { ok: true, command: { name: 'export', format: option.format, bom } };
    }
    case 'waiting':
      return rest.length > 0 ? { ok: false, problem: `Unexpected argument: ${rest[0]}` } : { ok: true, command: { name: 'waiting' } };
    case 'retry': {
      const id = rest[0] !== undefined && /^[1-9]\d{0,15}$/.test(rest[0]) ? Number(rest[0]) : undefined;
      if (id === undefined) return { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' };
      if (rest.length > 1) return { ok: false, problem: `Unexpected argument: ${rest[1]}` };
      return { ok: true, command: { name: 'retry', id } };
    }
    case 'erase': {
      const email = rest[0]?.trim();
      if (!email?.includes('@')) return { ok: false, problem: 'erase needs the address to erase, such as ada@example.org.' };
      if (rest.length > 1) return { ok: false, problem: `Unexpected argument: ${rest[1]}` };
      return { ok: true, command: { name: 'erase', email } };
    }
    default:
      return { ok: false, problem: `Unknown command: ${name}` };
  }
}

/**
 * The subscribers as a CSV file for Mailchimp's import: RFC 4180, CRLF line ends.
 * Hint: "Email Address" is the header Mailchimp maps to the address without being asked.
 */
export function subscribersToCsv(subscribers: readonly Subscriber[], { byteOrderMark = false } = {}): string {
  // The record of consent (double opt-in) in columns of its own, only when there is one.
  if (subscribers.some((s) => s.consent)) {
    return toCsv(
      ['Email Address', 'Created', 'Consent', 'Signed Up', 'Confirmed', 'Consent Text', 'Consent Version', 'Consent Page', 'Client'],
      subscribers.map((s) => ({
        'Email Address': s.email,
        Created: s.created,
        Consent: s.consent?.status ?? '',
        'Signed Up': s.consent?.signedUpAt ?? '',
        Confirmed: s.consent?.confirmedAt ?? '',
        'Consent Text': s.consent?.text ?? '',
        'Consent Version': s.consent?.version ?? '',
        'Consent Page': s.consent?.page ?? '',
        Client: s.consent?.client ?? '',
      })),
      { dateColumns: ['Created', 'Signed Up', 'Confirmed'], byteOrderMark },
    );
  }
  return toCsv(
    ['Email Address', 'Created'],
    subscribers.map((s) => ({ 'Email Address': s.email, Created: s.created })),
    { dateColumns: ['Created'], byteOrderMark },
  );
}

/** Where a command writes: `out` is its result (stdout), `err` is for people (stderr). */
export type SubscribersIo = {
  subscribers: SubscriberList;
  /** Signups waiting for the provider, for `waiting` and `retry`. */
  signups?: Pick<Signups, 'pending' | 'retry'>;
  /** Erases an address everywhere (newsletter/erasure.ts, as the admin's "Delete"), for `erase`. */
  erase?: (email: string) => Promise<ErasureResult>;
  out: (text: string) => void;
  err: (text: string) => void;
};

/** Runs one subscribers command and answers its exit code. */
export async function runSubscribersCommand(command: SubscribersCommand, { subscribers: list, signups, erase, out, err }: SubscribersIo): Promise<number> {
  switch (command.name) {
    case 'erase': {
      if (!erase) throw new Error('the erasure is not wired');
      const erased = await erase(command.email);
      if (erased.redisUnreachable !== undefined) {
        err(
          `${erased.found ? `${command.email} is erased from the database, but not` : `Nothing of ${command.email} was found in the database, and nothing`} from Redis, which could not be reached (${erased.redisUnreachable}): its count there lasts 24 hours at most. Run erase again once Redis is back.\n`,
        );
        return EXIT.failed;
      }
      if (!erased.found) {
        err(`Nothing of ${command.email} was found; nothing erased.\n`);
        return EXIT.notFound;
      }
      out(`${command.email} is erased: the list, its consent, its signups, events and drafts, and its limit count.\n`);
      return EXIT.ok;
    }
    case 'waiting': {
      const rows = (await signups?.pending(200)) ?? [];
      if (rows.length === 0) {
        err('No signup is waiting for the provider.\n');
        return EXIT.ok;
      }
      out(
        formatTable(
          [
            { header: 'ID' },
            { header: 'SINCE (UTC)' },
            { header: 'EMAIL', maxWidth: 32 },
            { header: 'PROVIDER' },
            { header: 'STATUS' },
            { header: 'TRIES' },
            { header: 'LAST ERROR', maxWidth: 40 },
          ],
          rows.map((s) => [String(s.id), s.createdAt.slice(0, 16).replace('T', ' '), s.email, s.provider, s.status, String(s.attempts), s.lastError ?? '']),
        ),
      );
      return EXIT.ok;
    }
    case 'retry': {
      if (!(await signups?.retry(command.id))) {
        err(`Signup #${command.id} is not there, or not given up; nothing to retry.\n`);
        return EXIT.notFound;
      }
      out(`Signup #${command.id} is tried again by the running server within a minute.\n`);
      return EXIT.ok;
    }
    case 'help':
      out(SUBSCRIBERS_USAGE);
      return EXIT.ok;
    case 'export': {
      const subscribers = await list.list();
      out(command.format === 'json' ? `${JSON.stringify(subscribers, null, 2)}\n` : subscribersToCsv(subscribers, { byteOrderMark: command.bom }));
      err(
        subscribers.length === 0
          ? 'No subscribers in the local database yet.\n'
          : `Exported ${subscribers.length} subscriber${subscribers.length === 1 ? '' : 's'}.\n`,
      );
      return EXIT.ok;
    }
  }
}
