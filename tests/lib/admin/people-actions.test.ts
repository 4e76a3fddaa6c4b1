/**
 * The owner's team in the admin (issue 42 items 1 and 6, admin/actions/people.ts) through
 * `handleAdminPost`, over a real store on both engines: an invitation mailed or shown once and
 * followed, the last owner who is neither removed nor demoted, a removal that ends the person's
 * sessions at once, a role changed at their next request, reset requests that all get one answer,
 * and audit entries that name the owner acting and the person they acted on.
 */
import { describe, expect, test } from 'vitest';
import { type AdminDeps, type AdminOutcome, ENROLL_ONLY, handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { LINK_UNUSABLE, type TeamDeps } from '../../../packages/site-forms/src/lib/admin/actions/people.ts';
import { createAuditLog } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createMailLimits } from '../../../packages/site-forms/src/lib/admin/mail-limits.ts';
import { createPasswordCheck } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { createSessions } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSessionStore } from '../../../packages/site-forms/src/lib/admin/session-store.ts';
import { createSignInThrottle } from '../../../packages/site-forms/src/lib/admin/throttle.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { ContactEmail } from '../../../packages/site-forms/src/lib/mail/email.ts';
import type { SendResult } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createLinkMailer } from '../../../packages/site-forms/src/lib/people/link-mail.ts';
import { createLinks } from '../../../packages/site-forms/src/lib/people/links.ts';
import type { Passkeys } from '../../../packages/site-forms/src/lib/people/passkeys.ts';
import { createPeopleStore, type Person } from '../../../packages/site-forms/src/lib/people/store.ts';
import { testEngines } from '../../support/stores.ts';

const SITE = 'https://site.test';
const T0 = new Date('2030-01-01T10:00:00.000Z');
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const LINK = /https:\/\/site\.test\/admin\/welcome\/(sfl_[A-Za-z0-9_-]{43})/;

function post(path: string, fields: Record<string, string>, cookie?: string, origin = SITE): Request {
  return new Request(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...(cookie && { cookie }) },
    body: new URLSearchParams(fields),
  });
}

