import { parseContact } from '../forms/contact.ts';
import { readForm } from '../http.ts';
import type { Logger } from '../log.ts';
import { accepted, type FormValues, failure, INTERNAL_ERROR, invalid, type Outcome } from '../pipeline/outcome.ts';
import { PROOF_FIELD } from '../spam/proof.ts';
import type { SpamService } from '../spam/service.ts';
import { TURNSTILE_FIELD } from '../spam/turnstile.ts';
import type { SubmissionStore } from './store.ts';

/** What the contact handler needs; without `spam` every valid message is accepted for delivery. */
export type ContactDeps = {
  store: Pick<SubmissionStore, 'receive'>;
  logger: Logger;
  onStored?: (id: number) => void;
  spam?: { service: SpamService } | undefined;
};

/** Where the request came from, as the pipeline found it. */
export type RequestContext = { ip: string };

/** The fields a person sees and types into; the honeypot is not one of them. */
const VISIBLE_FIELDS = ['name', 'email', 'message'] as const;

/**
 * POST /api/contact (docs/api/openapi.yaml): read the form, validate every field, judge it, store, answer.
 * Hint: a message judged spam is held and answered exactly like one accepted (decision 0093).
 */
export async function handleContact(request: Request, { store, logger, onStored, spam }: ContactDeps, { ip }: RequestContext = { ip: '' }): Promise<Outcome> {
  const form = await readForm(request);
  if (!form.ok) return form.failure;

  const values: FormValues = {};
  for (const field of VISIBLE_FIELDS) {
    const value = form.fields[field];
    if (typeof value === 'string') values[field] = value;
  }
  const parsed = parseContact(form.fields);
  if (!parsed.ok) return invalid(parsed.errors, values);

  const userAgent = request.headers.get('user-agent') ?? undefined;
  const verdict = spam
    ? await spam.service.judge({
        ...parsed.input,
        proof: form.fields[PROOF_FIELD],
        turnstileToken: form.fields[TURNSTILE_FIELD],
        ip,
        userAgent,
        referrer: request.headers.get('referer') ?? undefined,
      })
    : undefined;

  let stored: Awaited<ReturnType<SubmissionStore['receive']>>;
  try {
    // The visitor's address and browser are kept only for Akismet, which asks for them with a correction.
    const origin = spam?.service.akismet ? { ip, userAgent } : {};
    stored = await store.receive({ ...parsed.input, held: verdict?.spam ? verdict.reasons : undefined, proof: verdict?.proof, ...origin });
  } catch {
    // The store has logged the cause, once per outage rather than once per post (store/state.ts).
    // The proof was consumed in the failed transaction, so it is still good for the next try.
    return failure(500, INTERNAL_ERROR, { values });
  }
  // A message judged spam (or whose proof turned out replayed) is held and answered like one accepted.
  if (stored.status === 'spam') {
    logger.info('contact.held_as_spam', { id: stored.id, reasons: stored.reasons });
    return accepted();
  }
  const id = stored.id;
  // Accepted means "stored"; delivery happens from the outbox.
  onStored?.(id);
  return accepted();
}
