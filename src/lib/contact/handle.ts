import { parseContact } from '../forms/contact.ts';
import { readForm } from '../http.ts';
import type { Logger } from '../log.ts';
import { accepted, type FormValues, failure, INTERNAL_ERROR, invalid, type Outcome } from '../pipeline/outcome.ts';
import type { SubmissionStore } from './store.ts';

/** What the contact handler needs. */
export type ContactDeps = { store: SubmissionStore; logger: Logger; onStored?: (id: number) => void };

/** The fields a person sees and types into; the honeypot is not one of them. */
const VISIBLE_FIELDS = ['name', 'email', 'message'] as const;

/** POST /api/contact (SPEC.md 4.2): read the form, validate every field, store, answer. */
export async function handleContact(request: Request, { store, onStored }: ContactDeps): Promise<Outcome> {
  const form = await readForm(request);
  if (!form.ok) return form.failure;

  const values: FormValues = {};
  for (const field of VISIBLE_FIELDS) {
    const value = form.fields[field];
    if (typeof value === 'string') values[field] = value;
  }
  const parsed = parseContact(form.fields);
  if (!parsed.ok) return invalid(parsed.errors, values);

  let id: number;
  try {
    id = await store.save(parsed.input);
  } catch {
    // The store has logged the cause, once per outage rather than once per post (store/state.ts).
    return failure(500, INTERNAL_ERROR, { values });
  }
  // Accepted means "stored"; delivery happens from the outbox.
  onStored?.(id);
  return accepted();
}
