import type { Outbox } from './outbox.ts';
import type { Logger } from '../log.ts';
import type { AkismetClient } from '../spam/akismet.ts';
import type { Correction, SpamStore } from '../spam/spam-store.ts';

/** What an owner's correction needs: the records, and Akismet when it is configured. */
export type CorrectionDeps = { spam: SpamStore; outbox: Outbox; akismet?: AkismetClient | undefined; logger: Logger };

/**
 * "Not spam": a held message joins the delivery queue, once; Akismet is told (`submit-ham`).
 * Hint: the admin pages and `npm run inbox -- release` both call this.
 */
export async function releaseMessage(id: number, deps: CorrectionDeps): Promise<Correction> {
  const result = await deps.spam.release(id);
  if (result.found && result.changed) await tellAkismet(id, 'ham', deps);
  return result;
}

/**
 * "Spam": a message is held, and a pending one is then not sent; Akismet is told (`submit-spam`).
 * Hint: the admin pages and `npm run inbox -- spam` both call this.
 */
export async function markMessageAsSpam(id: number, deps: CorrectionDeps): Promise<Correction> {
  const result = await deps.spam.markSpam(id);
  if (result.found && result.changed) await tellAkismet(id, 'spam', deps);
  return result;
}

/** Reports a correction; a failure is logged and never undoes the owner's decision. */
async function tellAkismet(id: number, kind: 'ham' | 'spam', { spam, outbox, akismet, logger }: CorrectionDeps): Promise<void> {
  if (!akismet) return;
  const [details, message] = await Promise.all([spam.details(id), outbox.find(id)]);
  // Akismet needs the visitor's address, kept only for messages that arrived while it was configured.
  if (!details?.ip || !message) return;
  const comment = { name: message.name, email: message.email, message: message.message, ip: details.ip, userAgent: details.userAgent ?? undefined };
  const answer = kind === 'ham' ? await akismet.submitHam(comment) : await akismet.submitSpam(comment);
  if (!answer.ok) logger.warn('spam.akismet_correction_failed', { id, kind, detail: answer.detail, ...(answer.check ? { check: answer.check } : {}) });
}
