import { THE_LIST } from '../access/permissions.ts';
import { EXIT } from '../cli.ts';
import type { Sql } from '../sql/sql.ts';
import { formatTable } from '../text-table.ts';
import { linkUrl } from './link-mail.ts';
import type { Links } from './links.ts';
import { normalEmail, type PeopleStore, type Person, type Role, ROLES } from './store.ts';

// The team on the command line (issue 42 item 1, plan section 9): `npm run admin -- add-user |
// users | remove-user | reset-link | remove-passkeys`. The operator's shell is the owner's: it invites anyone, the
// first owner too on an install without ADMIN_PASSWORD_HASH, and gets back in a person who lost
// their passkey. Every change is audited with the actor `cli`. Decision 0292.

/** The commands of `npm run admin` that this module reads and runs. */
export const PEOPLE_COMMANDS = ['add-user', 'users', 'remove-user', 'reset-link', 'remove-passkeys'] as const;

/** The people commands, as parsed from the arguments after `npm run admin --`. */
export type PeopleCommand =
  | { name: 'help' }
  | { name: 'add-user'; email: string; role: Role; forms: string[] | null; personName: string }
  | { name: 'users' }
  | { name: 'remove-user'; email: string }
  | { name: 'reset-link'; email: string }
  /** `email` undefined: `--first-owner`, the owner of ADMIN_PASSWORD_HASH, who may have no address here. */
  | { name: 'remove-passkeys'; email: string | undefined };

/** A form's name as forms.config.ts allows it (`newsletter` for the list). */
const FORM_NAME = /^[a-z][a-z0-9-]*$/;

/** An email as the admin's forms take it: one address, at most 254 characters, with no spaces. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A person's name: at most this many characters, as the admin's forms allow. */
const MAX_NAME = 100;

/** The audit entry's `client`: the command line has no address to hash. */
const CLI_CLIENT = 'command line';

function emailArg(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const email = normalEmail(value);
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}

/** Reads the arguments after `npm run admin --` (the command's name first), answering a command or what is wrong with them. */
export function parsePeopleArgs(args: readonly string[]): { ok: true; command: PeopleCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  if (name === 'users') return rest.length > 0 ? { ok: false, problem: `Unexpected argument: ${rest[0]}` } : { ok: true, command: { name } };
  if (name === 'remove-passkeys' && rest.length === 1 && rest[0] === '--first-owner') return { ok: true, command: { name, email: undefined } };
  if (name === 'remove-user' || name === 'reset-link' || name === 'remove-passkeys') {
    if (rest.length !== 1) return { ok: false, problem: `${name} needs one email address${name === 'remove-passkeys' ? ', or --first-owner' : ''}.` };
    const email = emailArg(rest[0]);
    if (!email) return { ok: false, problem: `${name}: "${rest[0]}" is no email address.` };
    return { ok: true, command: { name, email } };
  }
  if (name !== 'add-user') return { ok: false, problem: `Unknown command: ${name ?? ''}` };
  let address: string | undefined;
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const match = /^--(role|forms|name)(?:=(.*))?$/.exec(arg);
    if (!match) {
      if (arg.startsWith('-') || address !== undefined) return { ok: false, problem: `Unexpected argument: ${arg}` };
      address = arg;
      continue;
    }
    const value = match[2] ?? rest[++i];
    if (value === undefined) return { ok: false, problem: `--${match[1]} needs a value.` };
    if (Object.hasOwn(options, match[1]!)) return { ok: false, problem: `--${match[1]} is given twice.` };
    options[match[1]!] = value;
  }
  if (address === undefined) return { ok: false, problem: 'add-user needs the email address of the person to add.' };
  const email = emailArg(address);
  if (!email) return { ok: false, problem: `add-user: "${address}" is no email address.` };
  const role = ROLES.find((known) => known === options.role);
  if (!role) return { ok: false, problem: 'add-user needs --role owner, editor or reader.' };
  let forms: string[] | null = null;
  if (options.forms !== undefined) {
    if (role === 'owner') return { ok: false, problem: 'An owner sees every form: --forms is for an editor or a reader.' };
    forms = [...new Set(options.forms.split(',').map((form) => form.trim()))].filter(Boolean).sort();
    const wrong = forms.find((form) => !FORM_NAME.test(form));
    if (wrong !== undefined) return { ok: false, problem: `--forms: "${wrong}" is no form name.` };
  }
  const personName = (options.name ?? '').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, ' ').trim();
  if ([...personName].length > MAX_NAME) return { ok: false, problem: `--name has at most ${MAX_NAME} characters.` };
  return { ok: true, command: { name: 'add-user', email, role, forms, personName } };
}

