/**
 * The site owner's inbox on the command line: `npm run inbox -- list | show <id> |
 * export --format csv|json | retry <id> | release <id> | spam <id> | delete <id> | digest`. It opens the same store
 * as the server, which may be running (SQLite's WAL, or PostgreSQL, lets both work at once).
 */
import { readConfig } from '../lib/config/config.ts';
import { spam as spamConfig } from '../lib/config/spam.ts';
import { spreadsheetOf } from '../lib/contact/export.ts';
import { INBOX_USAGE, parseInboxArgs, runInboxCommand } from './inbox/commands.ts';
import { createLogger } from '../lib/log.ts';
import { createAkismetClient } from '../lib/spam/akismet.ts';
import { createSmtpMailer } from '../lib/mail/mailer.ts';
import { digestNow } from '../lib/spam/upkeep.ts';
import { createRecipients } from '../lib/people/recipients.ts';
import { site, siteForMail } from '../lib/site/site.ts';
import { createDeliveries } from '../lib/webhooks/deliveries.ts';
import { runTool } from './run.ts';
import { filesOfMessages } from '../lib/files/listing.ts';

await runTool({
  usage: INBOX_USAGE,
  parse: parseInboxArgs,
  run: (command, { store, out, err }) => {
    // Akismet is told of the owner's corrections when the server would ask it (AKISMET_API_KEY).
    const { akismet } = spamConfig.read(process.env).config.spam;
    const config = readConfig(process.env);
    const blog = (config.ok && config.config.publicUrl) || 'http://localhost';
    const spam = store.spam;
    const logger = createLogger({ level: 'warn', write: err });
    return runInboxCommand(command, {
      outbox: store.outbox,
      out,
      err,
      spam,
      akismet: akismet && createAkismetClient({ apiKey: akismet.apiKey, baseUrl: akismet.baseUrl, blog }),
      logger,
      webhooks: createDeliveries(store.sql),
      spreadsheet: spreadsheetOf(site),
      files: (ids) => filesOfMessages(store.sql, ids),
      sendDigest: async () => {
        if (!config.ok) return { outcome: 'no mail server', sentTo: [] };
        const { smtp, spam: settings } = config.config;
        const mailer = smtp && createSmtpMailer(smtp, { logger });
        const recipients = smtp && createRecipients(store.sql, smtp.to, logger);
        const deps = { spam, mailer, smtp, site: siteForMail(config.config), retentionDays: settings.retentionDays, logger, recipients };
        return digestNow(deps, new Date());
      },
    });
  },
});
