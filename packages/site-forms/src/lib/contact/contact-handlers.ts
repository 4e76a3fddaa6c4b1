import type { IncomingRequest } from '../http/form.ts';
import type { NewFile } from '../files/files.ts';
import type { ReceivedFile, UploadRead } from '../files/multipart.ts';
import type { Uploads } from '../files/uploads.ts';
import { type FieldValue, type FormDefinition, parseForm, takesFiles, thanksPath, visibleFieldNames } from '../forms/definition.ts';
import { contactForm, formNamed } from '../forms/registry.ts';
import { HONEYPOT_FIELD, PROOF_FIELD, STORED_IN_COLUMNS, TURNSTILE_FIELD } from '../forms/reserved.ts';
import { hashClient } from '../http/client-ip.ts';
import { readForm } from '../http/form.ts';
import { texts } from '../i18n/texts.ts';
import type { Logger } from '../log.ts';
import { accepted, type FormValues, failure, INTERNAL_ERROR, invalid, type Outcome } from '../http/outcome.ts';
import type { SpamService } from '../spam/service.ts';
import type { SubmissionStore } from './submission-store.ts';

/** What the contact handler needs; without `spam` every valid message is accepted for delivery. */
export type ContactDeps = {
  submissions: Pick<SubmissionStore, 'receive'>;
  logger: Logger;
  onStored?: (id: number) => void;
  spam?: { service: SpamService } | undefined;
  /** Files with a message: a form with a file field is read as a stream through it (src/lib/files/). */
  uploads?: Uploads | undefined;
};

/** Where the request came from, and whether a person's browser posted the form itself, as the pipeline found it. */
export type RequestContext = { ip: string; person?: boolean };

/**
 * POST /api/contact (docs/api/openapi.yaml): read the form, validate every field, judge it, store, answer.
 * Hint: a message judged spam is held and answered exactly like one accepted (decision 0093).
 */
export function handleContact(request: IncomingRequest, deps: ContactDeps, context: RequestContext = { ip: '' }): Promise<Outcome> {
  return handleSubmission(contactForm, request, deps, context);
}

/** The handler of an owner's form at /api/forms/<name>: the contact form's road, with that form's fields (decision 0131). */
export function formHandler(form: FormDefinition): (request: IncomingRequest, deps: ContactDeps, context: RequestContext) => Promise<Outcome> {
  return (request, deps, context) => handleSubmission(form, request, deps, context);
}

/**
 * Any form's post: read it, validate every field of its definition, judge it with the spam layers,
 * store it (name, email and message in their columns, the other fields beside them), answer.
 */
export async function handleSubmission(
  definition: FormDefinition,
  request: IncomingRequest,
  deps: ContactDeps,
  context: RequestContext = { ip: '' },
): Promise<Outcome> {
  const { uploads } = deps;
  // A form with a file field is read as a stream, its files in temp files until the post is answered.
  if (!uploads || !takesFiles(definition)) return receive(definition, request, await readForm(request), [], deps, context);
  const form = await uploads.read(request, definition);
  const files = form.ok ? form.files : [];
  try {
    return await receive(definition, request, form, files, deps, context, form.ok ? form.errors : {});
  } finally {
    await uploads.discard(files);
  }
}

