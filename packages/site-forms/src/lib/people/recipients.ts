import { type FormScope, formScope, inScope } from '../access/permissions.ts';
import type { Logger } from '../log.ts';
import type { Sql } from '../sql/sql.ts';
import type { Person } from './store.ts';

// Who a form's mail and the spam digest go to (issue 42 item 4; the plan's section 7, decision
// 0285): pure functions of the people, the form and CONTACT_TO, and a reader over table
// `admin_users` that the worker asks at each try, so a choice made now applies to the next mail.

/** What of a person decides their mail. */
export type MailPerson = Pick<Person, 'id' | 'email' | 'role' | 'forms' | 'mailForms' | 'digest'>;

/** A form as its mail needs it: its name, and its own addresses from forms.config.ts (`to`). */
export type MailForm = { name: string; to?: string | readonly string[] | undefined };

/** One digest to send: to whom, and the forms whose held messages it lists. */
export type DigestRecipient = { id: number | undefined; to: string; scope: FormScope };

/**
 * The addresses a form's message is mailed to: the form's own (`to`), each person with an email
 * who chose it within their forms (by default an owner, for a form without its own address), and
 * CONTACT_TO while the form has no address of its own and CONTACT_TO is nobody's; `[]` when
 * nobody at all.
 * Hint: addresses are compared without case and each is kept once, sorted; a configured address
 * (CONTACT_TO, the form's) keeps its spelling, so an install with CONTACT_TO only mails exactly as
 * before; people's emails are stored lower-cased.
 */
export function chosenRecipients(people: readonly MailPerson[], form: MailForm, contactTo: string): string[] {
  const own = ownAddresses(form);
  const found = new Map<string, string>();
  const add = (address: string) => {
    const key = address.trim().toLowerCase();
    if (!found.has(key)) found.set(key, address);
  };
  for (const address of own) add(address);
  for (const person of people) if (person.email && chooses(person, form.name, own.length === 0)) add(sameAs(person.email, contactTo));
  if (own.length === 0 && !isSomeonesEmail(people, contactTo)) add(contactTo);
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, address]) => address);
}

/** `chosenRecipients`, never empty: a message is never mailed to nobody, CONTACT_TO is the last resort. */
export function mailRecipients(people: readonly MailPerson[], form: MailForm, contactTo: string): string[] {
  const chosen = chosenRecipients(people, form, contactTo);
  return chosen.length > 0 ? chosen : [contactTo];
}

/**
 * Who gets the spam digest: each person with an email who asked for it, listing their forms
 * (an owner: every form), in the people's order; nobody asked and CONTACT_TO nobody's: CONTACT_TO,
 * every form, as before people. A CONTACT_TO person who turned it off gets none.
 */
export function digestRecipients(people: readonly MailPerson[], contactTo: string): DigestRecipient[] {
  const asked = people
    .filter((person) => person.digest && person.email)
    .map((person) => ({ id: person.id, to: sameAs(person.email!, contactTo), scope: scopeOf(person) }));
  if (asked.length > 0 || isSomeonesEmail(people, contactTo)) return asked;
  return [{ id: undefined, to: contactTo, scope: { all: true } }];
}

/** The recipients as the people's table holds them now; each call reads it again. */
export type Recipients = {
  /** `mailRecipients` of `form`; logs `contact.no_recipient_chose` when CONTACT_TO stands in for nobody. */
  forForm(form: MailForm): Promise<string[]>;
  /** `digestRecipients`. */
  forDigest(): Promise<DigestRecipient[]>;
};

type Row = { id: number | string; email: string | null; role: string; forms: string | null; mail_forms: string | null; digest: number | string };

/** The recipients over the store's SQL, with `contactTo` the configured CONTACT_TO. */
export function createRecipients(sql: Pick<Sql, 'all'>, contactTo: string, logger?: Pick<Logger, 'info'>): Recipients {
  const people = async (): Promise<MailPerson[]> =>
    (await sql.all<Row>('SELECT id, email, role, forms, mail_forms, digest FROM admin_users ORDER BY id')).map((row) => ({
      id: Number(row.id),
      email: row.email,
      role: row.role as Person['role'],
      forms: parseList(row.forms),
      mailForms: parseList(row.mail_forms),
      digest: Number(row.digest) === 1,
    }));
  return {
    async forForm(form) {
      const all = await people();
      const chosen = chosenRecipients(all, form, contactTo);
      if (chosen.length > 0) return chosen;
      logger?.info('contact.no_recipient_chose', { form: form.name, note: 'mailed to CONTACT_TO' });
      return mailRecipients(all, form, contactTo);
    },
    forDigest: async () => digestRecipients(await people(), contactTo),
  };
}

/** Whether `person` is mailed `form`: within their forms, by their choice or (no choice yet) as an owner of a form without its own address. */
function chooses(person: MailPerson, form: string, formHasNoAddress: boolean): boolean {
  if (!inScope(scopeOf(person), form)) return false;
  return person.mailForms !== null ? person.mailForms.includes(form) : person.role === 'owner' && formHasNoAddress;
}

function scopeOf(person: MailPerson): FormScope {
  return person.role === 'owner' ? { all: true } : formScope(person.forms);
}

function ownAddresses(form: MailForm): string[] {
  if (form.to === undefined) return [];
  return typeof form.to === 'string' ? [form.to] : [...form.to];
}

function isSomeonesEmail(people: readonly MailPerson[], address: string): boolean {
  const key = address.trim().toLowerCase();
  return people.some((person) => person.email !== null && person.email.toLowerCase() === key);
}

/** A person's email as written in CONTACT_TO when it is that address, so the first owner's mail reads as before. */
function sameAs(email: string, contactTo: string): string {
  return email.toLowerCase() === contactTo.trim().toLowerCase() ? contactTo : email;
}

function parseList(text: string | null): string[] | null {
  return text === null ? null : (JSON.parse(text) as string[]);
}
