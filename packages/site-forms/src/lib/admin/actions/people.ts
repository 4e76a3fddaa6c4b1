import { actorLabel, type PersonActor, personActor, personRef, type SessionStage, THE_LIST } from '../../access/permissions.ts';
import { type LinkMailer, type LinkMailResult, linkUrl } from '../../people/link-mail.ts';
import type { Links } from '../../people/links.ts';
import { type PeopleSession, type Person, type Role, ROLES } from '../../people/store.ts';
import type { MailLimits } from '../mail-limits.ts';
import { passwordProblem } from '../password.ts';
import { clearedSessionCookie, sessionCookie } from '../session.ts';
import { type AdminOutcome, type ActionCall, done, messageId, type PublicCall, record, type SessionCall } from './shared.ts';
import { ENROLL_PAGE } from './sign-in.ts';

// The owner's team (issue 42, items 1 and 6): invitations, sign-in links, a person's role and forms,
// removal; and the two public posts of the link pages (accept a link, ask for a reset). Decision 0289.

/** What the people's posts use besides the admin's other dependencies. */
export type TeamDeps = {
  people: PeopleSession;
  links: Links;
  limits: MailLimits;
  mail: LinkMailer;
  /** The site's form names (an invitation's forms are among them, or `newsletter`, the local list). */
  forms: readonly string[];
  /**
   * PUBLIC_URL's origin: the only address a mailed link is built on. Without it the public origin
   * comes from the request's Host, which whoever sends the request chooses, so nothing is mailed:
   * a reset request does nothing, an owner is shown the link (decision 0303).
   */
  publicUrl: string | undefined;
  hashPassword(password: string): Promise<string>;
  /** Runs the work of a reset request after its answer (`setImmediate`); the tests collect it instead. */
  later?: (work: () => Promise<void>) => void;
};

/** The one answer to a reset request, whoever the address belongs to, if anyone. */
export const RESET_ANSWER = '/admin/reset?sent=1';

/** What a link that cannot be used answers, whichever of unknown, used, expired or revoked it is. */
export const LINK_UNUSABLE = 'This link cannot be used: it was used already, it expired, or a newer one replaced it. Ask the owner for a new one.';

/** Why the first owner gets no sign-in link: their password is the configuration's. */
export const ENV_OWNER_PASSWORD =
  'This owner signs in with ADMIN_PASSWORD_HASH: change their password there (npm run admin -- hash-password); lost passkeys: npm run admin -- remove-passkeys --first-owner.';

const MAX_NAME = 100;

/** The team's dependencies, or the refusal of a server that has none (it never happens once the admin is built). */
function teamOf(call: ActionCall): TeamDeps | undefined {
  return call.deps.team;
}

const NOT_HERE: AdminOutcome = { kind: 'refused', status: 404, message: 'Not found.' };

/** An email as the forms take it: one address, at most 254 characters, with no spaces. */
function emailField(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const email = value.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email) ? email : undefined;
}

function nameField(value: unknown): string | undefined {
  if (value === undefined) return '';
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, ' ').trim();
  return [...name].length <= MAX_NAME ? name : undefined;
}

function roleField(value: unknown): Role | undefined {
  return ROLES.find((role) => role === value);
}

/**
 * The forms a form's checkboxes chose: `all=on` (or the owner's role) is every form, present and
 * future (`null`); else each `form.<name>=on` of a known form or the local list. A name outside
 * them is `undefined` (400).
 */
function formsField(fields: Record<string, unknown>, role: Role, known: readonly string[]): string[] | null | undefined {
  if (role === 'owner' || fields.all === 'on') return null;
  const chosen: string[] = [];
  for (const name of Object.keys(fields)) {
    if (!name.startsWith('form.')) continue;
    const form = name.slice('form.'.length);
    if (form !== THE_LIST && !known.includes(form)) return undefined;
    chosen.push(form);
  }
  return chosen.sort();
}

function badRequest(message: string): AdminOutcome {
  return { kind: 'refused', status: 400, message };
}

