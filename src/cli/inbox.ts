/**
 * The site owner's inbox on the command line: `npm run inbox -- list | show <id> |
 * export --format csv|json | retry <id>`. It opens the same database as the server, which
 * may be running (SQLite's WAL lets both work at once).
 */
import { INBOX_USAGE, parseInboxArgs, runInboxCommand } from '../lib/contact/inbox.ts';
import { createOutbox } from '../lib/contact/outbox.ts';
import { runTool } from './run.ts';

runTool({
  usage: INBOX_USAGE,
  parse: parseInboxArgs,
  run: (command, { db, out, err }) => runInboxCommand(command, { outbox: createOutbox(db), out, err }),
});