/** What the commands record, as admin/audit.ts `AuditLog` takes it (that folder comes after this one: its type is not imported). */
export type PeopleAudit = {
  record(entry: {
    at: string;
    action: 'invite' | 'remove-person' | 'send-link' | 'passkey-removed';
    detail: string;
    client: string;
    actor: string;
    actorName: string;
  }): Promise<void>;
};

/** What the commands work on and where they write: results to `out`, everything for people to `err`. */
export type PeopleIo = {
  sql: Sql;
  people: PeopleStore;
  links: Links;
  audit: PeopleAudit;
  /** The site's forms as the tools know them (`contact` and the owner's); `newsletter`, the local list, is added here. */
  forms: readonly string[];
  /** PUBLIC_URL as written: the links point there. */
  publicUrl: string | undefined;
  /** The problem with PUBLIC_URL, when it is set but no bare origin (config/origins.ts). */
  publicUrlProblem?: string | undefined;
  out: (text: string) => void | Promise<void>;
  err: (text: string) => void;
  now?: () => Date;
};

/** Runs one people command and answers its exit code. The usage is the caller's (it prints it for `help`). */
export async function runPeopleCommand(command: Exclude<PeopleCommand, { name: 'help' }>, io: PeopleIo): Promise<number> {
  const { people, links, out, err, now = () => new Date() } = io;
  const record = (action: 'invite' | 'remove-person' | 'send-link' | 'passkey-removed', detail: string) =>
    io.audit.record({ at: now().toISOString(), action, detail, client: CLI_CLIENT, actor: 'cli', actorName: 'the command line' });
  // The first owner from ADMIN_PASSWORD_HASH, as every instance makes them: the list and the last-owner rule count them.
  await people.ensureEnvOwner(now());

  if (command.name === 'users') return listPeople(io);

  if (command.name === 'remove-user') {
    const person = await people.findByEmail(command.email);
    if (!person) {
      err(`Nobody here has the address ${command.email}.\n`);
      return EXIT.notFound;
    }
    const removed = await people.remove(person.id, now());
    if (!removed.ok) {
      err(
        removed.reason === 'last-owner'
          ? `${command.email} is the last owner: make someone else an owner first (add-user … --role owner).\n`
          : `Nobody here has the address ${command.email}.\n`,
      );
      return EXIT.failed;
    }
    await record('remove-person', nameOf(person));
    err(`Removed ${nameOf(person)}: their sessions, passkeys and open links ended with them.\n`);
    return EXIT.ok;
  }

  if (command.name === 'remove-passkeys') {
    const person = command.email === undefined ? await people.envOwner() : await people.findByEmail(command.email);
    const removed = person && (await people.removePasskeys(person.id));
    if (!person || removed === undefined) {
      err(command.email === undefined ? 'This site has no owner of ADMIN_PASSWORD_HASH.\n' : `Nobody here has the address ${command.email}.\n`);
      return EXIT.notFound;
    }
    await record('passkey-removed', `every passkey of ${nameOf(person)} (${removed})`);
    const back =
      person.origin === 'env'
        ? 'they sign in with the password of ADMIN_PASSWORD_HASH'
        : person.passwordHash
          ? 'they sign in with their password'
          : 'they have no password: give them a link (reset-link)';
    err(
      `Removed ${removed} passkey${removed === 1 ? '' : 's'} of ${nameOf(person)} and ended their sessions: ${back}; ` +
        'where ADMIN_REQUIRE_PASSKEY=true, that opens only their account page, to add a new passkey.\n',
    );
    return EXIT.ok;
  }

  // add-user and reset-link print a link: it must point to the site.
  const origin = publicOrigin(io);
  if (origin === undefined) return EXIT.usage;

  if (command.name === 'reset-link') {
    const person = await people.findByEmail(command.email);
    if (!person) {
      err(`Nobody here has the address ${command.email}.\n`);
      return EXIT.notFound;
    }
    if (person.origin === 'env') {
      err(
        'This owner signs in with ADMIN_PASSWORD_HASH: change their password there (npm run admin -- hash-password); ' +
          'lost passkeys: remove-passkeys --first-owner.\n',
      );
      return EXIT.failed;
    }
    const made = await links.reset(person, 'cli', now());
    if (!made) {
      err(`${nameOf(person)} has no email address to make a link for.\n`);
      return EXIT.failed;
    }
    await record('send-link', nameOf(person));
    err(
      `A sign-in link for ${nameOf(person)}: it sets a new password and signs them in, once, until ${made.link.expiresAt.toISOString()}. ` +
        'Give it to them yourself; any older link of theirs no longer works.\n',
    );
    await out(`${linkUrl(origin, made.token)}\n`);
    return EXIT.ok;
  }

  const known = [...new Set([...io.forms, THE_LIST])];
  const unknown = command.forms?.find((form) => !known.includes(form));
  if (unknown !== undefined) {
    err(`No form is named "${unknown}": the forms are ${known.join(', ')}.\n`);
    return EXIT.usage;
  }
  if (await people.findByEmail(command.email)) {
    err(`${command.email} is already a person here: change them in the admin (/admin/people), or remove-user first.\n`);
    return EXIT.failed;
  }
  const made = await links.invite({ email: command.email, role: command.role, forms: command.forms, createdBy: 'cli' }, now());
  if (!('token' in made)) {
    err(`${command.email} is already a person here.\n`);
    return EXIT.failed;
  }
  const who = command.personName ? `${command.email} (${command.personName})` : command.email;
  await record('invite', `${who} as ${command.role} (${describeForms(command.forms)})`);
  err(
    `Invited ${who} as ${command.role} for ${describeForms(command.forms)}. Give them this link: it works once, ` +
      `until ${made.link.expiresAt.toISOString()}; they choose their name and password on its page.\n`,
  );
  await out(`${linkUrl(origin, made.token)}\n`);
  return EXIT.ok;
}

