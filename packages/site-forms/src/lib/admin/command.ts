import { toolCommand } from '../commands.ts';
import { EXIT } from '../cli.ts';
import { hashPassword, passwordProblem } from './password.ts';

/** What `npm run admin` prints for help, and after a usage error. */
export const ADMIN_USAGE = `Usage: ${toolCommand('admin', '<command>', { silent: true })}

Commands:
  hash-password   reads a password from standard input (typed without echo, or piped) and prints
                  the hash to put in ADMIN_PASSWORD_HASH, which turns the owner's inbox at /admin on
  add-user <email> --role owner|editor|reader [--forms contact,quote] [--name "…"]
                  invites a person and prints their link on PUBLIC_URL alone on stdout: it works
                  once, for 72 hours (without --forms: every form; newsletter is the local list)
  users           the people (role, forms, password, passkeys, last sign-in), then the invitations
                  not yet accepted
  remove-user <email>
                  removes a person and ends their sessions at once (never the last owner)
  reset-link <email>
                  prints a sign-in link on PUBLIC_URL that sets a new password, once, for an hour:
                  the way back in for a person who lost their password or passkey
  remove-passkeys <email>|--first-owner
                  removes every passkey of a person and ends their sessions: the way back in for
                  the owner of ADMIN_PASSWORD_HASH (--first-owner) who lost their passkeys
  api-key <command>
                  the keys of /api/v1 (api-key help)

  Example: ${toolCommand('admin', 'hash-password', { silent: true })}
           printf '%s' "$PASSWORD" | ${toolCommand('admin', 'hash-password', { silent: true })}
           ${toolCommand('admin', 'add-user ada@example.org --role owner', { silent: true })}
`;

/** The commands of `npm run admin`, as parsed from its arguments. */
export type AdminCommand = { name: 'help' } | { name: 'hash-password' };

/** Reads the arguments after `npm run admin --`, answering a command or what is wrong with them. */
export function parseAdminArgs(args: readonly string[]): { ok: true; command: AdminCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  if (name === undefined) return { ok: false, problem: 'No command given.' };
  if (rest.length > 0) return { ok: false, problem: `Unexpected argument: ${rest[0]}` };
  if (name === 'help' || name === '--help' || name === '-h') return { ok: true, command: { name: 'help' } };
  if (name === 'hash-password') return { ok: true, command: { name } };
  return { ok: false, problem: `Unknown command: ${name}` };
}

/** Where the command reads the password and writes: the hash to `out`, everything for people to `err`. */
export type AdminIo = {
  readPassword: () => Promise<string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  hash?: (password: string) => Promise<string>;
};

/** Runs one admin command and answers its exit code. */
export async function runAdminCommand(command: AdminCommand, { readPassword, out, err, hash = hashPassword }: AdminIo): Promise<number> {
  if (command.name === 'help') {
    out(ADMIN_USAGE);
    return EXIT.ok;
  }
  const password = await readPassword();
  if (password === undefined) {
    err('No password given: type it when asked, or pipe it in.\n');
    return EXIT.usage;
  }
  const problem = passwordProblem(password);
  if (problem) {
    err(`${problem}\n`);
    return EXIT.usage;
  }
  out(`${await hash(password)}\n`);
  err('Put this line in ADMIN_PASSWORD_HASH (in .env, in single quotes: the hash contains $), then restart the server.\n');
  return EXIT.ok;
}

/**
 * The password in what was piped to standard input: everything up to the first line
 * break, so `echo` and `printf` both work; `undefined` when nothing came.
 */
export function passwordFromInput(input: string): string | undefined {
  const line = input.split(/\r?\n/, 1)[0] ?? '';
  return line === '' ? undefined : line;
}
