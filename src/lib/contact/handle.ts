import { parseContact } from '../forms/contact.ts';
import { failure, INTERNAL_ERROR, invalid, readForm, success } from '../http.ts';
import { describeError, type Logger } from '../log.ts';
import type { SubmissionStore } from './store.ts';

/** What the contact handler needs. */
export type ContactDeps = { store: SubmissionStore; logger: Logger; onStored?: (id: number) => void };

/** POST /api/contact (SPEC.md 4.2): read the form, validate every field, store, answer. */
export async function handleContact(request: Request, { store, logger, onStored }: ContactDeps): Promise<Response> {
  const form = await readForm(request);
  if (!form.ok) return form.response;

  const parsed = parseContact(form.fields);
  if (!parsed.ok) return invalid(parsed.errors);

  let id: number;
  try {
    id = store.save(parsed.input);
  } catch (error) {
    logger.error('contact.store_failed', { error: describeError(error) });
    return failure(500, INTERNAL_ERROR);
  }
  // The 200 means "stored"; delivery happens from the outbox.
  onStored?.(id);
  return success();
}
