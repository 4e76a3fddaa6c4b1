/**
 * The owner's admin tools: `npm run --silent admin -- hash-password` prints the hash that
 * turns the inbox at /admin on; it needs no database and no configuration. `add-user`, `users`,
 * `remove-user`, `reset-link`, `remove-passkeys` (lib/people/command.ts) and `api-key …` (lib/api/command.ts) work
 * on the server's store.
 */
import { ADMIN_USAGE, parseAdminArgs, passwordFromInput, runAdminCommand } from '../lib/admin/command.ts';
import { EXIT } from '../lib/cli.ts';
import { PEOPLE_COMMANDS } from '../lib/people/command.ts';

const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

// `api-key …` needs the store (issue 42); hash-password needs none, and stays as it was.
if (process.argv[2] === 'api-key') {
  process.argv.splice(2, 1);
  const { runTool } = await import('./run.ts');
  const { API_KEY_USAGE, parseApiKeyArgs, runApiKeyCommand } = await import('../lib/api/command.ts');
  const { createApiKeys } = await import('../lib/api/keys.ts');
  const { createAuditLog } = await import('../lib/admin/audit.ts');
  await runTool({
    usage: API_KEY_USAGE,
    parse: parseApiKeyArgs,
    run: (command, { store, out, err }) => runApiKeyCommand(command, { keys: createApiKeys(store.sql), audit: createAuditLog(store.sql), out, err }),
  });
} else if ((PEOPLE_COMMANDS as readonly string[]).includes(process.argv[2] ?? '')) {
  // The team (issue 42 item 1): the store, as the server's; the links point to PUBLIC_URL.
  const { runTool } = await import('./run.ts');
  const { parsePeopleArgs, runPeopleCommand } = await import('../lib/people/command.ts');
  const { createPeopleStore } = await import('../lib/people/store.ts');
  const { createLinks } = await import('../lib/people/links.ts');
  const { createAuditLog } = await import('../lib/admin/audit.ts');
  const { admin } = await import('../lib/config/owner-inbox.ts');
  const { origins } = await import('../lib/config/origins.ts');
  const { smtp } = await import('../lib/config/smtp.ts');
  const { contactForm, ownerForms } = await import('../lib/forms/registry.ts');
  await runTool({
    usage: ADMIN_USAGE,
    parse: parsePeopleArgs,
    run: (command, { store, out, err }) => {
      if (command.name === 'help') return Promise.resolve(EXIT.ok);
      // The first owner's configuration, as the server reads it: the people store makes them from it.
      const env = { passwordHash: admin.read(process.env).config.admin?.hashText, contactTo: smtp.read(process.env).config.smtp?.to };
      const site = origins.read({ PUBLIC_URL: process.env.PUBLIC_URL });
      return runPeopleCommand(command, {
        sql: store.sql,
        people: createPeopleStore(store.sql, env),
        links: createLinks(store.sql, env),
        audit: createAuditLog(store.sql),
        forms: [contactForm, ...ownerForms].map((form) => form.name),
        publicUrl: site.config.publicUrl,
        publicUrlProblem: site.problems[0],
        out,
        err,
      });
    },
  });
} else {
  const parsed = parseAdminArgs(process.argv.slice(2));
  if (!parsed.ok) {
    err(`${parsed.problem}\n\n${ADMIN_USAGE}`);
    process.exit(EXIT.usage);
  }
  process.exitCode = await runAdminCommand(parsed.command, { readPassword, out, err });
}

/** On a terminal: asks twice, without echo. From a pipe: reads the first line. */
async function readPassword(): Promise<string | undefined> {
  if (!process.stdin.isTTY) {
    let input = '';
    for await (const chunk of process.stdin.setEncoding('utf8')) input += chunk;
    return passwordFromInput(input);
  }
  const first = await askHidden('Password: ');
  if (first === undefined || first === '') return undefined;
  const second = await askHidden('Again: ');
  if (second !== first) {
    err('The two passwords differ.\n');
    process.exit(EXIT.usage);
  }
  return first;
}

/** Reads one line from the terminal in raw mode, so what is typed is never shown. */
function askHidden(prompt: string): Promise<string | undefined> {
  const stdin = process.stdin;
  // Raw mode before the prompt: whatever is typed (or pasted) once the prompt shows is never echoed.
  stdin.setRawMode(true);
  err(prompt);
  stdin.setEncoding('utf8');
  stdin.resume();
  let typed = '';
  return new Promise((resolve) => {
    const done = (value: string | undefined) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      err('\n');
      resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done(typed);
        // Ctrl-C and Ctrl-D: raw mode turns off the terminal's own handling of them.
        if (char === '\u0003') {
          stdin.setRawMode(false);
          err('\n');
          process.exit(130);
        }
        if (char === '\u0004') return done(typed === '' ? undefined : typed);
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else if (char >= ' ') typed += char;
      }
    };
    stdin.on('data', onData);
  });
}
