import { inScope, personActor, THE_LIST } from '../../access/permissions.ts';
import type { Person } from '../../people/store.ts';
import { type AdminOutcome, done, messageId, record, type SessionCall } from './shared.ts';

// The mail each person chooses to get (issue 42 item 4, the plan's section 7, decision 0301): one's
// own from the account page (`mail-preferences`, every person), a person's from their page
// (`person-mail`, owners). Both go through `saveMail`, the same rules and the same store write;
// people/recipients.ts reads the choice again at each send, so it applies to the next mail.

/** What a choice that names a form outside the person's forms (or no form of the site) answers. */
export const NOT_YOUR_FORM = 'Choose among your forms only: one of those ticked is not yours. Reload the page and try again.';

/** What a choice for a person whose forms an owner changed while it was made answers, after a few tries. */
const FORMS_CHANGED = 'The forms of this person changed at this very moment. Reload the page and choose again.';

const NOT_HERE: AdminOutcome = { kind: 'refused', status: 404, message: 'Not found.' };

/** How many times a choice is checked again against forms that changed under it before it is refused. */
const TRIES = 3;

/**
 * The forms whose mail a person may choose: the site's forms within their forms (an owner: every
 * form), never the newsletter list, which has no messages to mail. In the site's order.
 */
export function mailableForms(person: { role: Person['role']; forms: readonly string[] | null }, siteForms: readonly string[]): string[] {
  const { scope } = personActor({ id: 0, name: '', email: null, stage: 'full', role: person.role, forms: person.forms });
  return siteForms.filter((form) => form !== THE_LIST && inScope(scope, form));
}

/**
 * The choice a form's checkboxes make: each `mail.<form>=on` and `digest=on`; `undefined` when a
 * ticked form is not one `person` may choose (400, nothing changed).
 */
function choiceOf(fields: Record<string, unknown>, mailable: readonly string[]): { mailForms: string[]; digest: boolean } | undefined {
  const mailForms: string[] = [];
  for (const name of Object.keys(fields)) {
    if (!name.startsWith('mail.')) continue;
    const form = name.slice('mail.'.length);
    if (!mailable.includes(form)) return undefined;
    mailForms.push(form);
  }
  return { mailForms: mailable.filter((form) => mailForms.includes(form)), digest: fields.digest === 'on' };
}

function nameOf(person: Pick<Person, 'name' | 'email'>): string {
  if (!person.email) return person.name;
  return person.name ? `${person.name} <${person.email}>` : person.email;
}

/**
 * Checks the posted choice against the person as read now and writes it on the condition that
 * their role and forms are still those (store `chooseMail`); an owner changing their forms in
 * between makes it read and check again. Audited with whose choice it is.
 */
async function saveMail(call: SessionCall, id: number, back: string): Promise<AdminOutcome> {
  const team = call.deps.team;
  if (!team) return NOT_HERE;
  for (let tries = 0; tries < TRIES; tries++) {
    const person = await team.people.find(id);
    if (!person) return NOT_HERE;
    const choice = choiceOf(call.fields, mailableForms(person, team.forms));
    if (!choice) return { kind: 'refused', status: 400, message: NOT_YOUR_FORM };
    const saved = await team.people.chooseMail(person.id, choice, person, call.now());
    if (!saved.ok && saved.reason === 'not-found') return NOT_HERE;
    if (!saved.ok) continue;
    const forms = choice.mailForms.length > 0 ? choice.mailForms.join(', ') : 'no form';
    await record(call, 'mail-preferences', `${nameOf(person)}: ${forms}; the digest ${choice.digest ? 'on' : 'off'}`);
    return done(back);
  }
  return { kind: 'refused', status: 400, message: FORMS_CHANGED };
}

/** One's own mail: "Mail me new messages of …" for each of one's forms, and the daily spam digest. */
export function mailPreferences(call: SessionCall): Promise<AdminOutcome> {
  return saveMail(call, call.session.actor.id, '/admin/account?mail=saved');
}

/** A person's mail, set by an owner from the person's page: the same rules as their own. */
export async function personMail(call: SessionCall): Promise<AdminOutcome> {
  const id = messageId(call.fields.id);
  if (id === undefined) return NOT_HERE;
  return saveMail(call, id, `/admin/people/${id}?mail=saved`);
}

/** The account's posts, as admin/actions/index.ts lists them. */
export const ACCOUNT_ACTIONS = {
  '/admin/actions/mail-preferences': { action: 'mail-preferences', permission: 'self.manage', run: mailPreferences },
  '/admin/actions/person-mail': { action: 'person-mail', permission: 'people.manage', run: personMail },
} as const;