/** Why a link was not mailed: the mailer's answer, or no PUBLIC_URL to build a mailed link on. */
type NotMailed = Exclude<LinkMailResult, 'sent'> | 'no-public-url';

/** The shown page of a link that could not be mailed, with why. */
function shownLink(title: string, result: NotMailed, url: string, email: string, back: string): AdminOutcome {
  const why = {
    'no-public-url': 'This site has no PUBLIC_URL, so its links are not mailed (an address taken from a request could be anyone’s),',
    off: 'Mail is not set up on this site (SMTP_URL),',
    failed: 'The mail could not be sent,',
    limited: `${email} was sent three links today already,`,
  }[result];
  return { kind: 'shown', title, message: `${why} so give ${email} this link yourself. It is shown once: copy it now.`, value: url, back };
}

function describeForms(forms: readonly string[] | null): string {
  if (forms === null) return 'every form';
  if (forms.length === 0) return 'no form';
  return forms.map((form) => (form === THE_LIST ? 'the newsletter list' : form)).join(', ');
}

/** Invites a person by email with a role and forms: the link is mailed, or shown once when it cannot be. */
export async function invite(call: SessionCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const { actor } = call.session;
  const gate = await team.limits.invitation(actor.id);
  if (!gate.ok) {
    return {
      kind: 'refused',
      status: 429,
      message: 'You sent 20 invitations within the hour. Please wait before sending more.',
      headers: { 'retry-after': String(gate.retryAfterSeconds) },
    };
  }
  const email = emailField(call.fields.email);
  if (!email) return badRequest('Give the email address of the person to invite.');
  const name = nameField(call.fields.name);
  if (name === undefined) return badRequest(`A name has at most ${MAX_NAME} characters.`);
  const role = roleField(call.fields.role);
  if (!role) return badRequest('Choose a role: owner, editor or reader.');
  const forms = formsField(call.fields, role, team.forms);
  if (forms === undefined) return badRequest('One of the forms chosen does not exist on this site.');
  const made = await team.links.invite({ email, role, forms, createdBy: actorLabel(actor).actor }, call.now());
  if (!('token' in made)) return badRequest(`Someone here has the address ${email} already.`);
  await record(call, 'invite', `${email} as ${role} (${describeForms(forms)})`);
  // Shown to the owner on the address they use; mailed only on PUBLIC_URL.
  const url = linkUrl(team.publicUrl ?? call.context.publicOrigin ?? '', made.token);
  const by = actor.name || actor.email || 'The owner';
  const sent = team.publicUrl
    ? await team.mail.send({ kind: 'invite', to: email, url, expiresAt: made.link.expiresAt, by, role }, call.now())
    : 'no-public-url';
  if (sent === 'sent') return done('/admin/people?invited=1');
  return shownLink('Invitation link', sent, url, email, '/admin/people');
}

/**
 * Follows a link (the welcome page's form): an invitation makes the person with the name and
 * password chosen, a reset link sets the password; either way a session of theirs starts.
 * While the site has passkeys, the password may be left empty (decision 0298): the person is made
 * without one (a reset link keeps theirs as it is) and the session starts at the `enroll` stage,
 * on the account page, until they add a passkey.
 * Hint: the page's GET never uses the link; only this post does, once on every instance.
 */
