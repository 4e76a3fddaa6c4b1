/**
 * The site owner's inbox on the command line: `npm run inbox -- list | show <id> |
 * export --format csv|json | retry <id> | release <id> | spam <id>`. It opens the same store
 * as the server, which may be running (SQLite's WAL, or PostgreSQL, lets both work at once).
 */
import { readConfig } from '../lib/config.ts';
import { spam as spamConfig } from '../lib/config/spam.ts';
import { INBOX_USAGE, parseInboxArgs, runInboxCommand } from '../lib/contact/inbox.ts';
import { createLogger } from '../lib/log.ts';
import { createAkismetClient } from '../lib/spam/akismet.ts';
import { createSpamStore } from '../lib/spam/store.ts';
import { runTool } from './run.ts';

await runTool({
  usage: INBOX_USAGE,
  parse: parseInboxArgs,
  run: (command, { store, out, err }) => {
    // Akismet is told of the owner's corrections when the server would ask it (AKISMET_API_KEY).
    const { akismet } = spamConfig.read(process.env).config.spam;
    const config = readConfig(process.env);
    const blog = (config.ok && config.config.publicUrl) || 'http://localhost';
    return runInboxCommand(command, {
      outbox: store.outbox,
      out,
      err,
      spam: createSpamStore(store.sql),
      akismet: akismet && createAkismetClient({ apiKey: akismet.apiKey, baseUrl: akismet.baseUrl, blog }),
      logger: createLogger({ level: 'warn', write: err }),
    });
  },
});