describe.each(testEngines())('the people’s posts on $name', ({ available, open }) => {
  const setUp = async ({ smtp = 'on' as 'on' | 'off' | 'failing', publicUrl = SITE as string | null, requirePasskey = false, passkeys = false } = {}) => {
    const { store } = await open();
    const env = { passwordHash: HASH, contactTo: 'owner@example.org' };
    const people = createPeopleStore(store.sql, env);
    await people.ensureEnvOwner(T0);
    const owner = (await people.envOwner())!;
    const now = () => T0;
    const sessions = createSessions(createSessionStore(store.sql, { legacyOwner: true }), now);
    const audit = createAuditLog(store.sql);
    const limits = createMailLimits({ logger: silentLogger });
    const mails: ContactEmail[] = [];
    const mailer = {
      send: async (email: ContactEmail): Promise<SendResult> => {
        if (smtp === 'failing') return { ok: false, permanent: false, reason: 'connection refused' };
        mails.push(email);
        return { ok: true };
      },
    };
    const pending: Promise<void>[] = [];
    const team: TeamDeps = {
      people,
      links: createLinks(store.sql, env),
      limits,
      mail: createLinkMailer({
        smtp: smtp === 'off' ? undefined : { from: 'site@site.test' },
        mailer: smtp === 'off' ? undefined : mailer,
        site: { name: 'Example', senderName: 'Example site' },
        allow: (email) => limits.linkMail(email),
      }),
      forms: ['contact', 'quote'],
      publicUrl: publicUrl ?? undefined,
      // A cheap stand-in: these tests are about the posts, not the hash (admin/password.ts has its own).
      hashPassword: async (password) => `test:${password}`,
      later: (work) => void pending.push(work()),
    };
    const deps = {
      team,
      sessions,
      audit,
      people,
      checkPassword: createPasswordCheck(undefined),
      throttle: createSignInThrottle({ logger: silentLogger }),
      requirePasskey,
      // Passkeys on (PUBLIC_URL on a domain): accept-link asks only whether they are; their own tests are tests/lib/people/passkeys.test.ts.
      passkeys: passkeys ? ({ count: async () => 0 } as unknown as Passkeys) : undefined,
      now,
    } as unknown as AdminDeps;
    let client = 0;
    /** Each post from another client: the reset requests' limit per client has a test of its own. */
    const send = (action: Parameters<typeof handleAdminPost>[0], fields: Record<string, string>, cookie?: string, origin = SITE) => {
      client += 1;
      // Without PUBLIC_URL the server takes the public origin from the request's Host: `origin` is both.
      return handleAdminPost(action, post(`/admin/actions/${action}`, fields, cookie, origin), deps, {
        publicOrigin: origin,
        clientKey: `198.51.100.${client}`,
        clientHash: 'c0ffee',
      });
    };
    /** A signed-in person's cookie and CSRF token. */
    const as = async (person: Person) => {
      const session = await sessions.start({ userId: person.id, stage: 'full', method: 'password' });
      return { cookie: `__Host-admin_session=${session.token}`, csrf: session.csrfToken, token: session.token };
    };
    const add = async (email: string, role: Person['role'], forms: string[] | null = null) => {
      const made = await people.create({ email, name: email.split('@')[0]!, role, forms, origin: 'cli' }, T0);
      if (!made.ok) throw new Error('not made');
      return made.person;
    };
    const entries = async () => (await audit.list(50, 0)).entries.reverse().map((entry) => [entry.action, entry.detail, entry.actorName]);
    return { store, people, owner, sessions, mails, pending, send, as, add, entries, team, deps };
  };

  const linkOf = (outcome: AdminOutcome | ContactEmail) => {
    const text = 'text' in outcome ? outcome.text : outcome.kind === 'shown' ? outcome.value : '';
    return LINK.exec(text)?.[1];
  };

  describe.skipIf(!available)('invitations', () => {
    test('the owner invites an editor: the link is mailed, followed once, and both entries name who acted', async () => {
      const { owner, as, send, mails, sessions, entries } = await setUp();
      const { cookie, csrf } = await as(owner);
      const invited = await send(
        'invite',
        { csrf, email: 'Eddie@Example.org', name: 'Eddie', role: 'editor', 'form.quote': 'on', 'form.newsletter': 'on' },
        cookie,
      );
      expect(invited).toEqual({ kind: 'redirect', location: '/admin/people?invited=1' });
      expect(mails).toHaveLength(1);
      expect(mails[0]).toMatchObject({
        to: 'eddie@example.org',
        envelope: { from: 'site@site.test', to: ['eddie@example.org'] },
        subject: 'You are invited to the inbox of Example',
      });
      expect(mails[0]!.text).toContain('Owner invited you');
      const token = linkOf(mails[0]!)!;
      const accepted = await send('accept-link', { token, name: 'Eddie Editor', password: 'twelve chars ok' });
      expect(accepted).toMatchObject({ kind: 'redirect', location: '/admin', cookie: expect.stringMatching(/^__Host-admin_session=/) });
      const session = await sessions.resume(/=([^;]+);/.exec((accepted as { cookie: string }).cookie)![1]);
      expect(session.ok && session.session.actor).toMatchObject({
        name: 'Eddie Editor',
        role: 'editor',
        scope: { all: false, forms: ['newsletter', 'quote'] },
      });
      expect(await send('accept-link', { token, name: 'Eve', password: 'twelve chars ok' })).toEqual({
        kind: 'refused',
        status: 400,
        message: 'This link cannot be used: it was used already, it expired, or a newer one replaced it. Ask the owner for a new one.',
      });
      expect(await entries()).toEqual([
        ['invite', 'eddie@example.org as editor (the newsletter list, quote)', 'Owner <owner@example.org>'],
        ['accept-link', 'joined as editor', 'Eddie Editor <eddie@example.org>'],
      ]);
    });

    test.each(['off', 'failing'] as const)('with SMTP %s the owner is shown the link once, and it works', async (smtp) => {
      const { owner, as, send, mails } = await setUp({ smtp });
      const { cookie, csrf } = await as(owner);
      const invited = await send('invite', { csrf, email: 'rita@example.org', name: 'Rita', role: 'reader', 'form.quote': 'on' }, cookie);
      expect(invited).toMatchObject({ kind: 'shown', title: 'Invitation link', back: '/admin/people' });
      expect(mails).toHaveLength(0);
      const token = linkOf(invited)!;
      expect(await send('accept-link', { token, name: 'Rita', password: 'twelve chars ok' })).toMatchObject({ kind: 'redirect', location: '/admin' });
    });

    test('a short password is refused and leaves the link unused', async () => {
      const { owner, as, send, mails } = await setUp();
      const { cookie, csrf } = await as(owner);
      await send('invite', { csrf, email: 'rita@example.org', role: 'reader' }, cookie);
      const token = linkOf(mails[0]!)!;
      expect(await send('accept-link', { token, name: 'Rita', password: 'short' })).toEqual({
        kind: 'refused',
        status: 400,
        message: 'The password must have at least 12 characters (it has 5).',
      });
      expect(await send('accept-link', { token, name: 'Rita', password: 'long enough now' })).toMatchObject({ kind: 'redirect' });
    });

    test('an unknown form, a taken address and a revoked invitation are refused', async () => {
      const { owner, as, send, mails, team } = await setUp();
      const { cookie, csrf } = await as(owner);
      expect(await send('invite', { csrf, email: 'rita@example.org', role: 'reader', 'form.payroll': 'on' }, cookie)).toMatchObject({ status: 400 });
      expect(await send('invite', { csrf, email: 'OWNER@example.org', role: 'reader' }, cookie)).toMatchObject({ status: 400 });
      await send('invite', { csrf, email: 'rita@example.org', role: 'reader' }, cookie);
      const [link] = await team.links.open(T0);
      expect(await send('revoke-link', { csrf, id: String(link!.id) }, cookie)).toEqual({ kind: 'redirect', location: '/admin/people?revoked=1' });
      expect(await send('accept-link', { token: linkOf(mails[0]!)!, name: 'Rita', password: 'long enough now' })).toMatchObject({ status: 400 });
    });

    test('an owner sends 20 invitations an hour; the 21st is refused 429', async () => {
      const { owner, as, send } = await setUp({ smtp: 'off' });
      const { cookie, csrf } = await as(owner);
      for (let i = 0; i < 20; i++) expect(await send('invite', { csrf, email: `p${i}@example.org`, role: 'reader' }, cookie)).toMatchObject({ kind: 'shown' });
      expect(await send('invite', { csrf, email: 'p20@example.org', role: 'reader' }, cookie)).toMatchObject({ kind: 'refused', status: 429 });
    });

    test('an editor or a reader cannot invite (403), and nothing is made', async () => {
      const { add, as, send, team } = await setUp();
      for (const role of ['editor', 'reader'] as const) {
        const { cookie, csrf } = await as(await add(`${role}@example.org`, role, ['quote']));
        expect(await send('invite', { csrf, email: 'x@example.org', role: 'owner' }, cookie)).toEqual({
          kind: 'refused',
          status: 403,
          message: 'Your role cannot do this.',
        });
      }
      expect(await team.links.open(T0)).toEqual([]);
    });
  });

  describe.skipIf(!available)('a person’s role, forms and removal', () => {
    test('the last owner can be neither demoted nor removed; with a second owner, they can', async () => {
      const { owner, as, send, add, people } = await setUp();
      const { cookie, csrf } = await as(owner);
      const lastOwner = { kind: 'refused', status: 400, message: 'This is the last owner: make someone else an owner first.' };
      expect(await send('update-person', { csrf, id: String(owner.id), role: 'editor', all: 'on' }, cookie)).toEqual(lastOwner);
      expect(await send('remove-person', { csrf, id: String(owner.id) }, cookie)).toEqual(lastOwner);
      expect((await people.find(owner.id))!.role).toBe('owner');
      const ada = await add('ada@example.org', 'owner');
      const second = await as(ada);
      expect(await send('remove-person', { csrf: second.csrf, id: String(owner.id) }, second.cookie)).toEqual({
        kind: 'redirect',
        location: '/admin/people?removed=1',
      });
      expect(await send('remove-person', { csrf: second.csrf, id: String(ada.id) }, second.cookie)).toEqual(lastOwner);
    });

    test('a removal ends the person’s sessions at once: their very next post is signed out', async () => {
      const { owner, as, send, add, sessions, entries } = await setUp();
      const { cookie, csrf } = await as(owner);
      const eddie = await add('eddie@example.org', 'editor', ['quote']);
      const theirs = await as(eddie);
      expect(await send('remove-person', { csrf, id: String(eddie.id) }, cookie)).toEqual({ kind: 'redirect', location: '/admin/people?removed=1' });
      expect((await sessions.resume(theirs.token)).ok).toBe(false);
      expect(await send('sign-out', { csrf: theirs.csrf }, theirs.cookie)).toEqual({ kind: 'redirect', location: '/admin?ended=expired' });
      expect(await entries()).toEqual([['remove-person', 'eddie <eddie@example.org>', 'Owner <owner@example.org>']]);
    });

    test('a changed role applies at the person’s next request', async () => {
      const { owner, as, send, add, entries } = await setUp({ smtp: 'off' });
      const { cookie, csrf } = await as(owner);
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const theirs = await as(rita);
      expect(await send('invite', { csrf: theirs.csrf, email: 'x@example.org', role: 'reader' }, theirs.cookie)).toMatchObject({ status: 403 });
      expect(await send('update-person', { csrf, id: String(rita.id), role: 'owner' }, cookie)).toEqual({
        kind: 'redirect',
        location: `/admin/people/${rita.id}?saved=1`,
      });
      expect(await send('invite', { csrf: theirs.csrf, email: 'x@example.org', role: 'reader' }, theirs.cookie)).toMatchObject({ kind: 'shown' });
      expect((await entries()).filter(([action]) => action !== 'refused')).toEqual([
        ['update-person', 'rita <rita@example.org>: owner (every form)', 'Owner <owner@example.org>'],
        ['invite', 'x@example.org as reader (no form)', 'rita <rita@example.org>'],
      ]);
    });

    test('removing an owner revokes the links they made and were shown: an invitation and another person’s sign-in link', async () => {
      const { owner, as, send, add } = await setUp({ smtp: 'off' });
      const me = await as(owner);
      const olga = await add('olga@example.org', 'owner');
      const hers = await as(olga);
      const invited = await send('invite', { csrf: hers.csrf, email: 'mallory@example.org', role: 'owner', all: 'on' }, hers.cookie);
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const ritasLink = await send('send-link', { csrf: hers.csrf, id: String(rita.id) }, hers.cookie);
      // A link the remaining owner made stays.
      const eddieInvited = await send('invite', { csrf: me.csrf, email: 'eddie@example.org', role: 'editor', all: 'on' }, me.cookie);
      expect(await send('remove-person', { csrf: me.csrf, id: String(olga.id) }, me.cookie)).toMatchObject({ kind: 'redirect' });
      for (const outcome of [invited, ritasLink]) {
        expect(await send('accept-link', { token: linkOf(outcome)!, name: 'M', password: 'twelve chars ok' })).toEqual({
          kind: 'refused',
          status: 400,
          message: LINK_UNUSABLE,
        });
      }
      expect(await send('accept-link', { token: linkOf(eddieInvited)!, name: 'Eddie', password: 'twelve chars ok' })).toMatchObject({
        kind: 'redirect',
        location: '/admin',
      });
    });

    test('the forms of a person are those of the site and the list; "every form" is null', async () => {
      const { owner, as, send, add, people } = await setUp();
      const { cookie, csrf } = await as(owner);
      const eddie = await add('eddie@example.org', 'editor', ['quote']);
      await send('update-person', { csrf, id: String(eddie.id), role: 'editor', 'form.contact': 'on', 'form.newsletter': 'on' }, cookie);
      expect((await people.find(eddie.id))!.forms).toEqual(['contact', 'newsletter']);
      await send('update-person', { csrf, id: String(eddie.id), role: 'reader', all: 'on' }, cookie);
      expect((await people.find(eddie.id))!).toMatchObject({ role: 'reader', forms: null });
      expect(await send('update-person', { csrf, id: '999', role: 'reader' }, cookie)).toMatchObject({ status: 404 });
    });
  });

  describe.skipIf(!available)('sign-in links', () => {
    test('a reset request gets one answer whoever the address is; only a person is mailed, at most 3 a day', async () => {
      const { send, add, mails, pending } = await setUp();
      await add('rita@example.org', 'reader', ['quote']);
      const answers = [];
      for (const email of ['nobody@example.org', 'rita@example.org', 'RITA@example.org', 'rita@example.org', 'rita@example.org', 'not an address']) {
        answers.push(await send('request-reset', { email }));
      }
      expect(new Set(answers.map((answer) => JSON.stringify(answer)))).toEqual(
        new Set([JSON.stringify({ kind: 'redirect', location: '/admin/reset?sent=1' })]),
      );
      await Promise.all(pending);
      expect(mails.map((mail) => mail.to)).toEqual(['rita@example.org', 'rita@example.org', 'rita@example.org']);
      expect(mails[0]!.subject).toBe('Your sign-in link for the inbox of Example');
    });

    test('over the address’s 3 mails a day a reset request makes no link: the last one mailed still works (decision 0304)', async () => {
      const { send, add, mails, pending } = await setUp();
      await add('rita@example.org', 'reader', ['quote']);
      for (let asked = 0; asked < 5; asked += 1) {
        await send('request-reset', { email: 'rita@example.org' });
        await Promise.all(pending.splice(0));
      }
      expect(mails).toHaveLength(3);
      expect(await send('accept-link', { token: linkOf(mails[2]!)!, password: 'a new password!' })).toMatchObject({
        kind: 'redirect',
        location: '/admin/account?reset=1',
      });
    });

    test('a reset link sets a new password and signs the person in; the older link no longer works', async () => {
      const { send, add, mails, pending, people } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      await send('request-reset', { email: 'rita@example.org' });
      await Promise.all(pending.splice(0));
      await send('request-reset', { email: 'rita@example.org' });
      await Promise.all(pending.splice(0));
      const [older, newer] = mails.map((mail) => linkOf(mail)!);
      expect(await send('accept-link', { token: older!, password: 'a new password!' })).toMatchObject({ status: 400 });
      expect(await send('accept-link', { token: newer!, password: 'a new password!' })).toMatchObject({ kind: 'redirect', location: '/admin/account?reset=1' });
      expect((await people.find(rita.id))!.passwordHash).toBe('test:a new password!');
    });

    test('a followed reset link ends the person’s other sessions, the new one alone lives (decision 0304)', async () => {
      const { send, add, as, mails, pending, sessions } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const elsewhere = await as(rita);
      await send('request-reset', { email: 'rita@example.org' });
      await Promise.all(pending);
      const followed = await send('accept-link', { token: linkOf(mails[0]!)!, password: 'a new password!' });
      expect(await sessions.resume(elsewhere.token)).toEqual({ ok: false, reason: 'unknown' });
      const token = followed.kind === 'redirect' ? /admin_session=([^;]+)/.exec(followed.cookie ?? '')?.[1] : undefined;
      expect((await sessions.resume(token)).ok).toBe(true);
    });

    test('a reset request for another Host mails a link on PUBLIC_URL, never on the Host it came for', async () => {
      const { send, add, mails, pending } = await setUp();
      await add('rita@example.org', 'reader', ['quote']);
      await send('request-reset', { email: 'rita@example.org' }, undefined, 'http://evil.example');
      await Promise.all(pending);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.text).toMatch(LINK);
      expect(mails[0]!.text).not.toContain('evil.example');
    });

    test('without PUBLIC_URL a reset request mails nothing and makes no link: the Host of a post is the sender’s to choose', async () => {
      const { send, add, mails, pending, store } = await setUp({ publicUrl: null });
      await add('rita@example.org', 'reader', ['quote']);
      expect(await send('request-reset', { email: 'rita@example.org' }, undefined, 'http://evil.example')).toEqual({
        kind: 'redirect',
        location: '/admin/reset?sent=1',
      });
      await Promise.all(pending);
      expect(mails).toEqual([]);
      expect(await store.sql.all('SELECT id FROM admin_links')).toEqual([]);
    });

    test('without PUBLIC_URL an owner’s invitation and sign-in link are shown to them, not mailed', async () => {
      const { owner, as, send, add, mails } = await setUp({ publicUrl: null });
      const me = await as(owner);
      const invited = await send('invite', { csrf: me.csrf, email: 'eddie@example.org', role: 'editor', all: 'on' }, me.cookie);
      expect(invited).toMatchObject({ kind: 'shown', title: 'Invitation link' });
      expect(invited.kind === 'shown' && invited.message).toContain('PUBLIC_URL');
      expect(linkOf(invited)).toBeDefined();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const sent = await send('send-link', { csrf: me.csrf, id: String(rita.id) }, me.cookie);
      expect(sent).toMatchObject({ kind: 'shown', title: 'Sign-in link' });
      expect(mails).toEqual([]);
    });

    test('ADMIN_REQUIRE_PASSKEY: a link opens an enrolment session (a passkey to add), never a full one', async () => {
      const { send, add, mails, pending, sessions } = await setUp({ requirePasskey: true });
      await add('rita@example.org', 'reader', ['quote']);
      await send('request-reset', { email: 'rita@example.org' });
      await Promise.all(pending);
      const followed = await send('accept-link', { token: linkOf(mails[0]!)!, password: 'a new password!' });
      expect(followed).toMatchObject({ kind: 'redirect', location: '/admin/account?enroll=1' });
      const token = followed.kind === 'redirect' ? /admin_session=([^;]+)/.exec(followed.cookie ?? '')?.[1] : undefined;
      const resumed = await sessions.resume(token);
      expect(resumed.ok && resumed.session.actor).toMatchObject({ stage: 'enroll' });
    });

    test('the first owner gets no link: their password is ADMIN_PASSWORD_HASH', async () => {
      const { owner, add, as, send, mails, pending } = await setUp();
      expect(await send('request-reset', { email: 'owner@example.org' })).toEqual({ kind: 'redirect', location: '/admin/reset?sent=1' });
      await Promise.all(pending);
      expect(mails).toEqual([]);
      const other = await as(await add('ada@example.org', 'owner'));
      expect(await send('send-link', { csrf: other.csrf, id: String(owner.id) }, other.cookie)).toEqual({
        kind: 'refused',
        status: 400,
        message:
          'This owner signs in with ADMIN_PASSWORD_HASH: change their password there (npm run admin -- hash-password); lost passkeys: npm run admin -- remove-passkeys --first-owner.',
      });
    });

    test('a made-up token is refused before any password is hashed', async () => {
      const { send, team } = await setUp();
      let hashed = 0;
      team.hashPassword = async (password) => {
        hashed += 1;
        return `test:${password}`;
      };
      expect(await send('accept-link', { token: `sfl_${'x'.repeat(43)}`, name: 'Mallory', password: 'long enough now' })).toMatchObject({ status: 400 });
      expect(hashed).toBe(0);
    });

    test('one client makes 5 reset requests an hour; the 6th is refused 429', async () => {
      const { team, store } = await setUp();
      const deps = { team, now: () => T0 } as unknown as AdminDeps;
      const context = { publicOrigin: SITE, clientKey: '203.0.113.7', clientHash: 'c0ffee' };
      const outcomes = [];
      for (let i = 0; i < 6; i++)
        outcomes.push(await handleAdminPost('request-reset', post('/admin/actions/request-reset', { email: `a${i}@example.org` }), deps, context));
      expect(outcomes.slice(0, 5).every((outcome) => outcome.kind === 'redirect')).toBe(true);
      expect(outcomes[5]).toMatchObject({ kind: 'refused', status: 429, headers: { 'retry-after': '3600' } });
      void store;
    });

    test('the owner sends a person a sign-in link: mailed, or shown once when the send fails', async () => {
      for (const smtp of ['on', 'failing'] as const) {
        const { owner, as, send, add, mails, entries } = await setUp({ smtp });
        const { cookie, csrf } = await as(owner);
        const pat = await add('pat@example.org', 'reader', ['quote']);
        const outcome = await send('send-link', { csrf, id: String(pat.id) }, cookie);
        if (smtp === 'on') {
          expect(outcome).toEqual({ kind: 'redirect', location: `/admin/people/${pat.id}?sent=1` });
          expect(mails[0]!.text).toContain('Owner sent you a link');
        } else {
          expect(outcome).toMatchObject({ kind: 'shown', title: 'Sign-in link', back: `/admin/people/${pat.id}` });
          expect(linkOf(outcome)).toBeDefined();
        }
        expect(await entries()).toEqual([['send-link', 'pat <pat@example.org>', 'Owner <owner@example.org>']]);
      }
    });
  });

  describe.skipIf(!available)('a passkey instead of a password (decision 0298)', () => {
    /** The session a redirect's cookie carries. */
    const sessionOf = async (sessions: Awaited<ReturnType<typeof setUp>>['sessions'], outcome: AdminOutcome) => {
      const cookie = outcome.kind === 'redirect' ? outcome.cookie : undefined;
      const token = cookie && /=([^;]+);/.exec(cookie)?.[1];
      const resumed = token ? await sessions.resume(token) : undefined;
      if (!resumed?.ok) throw new Error(`no session in ${JSON.stringify(outcome)}`);
      return { token: token!, cookie: `__Host-admin_session=${token!}`, session: resumed.session };
    };

    test('with passkeys on, an invitation accepted with no password makes the person without one, in an enrolment session, the link used once', async () => {
      const { owner, as, send, mails, sessions, people, entries } = await setUp({ passkeys: true });
      const { cookie, csrf } = await as(owner);
      await send('invite', { csrf, email: 'pia@example.org', role: 'editor', 'form.quote': 'on' }, cookie);
      const token = linkOf(mails[0]!)!;
      const accepted = await send('accept-link', { token, name: 'Pia', password: '' });
      expect(accepted).toMatchObject({
        kind: 'redirect',
        location: '/admin/account?enroll=1',
        cookie: expect.stringMatching(/^__Host-admin_session=/),
      });
      const theirs = await sessionOf(sessions, accepted);
      expect(theirs.session.actor).toMatchObject({ name: 'Pia', role: 'editor', stage: 'enroll' });
      expect(theirs.session.method).toBe('link');
      const pia = (await people.findByEmail('pia@example.org'))!;
      expect(pia).toMatchObject({ name: 'Pia', role: 'editor', forms: ['quote'], passwordHash: null, origin: 'invited' });
      // Used once: the same link again, with or without a password, is the one refusal.
      expect(await send('accept-link', { token, name: 'Pia', password: '' })).toEqual({ kind: 'refused', status: 400, message: LINK_UNUSABLE });
      expect(await send('accept-link', { token, name: 'Pia', password: 'twelve chars ok' })).toEqual({ kind: 'refused', status: 400, message: LINK_UNUSABLE });
      // With no password, an empty one does not sign in either.
      expect(await send('sign-in', { email: 'pia@example.org', password: '' })).toEqual({ kind: 'redirect', location: '/admin?failed=email' });
      expect((await entries()).filter(([action]) => action === 'accept-link')).toEqual([
        ['accept-link', 'joined as editor, to add a passkey', 'Pia <pia@example.org>'],
      ]);
    });

    test('the enrolment session of a link posts nothing but the passkey posts and sign-out, not even what its role allows', async () => {
      const { owner, as, send, mails, sessions, team } = await setUp({ passkeys: true, smtp: 'off' });
      const { cookie, csrf } = await as(owner);
      const invited = await send('invite', { csrf, email: 'olga@example.org', role: 'owner' }, cookie);
      const accepted = await send('accept-link', { token: linkOf(invited)!, name: 'Olga', password: '' });
      const theirs = await sessionOf(sessions, accepted);
      const enrolOnly = { kind: 'refused', status: 403, message: ENROLL_ONLY };
      const own = { csrf: theirs.session.csrfToken };
      expect(await send('invite', { ...own, email: 'x@example.org', role: 'reader' }, theirs.cookie)).toEqual(enrolOnly);
      expect(await send('mail-preferences', { ...own }, theirs.cookie)).toEqual(enrolOnly);
      expect(await send('retry', { ...own, id: '1' }, theirs.cookie)).toEqual(enrolOnly);
      expect(await team.links.open(T0)).toEqual([]);
      expect(mails).toEqual([]);
      expect(await send('sign-out', own, theirs.cookie)).toMatchObject({ kind: 'redirect' });
      expect((await sessions.resume(theirs.token)).ok).toBe(false);
    });

    test('with passkeys on, a reset link accepted with no password keeps the password as it is and starts an enrolment', async () => {
      const { send, add, mails, pending, people, sessions } = await setUp({ passkeys: true });
      const rita = await add('rita@example.org', 'reader', ['quote']);
      await people.update(rita.id, { passwordHash: 'test:the old password' }, T0);
      await send('request-reset', { email: 'rita@example.org' });
      await Promise.all(pending.splice(0));
      const accepted = await send('accept-link', { token: linkOf(mails[0]!)!, password: '' });
      expect(accepted).toMatchObject({ kind: 'redirect', location: '/admin/account?enroll=1' });
      expect((await sessionOf(sessions, accepted)).session.actor).toMatchObject({ id: rita.id, stage: 'enroll' });
      expect((await people.find(rita.id))!.passwordHash).toBe('test:the old password');
    });

    test('with passkeys off, an empty password is refused as any short one, and the link stays unused', async () => {
      const { owner, as, send, mails, people } = await setUp({ passkeys: false });
      const { cookie, csrf } = await as(owner);
      await send('invite', { csrf, email: 'pia@example.org', role: 'reader' }, cookie);
      const token = linkOf(mails[0]!)!;
      expect(await send('accept-link', { token, name: 'Pia', password: '' })).toEqual({
        kind: 'refused',
        status: 400,
        message: 'The password must have at least 12 characters (it has 0).',
      });
      expect(await send('accept-link', { token, name: 'Pia' })).toMatchObject({ kind: 'refused', status: 400 });
      expect(await people.findByEmail('pia@example.org')).toBeUndefined();
      expect(await send('accept-link', { token, name: 'Pia', password: 'twelve chars ok' })).toMatchObject({ kind: 'redirect', location: '/admin' });
    });
  });
});
