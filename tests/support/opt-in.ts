import { createSmtpMailer } from '../../packages/site-forms/src/lib/mail/mailer.ts';
import { createConsents } from '../../packages/site-forms/src/lib/newsletter/consents.ts';
import { createOptIn } from '../../packages/site-forms/src/lib/newsletter/opt-in.ts';
import type { Sql } from '../../packages/site-forms/src/lib/sql/sql.ts';

/**
 * The site's double opt-in as the services build it, over a store's SQL and a real SMTP server
 * at `smtpUrl`: the consent records, and the opt-in that mails the confirmation for the site
 * "Nord" at https://www.example.com.
 */
export function siteOptIn(sql: Sql, smtpUrl: string) {
  const consents = createConsents(sql);
  const smtp = { url: smtpUrl, to: 'owner@example.com', from: 'forms@example.com' };
  const optIn = createOptIn({
    consents,
    mailer: createSmtpMailer(smtp),
    smtp,
    site: { name: 'Nord', senderName: 'Nord' },
    publicUrl: 'https://www.example.com',
  });
  return { consents, optIn };
}
