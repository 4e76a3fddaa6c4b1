import { KEY_NAME, KEY_SCOPES, type KeyScope } from '../access/permissions.ts';
import { describeKeyForms } from '../admin/actions/keys.ts';
import type { AuditLog } from '../admin/audit.ts';
import { EXIT } from '../cli.ts';
import { toolCommand } from '../commands.ts';
import type { ApiKeys } from './keys.ts';

// `npm run admin -- api-key create|revoke|list` (issue 42, plan section 9): the operator's shell
// makes and revokes the keys of /api/v1. Decision 0283.

/** What `npm run admin -- api-key` prints for help, and after a usage error. */
export const API_KEY_USAGE = `Usage: ${toolCommand('admin', 'api-key <command>', { silent: true })}

Commands:
  create --name <name> --scope read|write [--forms contact,quote]
                  makes a key for /api/v1 and prints it alone on the last line: it is shown once,
                  only its prefix and a hash are kept (without --forms: every form; newsletter is
                  the local subscriber list)
  revoke <name>   revokes the live key of that name at once, on every instance
  list            the keys, live and revoked: name, prefix, scope, forms, created, last used

  Example: ${toolCommand('admin', 'api-key create --name ci-export --scope read --forms contact', { silent: true })}
`;

/** The api-key commands, as parsed from the arguments after `api-key`. */
export type ApiKeyCommand =
  | { name: 'help' }
  | { name: 'create'; keyName: string; scope: KeyScope; forms: string[] | null }
  | { name: 'revoke'; keyName: string }
  | { name: 'list' };

/** A form's name as forms.config.ts allows it (`newsletter` for the list). */
const FORM_NAME = /^[a-z][a-z0-9-]*$/;

/** Reads the arguments after `npm run admin -- api-key`, answering a command or what is wrong with them. */
export function parseApiKeyArgs(args: readonly string[]): { ok: true; command: ApiKeyCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  if (name === undefined) return { ok: false, problem: 'No api-key command given.' };
  if (name === 'help' || name === '--help' || name === '-h') return { ok: true, command: { name: 'help' } };
  if (name === 'list') return rest.length > 0 ? { ok: false, problem: `Unexpected argument: ${rest[0]}` } : { ok: true, command: { name } };
  if (name === 'revoke') {
    if (rest.length !== 1) return { ok: false, problem: 'revoke needs one key name.' };
    return { ok: true, command: { name, keyName: rest[0]! } };
  }
  if (name !== 'create') return { ok: false, problem: `Unknown api-key command: ${name}` };
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const match = /^--(name|scope|forms)(?:=(.*))?$/.exec(arg);
    if (!match) return { ok: false, problem: `Unexpected argument: ${arg}` };
    const value = match[2] ?? rest[++i];
    if (value === undefined) return { ok: false, problem: `--${match[1]} needs a value.` };
    if (Object.hasOwn(options, match[1]!)) return { ok: false, problem: `--${match[1]} is given twice.` };
    options[match[1]!] = value;
  }
  if (!options.name || !KEY_NAME.test(options.name))
    return { ok: false, problem: 'create needs --name: letters, digits, spaces, dots, dashes or underscores, at most 64.' };
  if (!(KEY_SCOPES as readonly string[]).includes(options.scope ?? '')) return { ok: false, problem: 'create needs --scope read or --scope write.' };
  let forms: string[] | null = null;
  if (options.forms !== undefined) {
    forms = [...new Set(options.forms.split(',').map((form) => form.trim()))];
    const wrong = forms.find((form) => !FORM_NAME.test(form));
    if (wrong !== undefined) return { ok: false, problem: `--forms: "${wrong}" is no form name.` };
  }
  return { ok: true, command: { name: 'create', keyName: options.name, scope: options.scope as KeyScope, forms } };
}

/** Where the command writes: results to `out`, everything for people to `err`; what it changes to the admin's audit log. */
export type ApiKeyIo = {
  keys: ApiKeys;
  audit: Pick<AuditLog, 'record'>;
  out: (text: string) => void | Promise<void>;
  err: (text: string) => void;
  now?: () => Date;
};

/** Runs one api-key command and answers its exit code. */
export async function runApiKeyCommand(command: ApiKeyCommand, { keys, audit, out, err, now = () => new Date() }: ApiKeyIo): Promise<number> {
  // As the admin's posts record them (admin/actions/keys.ts), by the command line: it has no address to hash.
  const record = (action: 'key-created' | 'key-revoked', detail: string) =>
    audit.record({ at: now().toISOString(), action, detail, client: 'command line', actor: 'cli', actorName: 'the command line' });
  if (command.name === 'help') {
    await out(API_KEY_USAGE);
    return EXIT.ok;
  }
  if (command.name === 'create') {
    const made = await keys.create({ name: command.keyName, scope: command.scope, forms: command.forms, createdBy: 'cli' }, now());
    if (!made.ok) {
      err(`A live key is already named "${command.keyName}": revoke it first, or choose another name.\n`);
      return EXIT.failed;
    }
    err(
      `Made the ${command.scope} key "${command.keyName}" for ${command.forms === null ? 'every form' : command.forms.join(', ') || 'no form'}. ` +
        'Copy it now: it is shown only this once. Programs send it as Authorization: Bearer <key>.\n',
    );
    await record('key-created', `${command.keyName} (${made.record.prefix}…), ${command.scope}, ${describeKeyForms(command.forms)}`);
    await out(`${made.key}\n`);
    return EXIT.ok;
  }
  if (command.name === 'revoke') {
    // The prefix names the key in the audit log, as the admin's entry does.
    const live = (await keys.list()).find((key) => key.name === command.keyName && !key.revokedAt);
    if (await keys.revoke(command.keyName, now())) {
      await record('key-revoked', `${command.keyName}${live ? ` (${live.prefix}…)` : ''}`);
      err(`Revoked the key "${command.keyName}": its next request is refused.\n`);
      return EXIT.ok;
    }
    err(`No live key is named "${command.keyName}".\n`);
    return EXIT.notFound;
  }
  const list = await keys.list();
  if (list.length === 0) err('No API keys yet.\n');
  for (const key of list) {
    const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : `last used ${key.lastUsedAt?.toISOString() ?? 'never'}`;
    await out(
      `${key.name}\t${key.prefix}…\t${key.scope}\t${key.forms === null ? 'every form' : key.forms.join(',')}\tcreated ${key.createdAt.toISOString()}\t${state}\n`,
    );
  }
  return EXIT.ok;
}