export async function acceptLink(call: PublicCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const token = typeof call.fields.token === 'string' ? call.fields.token : '';
  const password = typeof call.fields.password === 'string' ? call.fields.password : '';
  const name = nameField(call.fields.name);
  if (name === undefined) return badRequest(`A name has at most ${MAX_NAME} characters.`);
  // A passkey instead of a password: only where one can be registered, else the empty password is a short one.
  const passkeyOnly = password === '' && call.deps.passkeys !== undefined;
  const problem = passkeyOnly ? undefined : passwordProblem(password);
  if (problem) return badRequest(problem);
  // Looked up before the slow hash: a post of made-up tokens must cost the server nothing.
  if (!(await team.links.peek(token, call.now()))) return { kind: 'refused', status: 400, message: LINK_UNUSABLE };
  // Hashed before the link is used: a slow hash inside the transaction would hold its locks.
  const passwordHash = passkeyOnly ? null : await team.hashPassword(password);
  const accepted = await team.links.accept(token, { name, passwordHash }, call.now());
  if (!accepted.ok) {
    return accepted.reason === 'email-taken'
      ? badRequest('Someone here has this address already: sign in instead.')
      : { kind: 'refused', status: 400, message: LINK_UNUSABLE };
  }
  const { person } = accepted;
  // A link proves the mailbox, not a passkey: with no password, or where passkeys are required
  // (decision 0291), it opens the enrolment, as a right password does there.
  const stage = passkeyOnly || call.deps.requirePasskey ? 'enroll' : 'full';
  if (call.token) await call.deps.sessions.end(call.token);
  const session = await call.deps.sessions.start({ userId: person.id, stage, method: 'link' });
  await team.people.signedIn(person.id, call.now());
  const what = accepted.kind === 'invite' ? `joined as ${person.role}` : passkeyOnly ? 'signed in' : 'set a new password';
  await record(call, 'accept-link', stage === 'enroll' ? `${what}, to add a passkey` : what, actorOf(person, stage));
  // A new password leads to the account page, where the person's passkeys are listed to check (decision 0304).
  const location = stage === 'enroll' ? ENROLL_PAGE : accepted.kind === 'reset' ? RESET_PAGE : '/admin';
  return { kind: 'redirect', location, cookie: sessionCookie(session.token, call.secure) };
}

/** Where a followed reset link leads: the account page, with its notice. */
const RESET_PAGE = '/admin/account?reset=1';

/**
 * Asks for a reset link: one answer whatever the address, written before anything is looked up;
 * the lookup and the mail run after it, never awaited (so the time of the answer tells nothing).
 * 5 a client an hour (429), 3 mails an address a day (then none, silently, and the last link mailed
 * stays the one that works).
 */
export async function requestReset(call: PublicCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const gate = await team.limits.resetRequest(call.context.clientKey);
  if (!gate.ok) {
    return {
      kind: 'refused',
      status: 429,
      message: 'Too many requests for a link from here. Please try again in an hour.',
      headers: { 'retry-after': String(gate.retryAfterSeconds) },
    };
  }
  const email = emailField(call.fields.email);
  const origin = team.publicUrl;
  const now = call.now();
  const later = team.later ?? ((work) => void setImmediate(() => void work()));
  if (email && team.mail.on && origin) {
    later(async () => {
      try {
        const person = await team.people.findByEmail(email);
        // The first owner's password is ADMIN_PASSWORD_HASH: no link changes it.
        if (!person?.email || person.origin === 'env') return;
        const to = person.email;
        // The link is made only if the address may have another mail today: making it revokes the last one mailed.
        await team.mail.sendMade(
          to,
          async () => {
            const made = await team.links.reset(person, personRef(person.id), now);
            return made && { kind: 'reset', to, url: linkUrl(origin, made.token), expiresAt: made.link.expiresAt };
          },
          now,
        );
      } catch {
        // Nobody waits for this answer: a failure here is the same silence as an unknown address.
      }
    });
  }
  return done(RESET_ANSWER);
}

/** The person of a form's `id`, or the 404 of one that does not exist. */
async function personOf(team: TeamDeps, value: unknown): Promise<Person | undefined> {
  const id = messageId(value);
  return id === undefined ? undefined : team.people.find(id);
}

/** Changes a person's role and forms; the last owner keeps the owner's role (400). It applies at their next request. */
export async function updatePerson(call: SessionCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const person = await personOf(team, call.fields.id);
  if (!person) return NOT_HERE;
  const role = roleField(call.fields.role);
  if (!role) return badRequest('Choose a role: owner, editor or reader.');
  const forms = formsField(call.fields, role, team.forms);
  if (forms === undefined) return badRequest('One of the forms chosen does not exist on this site.');
  const changed = await team.people.update(person.id, { role, forms }, call.now());
  if (!changed.ok) {
    if (changed.reason === 'last-owner') return badRequest('This is the last owner: make someone else an owner first.');
    return NOT_HERE;
  }
  await record(call, 'update-person', `${nameOf(person)}: ${role} (${describeForms(forms)})`);
  return done(`/admin/people/${person.id}?saved=1`);
}

