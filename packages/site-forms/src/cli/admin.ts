/**
 * The owner's admin tools: `npm run --silent admin -- hash-password` prints the hash that
 * turns the inbox at /admin on. It needs no database and no configuration.
 */
import { ADMIN_USAGE, parseAdminArgs, passwordFromInput, runAdminCommand } from '../lib/admin/command.ts';
import { EXIT } from '../lib/cli.ts';

const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

// `api-key …` needs the store (issue 42); hash-password needs none, and stays as it was.
if (process.argv[2] === 'api-key') {
  process.argv.splice(2, 1);
  const { runTool } = await import('./run.ts');
  const { API_KEY_USAGE, parseApiKeyArgs, runApiKeyCommand } = await import('../lib/api/command.ts');
  const { createApiKeys } = await import('../lib/api/keys.ts');
  await runTool({
    usage: API_KEY_USAGE,
    parse: parseApiKeyArgs,
    run: (command, { store, out, err }) => runApiKeyCommand(command, { keys: createApiKeys(store.sql), out, err }),
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
