/**
 * The site owner's inbox on the command line: `npm run inbox -- list | show <id> |
 * export --format csv|json | retry <id>`. It opens the same store as the server, which may be
 * running (SQLite's WAL, or PostgreSQL, lets both work at once).
 */
import { INBOX_USAGE, parseInboxArgs, runInboxCommand } from '../lib/contact/inbox.ts';
import { runTool } from './run.ts';

await runTool({
  usage: INBOX_USAGE,
  parse: parseInboxArgs,
  run: (command, { store, out, err }) => runInboxCommand(command, { outbox: store.outbox, out, err }),
});