/** Removes a person: their sessions, passkeys and links go in the same transaction, so they are out at once. The last owner stays (400). */
export async function removePerson(call: SessionCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const person = await personOf(team, call.fields.id);
  if (!person) return NOT_HERE;
  const removed = await team.people.remove(person.id, call.now());
  if (!removed.ok) {
    if (removed.reason === 'last-owner') return badRequest('This is the last owner: make someone else an owner first.');
    return NOT_HERE;
  }
  await record(call, 'remove-person', nameOf(person));
  // Removing oneself ends one's own session with the others.
  if (person.id === call.session.actor.id) return { kind: 'redirect', location: '/admin?ended=signed-out', cookie: clearedSessionCookie(call.secure) };
  return done('/admin/people?removed=1');
}

/** Sends a person a sign-in link (a reset link: a new password, for one who lost theirs or their passkey): mailed, or shown once. */
export async function sendLink(call: SessionCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const person = await personOf(team, call.fields.id);
  if (!person) return NOT_HERE;
  if (person.origin === 'env') return badRequest(ENV_OWNER_PASSWORD);
  const made = await team.links.reset(person, actorLabel(call.session.actor).actor, call.now());
  if (!made || !person.email) return badRequest('This person has no email address to send a link to.');
  await record(call, 'send-link', nameOf(person));
  const url = linkUrl(team.publicUrl ?? call.context.publicOrigin ?? '', made.token);
  const by = call.session.actor.name || call.session.actor.email || 'The owner';
  const sent = team.publicUrl
    ? await team.mail.send({ kind: 'reset', to: person.email, url, expiresAt: made.link.expiresAt, by }, call.now())
    : 'no-public-url';
  if (sent === 'sent') return done(`/admin/people/${person.id}?sent=1`);
  return shownLink('Sign-in link', sent, url, person.email, `/admin/people/${person.id}`);
}

/** Revokes an open link (an invitation not yet accepted, a reset link not yet used). */
export async function revokeLink(call: SessionCall): Promise<AdminOutcome> {
  const team = teamOf(call);
  if (!team) return NOT_HERE;
  const id = messageId(call.fields.id);
  const open = id === undefined ? undefined : (await team.links.open(call.now())).find((link) => link.id === id);
  if (!open || !(await team.links.revoke(open.id, call.now()))) return NOT_HERE;
  await record(call, 'revoke-link', `${open.kind === 'invite' ? 'invitation' : 'sign-in link'} for ${open.email}`);
  return done('/admin/people?revoked=1');
}

function nameOf(person: Pick<Person, 'name' | 'email'>): string {
  if (!person.email) return person.name;
  return person.name ? `${person.name} <${person.email}>` : person.email;
}

function actorOf(person: Person, stage: SessionStage = 'full'): PersonActor {
  return personActor({ ...person, stage });
}

/** The people's posts, as admin/actions/index.ts lists them. */
export const PEOPLE_ACTIONS = {
  '/admin/actions/invite': { action: 'invite', permission: 'people.manage', run: invite },
  '/admin/actions/accept-link': { action: 'accept-link', public: true, run: acceptLink },
  '/admin/actions/request-reset': { action: 'request-reset', public: true, run: requestReset },
  '/admin/actions/update-person': { action: 'update-person', permission: 'people.manage', run: updatePerson },
  '/admin/actions/remove-person': { action: 'remove-person', permission: 'people.manage', run: removePerson },
  '/admin/actions/send-link': { action: 'send-link', permission: 'people.manage', run: sendLink },
  '/admin/actions/revoke-link': { action: 'revoke-link', permission: 'people.manage', run: revokeLink },
} as const;