/** The site's origin from PUBLIC_URL, or `undefined` after saying why there is none. */
function publicOrigin({ publicUrl, publicUrlProblem, err }: PeopleIo): string | undefined {
  if (publicUrlProblem) {
    err(`${publicUrlProblem}\n`);
    return undefined;
  }
  if (!publicUrl) {
    err('Set PUBLIC_URL to the site’s address (such as https://www.example.com): the link printed points there.\n');
    return undefined;
  }
  return publicUrl;
}

/** `users`: the people, then the invitations not yet accepted. */
async function listPeople({ sql, people, links, out, err, now = () => new Date() }: PeopleIo): Promise<number> {
  const everyone = await people.list();
  const counts = new Map(
    (await sql.all<{ user_id: number | string; n: number | string }>('SELECT user_id, count(*) AS n FROM admin_passkeys GROUP BY user_id')).map((row) => [
      Number(row.user_id),
      Number(row.n),
    ]),
  );
  if (everyone.length === 0) err('Nobody yet: add the first owner with add-user <email> --role owner.\n');
  else
    await out(
      formatTable(
        [
          { header: 'EMAIL' },
          { header: 'NAME', maxWidth: 30 },
          { header: 'ROLE' },
          { header: 'FORMS' },
          { header: 'PASSWORD' },
          { header: 'PASSKEYS' },
          { header: 'LAST SIGN-IN' },
        ],
        everyone.map((person) => [
          person.email ?? '(none)',
          person.name,
          person.role,
          describeList(person.forms),
          person.origin === 'env' ? 'ADMIN_PASSWORD_HASH' : person.passwordHash ? 'yes' : 'no',
          String(counts.get(person.id) ?? 0),
          person.lastSignInAt?.toISOString() ?? 'never',
        ]),
      ),
    );
  const invitations = (await links.open(now())).filter((link) => link.kind === 'invite');
  if (invitations.length > 0) {
    await out(
      `\nPending invitations:\n${formatTable(
        [{ header: 'EMAIL' }, { header: 'ROLE' }, { header: 'FORMS' }, { header: 'EXPIRES' }],
        invitations.map((link) => [link.email, link.role ?? '', describeList(link.forms), link.expiresAt.toISOString()]),
      )}`,
    );
  }
  return EXIT.ok;
}

function describeList(forms: readonly string[] | null): string {
  if (forms === null) return 'every form';
  return forms.length === 0 ? 'no form' : forms.join(',');
}

function describeForms(forms: readonly string[] | null): string {
  if (forms === null) return 'every form';
  if (forms.length === 0) return 'no form';
  return forms.map((form) => (form === THE_LIST ? 'the newsletter list' : form)).join(', ');
}

function nameOf(person: Pick<Person, 'name' | 'email'>): string {
  if (!person.email) return person.name;
  return person.name ? `${person.name} <${person.email}>` : person.email;
}