/** A read post's fields (and files, in temp files): validated, judged, its files kept, then stored with them. */
async function receive(
  definition: FormDefinition,
  request: IncomingRequest,
  form: Awaited<ReturnType<typeof readForm>> | Exclude<UploadRead, { ok: true }>,
  files: readonly ReceivedFile[],
  { submissions, logger, onStored, spam, uploads }: ContactDeps,
  { ip, person = false }: RequestContext,
  fileErrors: Record<string, [string, ...string[]]> = {},
): Promise<Outcome> {
  // A refusal made while reading (a file too large) still gives back what was typed before it (issue 39 item 8).
  if (!form.ok) return 'fields' in form && form.fields ? { ...form.failure, values: typedValues(definition, form.fields) } : form.failure;

  const values = typedValues(definition, form.fields);
  const parsed = parseForm(definition, files.length > 0 ? withFiles(form.fields, files) : form.fields);
  if (!parsed.ok || Object.keys(fileErrors).length > 0) return invalid({ ...(parsed.ok ? {} : parsed.errors), ...fileErrors }, values);
  const { columns, fields } = splitValues(parsed.values, definition);

  const userAgent = request.headers.get('user-agent') ?? undefined;
  const verdict = spam
    ? await spam.service.judge({
        ...columns,
        // The content checks (links, Akismet) read everything a visitor typed, not only a field named message.
        message: [columns.message, ...Object.values(fields).filter((value) => typeof value === 'string')].filter(Boolean).join('\n'),
        proof: form.fields[PROOF_FIELD],
        turnstileToken: form.fields[TURNSTILE_FIELD],
        ip,
        userAgent,
        referrer: request.headers.get('referer') ?? undefined,
        browser: hasFetchMetadata(request.headers),
      })
    : undefined;

  // Scanned and stored before the message's transaction, which writes their rows; a refusal keeps nothing.
  let records: NewFile[] = [];
  if (files.length > 0 && uploads) {
    const kept = await uploads.keep(files, definition, ip && hashClient(ip));
    if (!kept.ok) return 'errors' in kept ? invalid(kept.errors, values) : { ...kept.failure, values };
    records = kept.records;
  }
  let stored: Awaited<ReturnType<SubmissionStore['receive']>>;
  try {
    // The visitor's address and browser are kept only for Akismet, which asks for them with a correction.
    const origin = spam?.service.akismet ? { ip, userAgent } : {};
    const held = verdict?.spam || (person && verdict?.confirmable) ? verdict.reasons : undefined;
    stored = await submissions.receive({
      ...columns,
      form: definition.name,
      fields,
      held,
      proof: verdict?.proof,
      shownPerson: verdict?.shownPerson === true,
      ...(records.length > 0 && { files: records }),
      ...origin,
    });
  } catch {
    // No row, so no object: what was put into the storage goes again.
    await uploads?.unstore(records);
    // The store has logged the cause, once per outage rather than once per post (sql/state.ts).
    // The proof was consumed in the failed transaction, so it is still good for the next try.
    return failure(500, INTERNAL_ERROR, { values });
  }
  // A person whose browser ran no script is asked to confirm what only the missing proof held;
  // the message is kept as held meanwhile, so nothing is lost if they never press the button.
  if (stored.status === 'spam' && person && verdict?.confirmable && spam) {
    logger.info('contact.held_for_confirmation', { id: stored.id, reasons: stored.reasons });
    return { kind: 'confirm', token: await spam.service.confirmationFor(stored.id), values };
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

/** What a person typed into the form's visible fields, to show the form again with it. */
function typedValues(definition: FormDefinition, fields: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const field of visibleFieldNames(definition)) {
    const value = fields[field];
    if (typeof value === 'string') values[field] = value;
  }
  return values;
}

/** The fields with each file field's files in place of its value, as the form's rules count them. */
function withFiles(fields: Record<string, unknown>, files: readonly ReceivedFile[]): Record<string, unknown> {
  const all: Record<string, unknown> = Object.assign(Object.create(null), fields);
  for (const file of files) all[file.field] = [...((Array.isArray(all[file.field]) ? all[file.field] : []) as ReceivedFile[]), file];
  return all;
}

/** A submission's values as they are stored: name, email and message in their columns (empty when the form has none), the rest beside them. */
function splitValues(
  values: Record<string, FieldValue>,
  definition: FormDefinition,
): { columns: { name: string; email: string; message: string }; fields: Record<string, FieldValue> } {
  const text = (value: FieldValue | undefined) => (typeof value === 'string' ? value : '');
  const fields: Record<string, FieldValue> = {};
  // A file field keeps nothing here: its files are the files table's rows.
  const fileFields = new Set(definition.fields.filter((field) => field.type === 'file').map((field) => field.name));
  for (const [key, value] of Object.entries(values))
    if (!STORED_IN_COLUMNS.includes(key) && key !== HONEYPOT_FIELD && !fileFields.has(key)) fields[key] = value;
  return { columns: { name: text(values.name), email: text(values.email), message: text(values.message) }, fields };
}

/**
 * POST /api/contact/confirm: the one button of the confirmation page. A good token queues its
 * message for delivery (once; pressing again finds it on its way); a bad or expired one says so.
 */
export async function handleContactConfirmation(
  request: IncomingRequest,
  {
    submissions,
    logger,
    onStored,
    spam,
  }: Omit<ContactDeps, 'submissions'> & { submissions: Pick<SubmissionStore, 'confirmBySender'> & Partial<Pick<SubmissionStore, 'formOf'>> },
): Promise<Outcome> {
  const form = await readForm(request);
  if (!form.ok) return form.failure;
  const id = spam ? await spam.service.confirmed(form.fields.token) : undefined;
  if (id === undefined) return failure(400, CONFIRMATION_EXPIRED);
  const change = await submissions.confirmBySender(id);
  if (change.found && change.changed && change.to === 'pending') {
    logger.info('contact.confirmed_by_sender', { id });
    onStored?.(id);
  }
  // A message of an owner's form lands on that form's thank-you page, not the contact form's.
  const from = await submissions.formOf?.(id);
  return from && from !== 'contact' && formNamed(from) ? { ...accepted(), thanks: thanksPath(from) } : accepted();
}

/** What a person reads when their confirmation page is too old or was tampered with. */
export const CONFIRMATION_EXPIRED = texts.refusals.confirmationExpired;

/**
 * Whether a post carries the fetch metadata every current browser sends with it (Chrome 76,
 * Firefox 90, Safari 16.4 and later, on HTTPS and localhost): where it goes, how and from
 * which site. curl sends none; Node's fetch sends only `Sec-Fetch-Mode`.
 */
export function hasFetchMetadata(headers: Headers): boolean {
  return headers.has('sec-fetch-site') && headers.has('sec-fetch-mode') && headers.has('sec-fetch-dest');
}
