/**
 * `npm run admin -- add-user | users | remove-user | reset-link` in this process (people/command.ts),
 * on both engines: tests/cli/admin.test.ts runs the command in a child process, which the mutation
 * run cannot reach; the arguments, the exit codes, what reaches stdout and the audit are pinned here.
 */
import { describe, expect, test } from 'vitest';
import { createAuditLog } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createLinks } from '../../../packages/site-forms/src/lib/people/links.ts';
import { type PeopleCommand, parsePeopleArgs, runPeopleCommand } from '../../../packages/site-forms/src/lib/people/command.ts';
import { createPeopleStore, type EnvOwner } from '../../../packages/site-forms/src/lib/people/store.ts';
import { testEngines } from '../../support/stores.ts';

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const T0 = new Date('2030-01-01T10:00:00.000Z');

describe('the arguments of the people commands', () => {
  test.each([
    [['users'], { ok: true, command: { name: 'users' } }],
    [['users', 'all'], { ok: false, problem: 'Unexpected argument: all' }],
    [['remove-user', ' Eddie@Example.org '], { ok: true, command: { name: 'remove-user', email: 'eddie@example.org' } }],
    [['remove-user'], { ok: false, problem: 'remove-user needs one email address.' }],
    [['reset-link', 'a@b.c', 'd@e.f'], { ok: false, problem: 'reset-link needs one email address.' }],
    [['reset-link', 'eddie'], { ok: false, problem: 'reset-link: "eddie" is no email address.' }],
    [['remove-passkeys', 'Ada@Example.org'], { ok: true, command: { name: 'remove-passkeys', email: 'ada@example.org' } }],
    [['remove-passkeys', '--first-owner'], { ok: true, command: { name: 'remove-passkeys', email: undefined } }],
    [['remove-passkeys'], { ok: false, problem: 'remove-passkeys needs one email address, or --first-owner.' }],
    [
      ['add-user', 'Ada@Example.org', '--role', 'owner', '--name', ' Ada\nLovelace '],
      { ok: true, command: { name: 'add-user', email: 'ada@example.org', role: 'owner', forms: null, personName: 'Ada Lovelace' } },
    ],
    [
      ['add-user', '--role=reader', '--forms=quote, contact,quote', 'rita@example.org'],
      { ok: true, command: { name: 'add-user', email: 'rita@example.org', role: 'reader', forms: ['contact', 'quote'], personName: '' } },
    ],
    [['add-user'], { ok: false, problem: 'add-user needs the email address of the person to add.' }],
    [['add-user', 'ada@example.org'], { ok: false, problem: 'add-user needs --role owner, editor or reader.' }],
    [['add-user', 'ada@example.org', '--role', 'admin'], { ok: false, problem: 'add-user needs --role owner, editor or reader.' }],
    [['add-user', 'ada@example.org', '--role'], { ok: false, problem: '--role needs a value.' }],
    [['add-user', 'ada@example.org', '--role', 'owner', '--role', 'reader'], { ok: false, problem: '--role is given twice.' }],
    [['add-user', 'ada@example.org', 'bob@example.org', '--role', 'owner'], { ok: false, problem: 'Unexpected argument: bob@example.org' }],
    [['add-user', 'ada@example.org', '--role', 'owner', '--admin'], { ok: false, problem: 'Unexpected argument: --admin' }],
    [['add-user', 'ada', '--role', 'owner'], { ok: false, problem: 'add-user: "ada" is no email address.' }],
    [
      ['add-user', 'ada@example.org', '--role', 'owner', '--forms', 'contact'],
      { ok: false, problem: 'An owner sees every form: --forms is for an editor or a reader.' },
    ],
    [['add-user', 'ada@example.org', '--role', 'reader', '--forms', 'Contact!'], { ok: false, problem: '--forms: "Contact!" is no form name.' }],
    [['add-user', 'ada@example.org', '--role', 'reader', '--name', 'x'.repeat(101)], { ok: false, problem: '--name has at most 100 characters.' }],
    [['login'], { ok: false, problem: 'Unknown command: login' }],
  ])('%j reads as %j', (args, expected) => {
    expect(parsePeopleArgs(args)).toEqual(expected);
  });
});

describe.each(testEngines())('the people commands on $name', (engine) => {
  const setUp = async (env: EnvOwner = { passwordHash: undefined, contactTo: undefined }) => {
    const { store } = await engine.open();
    const audit = createAuditLog(store.sql);
    const people = createPeopleStore(store.sql, env);
    const links = createLinks(store.sql, env);
    const run = async (command: PeopleCommand, publicUrl = 'https://forms.example.org') => {
      let out = '';
      let err = '';
      const code = await runPeopleCommand(command as Exclude<PeopleCommand, { name: 'help' }>, {
        sql: store.sql,
        people,
        links,
        audit,
        forms: ['contact', 'quote'],
        publicUrl,
        out: (text) => {
          out += text;
        },
        err: (text) => {
          err += text;
        },
        now: () => T0,
      });
      return { code, out, err };
    };
    const parsed = (args: string[]) => {
      const result = parsePeopleArgs(args);
      if (!result.ok) throw new Error(result.problem);
      return result.command;
    };
    return { run, parsed, people, links, audit, store };
  };

  test.skipIf(!engine.available)('add-user: the invitation link alone on stdout, on PUBLIC_URL; audited as the command line', async () => {
    const { run, parsed, links, audit } = await setUp();
    const added = await run(parsed(['add-user', 'eddie@example.org', '--role', 'editor', '--forms', 'quote,newsletter', '--name', 'Eddie']));
    expect(added.code).toBe(0);
    expect(added.out).toMatch(/^https:\/\/forms\.example\.org\/admin\/welcome\/sfl_[A-Za-z0-9_-]{43}\n$/);
    expect(added.err).toContain('until 2030-01-04T10:00:00.000Z');
    const token = added.out.trim().split('/').pop()!;
    expect(await links.peek(token, T0)).toMatchObject({
      kind: 'invite',
      email: 'eddie@example.org',
      role: 'editor',
      forms: ['newsletter', 'quote'],
      createdBy: 'cli',
    });
    expect((await audit.list(10, 0)).entries).toEqual([
      {
        at: T0.toISOString(),
        action: 'invite',
        detail: 'eddie@example.org (Eddie) as editor (the newsletter list, quote)',
        client: 'command line',
        repeats: 1,
        actor: 'cli',
        actorName: 'the command line',
      },
    ]);
  });

  test.skipIf(!engine.available)('add-user refusals: no PUBLIC_URL (2), an unknown form (2), an address already a person (1)', async () => {
    const { run, parsed, people, audit } = await setUp();
    const noUrl = await run(parsed(['add-user', 'ada@example.org', '--role', 'owner']), '');
    expect(noUrl).toMatchObject({ code: 2, out: '' });
    expect(noUrl.err).toContain('Set PUBLIC_URL');
    const unknown = await run(parsed(['add-user', 'ada@example.org', '--role', 'reader', '--forms', 'contact,shop']));
    expect(unknown).toEqual({ code: 2, out: '', err: 'No form is named "shop": the forms are contact, quote, newsletter.\n' });
    await people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, T0);
    const taken = await run(parsed(['add-user', 'Ada@example.org', '--role', 'reader']));
    expect(taken).toMatchObject({ code: 1, out: '' });
    expect((await audit.list(10, 0)).total).toBe(0);
  });

  test.skipIf(!engine.available)('users: the people (the first owner of ADMIN_PASSWORD_HASH made first), then the pending invitations', async () => {
    const { run, parsed, people } = await setUp({ passwordHash: HASH, contactTo: undefined });
    const made = await people.create(
      { email: 'rita@example.org', name: 'Rita', role: 'reader', forms: ['contact'], passwordHash: HASH, origin: 'invited' },
      T0,
    );
    if (made.ok) await people.signedIn(made.person.id, T0);
    await run(parsed(['add-user', 'eddie@example.org', '--role', 'editor']));
    const listed = await run(parsed(['users']));
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n')).toEqual([
      'EMAIL             NAME   ROLE    FORMS       PASSWORD             PASSKEYS  LAST SIGN-IN',
      'rita@example.org  Rita   reader  contact     yes                  0         2030-01-01T10:00:00.000Z',
      '(none)            Owner  owner   every form  ADMIN_PASSWORD_HASH  0         never',
      '',
      'Pending invitations:',
      'EMAIL              ROLE    FORMS       EXPIRES',
      'eddie@example.org  editor  every form  2030-01-04T10:00:00.000Z',
      '',
    ]);
  });

  test.skipIf(!engine.available)('remove-user: the last owner stays (1), an unknown address (1), a person goes with their sessions', async () => {
    const { run, parsed, people, audit } = await setUp();
    const owner = await people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, T0);
    expect(owner.ok).toBe(true);
    const last = await run(parsed(['remove-user', 'ada@example.org']));
    expect(last).toMatchObject({ code: 1, out: '' });
    expect(last.err).toContain('the last owner');
    expect(await run(parsed(['remove-user', 'nobody@example.org']))).toMatchObject({ code: 1, out: '' });
    await people.create({ email: 'rita@example.org', name: 'Rita', role: 'reader', origin: 'invited' }, T0);
    expect(await run(parsed(['remove-user', 'rita@example.org']))).toMatchObject({ code: 0, out: '' });
    expect(await people.findByEmail('rita@example.org')).toBeUndefined();
    expect((await audit.list(10, 0)).entries.map((entry) => [entry.action, entry.detail, entry.actor])).toEqual([
      ['remove-person', 'Rita <rita@example.org>', 'cli'],
    ]);
  });

  test.skipIf(!engine.available)(
    'reset-link: a one-hour link alone on stdout; none for the first owner or an unknown address (1), none without PUBLIC_URL (2)',
    async () => {
      const { run, parsed, people, links } = await setUp({ passwordHash: HASH, contactTo: 'owner@example.org' });
      await people.create({ email: 'rita@example.org', role: 'reader', origin: 'invited' }, T0);
      expect(await run(parsed(['reset-link', 'rita@example.org']), '')).toMatchObject({ code: 2, out: '' });
      expect(await run(parsed(['reset-link', 'nobody@example.org']))).toMatchObject({ code: 1, out: '' });
      const env = await run(parsed(['reset-link', 'owner@example.org']));
      expect(env).toMatchObject({ code: 1, out: '' });
      expect(env.err).toContain('ADMIN_PASSWORD_HASH');
      const made = await run(parsed(['reset-link', 'rita@example.org']));
      expect(made.code).toBe(0);
      expect(made.out).toMatch(/^https:\/\/forms\.example\.org\/admin\/welcome\/sfl_[A-Za-z0-9_-]{43}\n$/);
      expect(await links.peek(made.out.trim().split('/').pop()!, T0)).toMatchObject({ kind: 'reset', email: 'rita@example.org', createdBy: 'cli' });
      expect(made.err).toContain('until 2030-01-01T11:00:00.000Z');
    },
  );
  test.skipIf(!engine.available)(
    'remove-passkeys: every passkey of a person goes with their sessions; --first-owner is the owner of ADMIN_PASSWORD_HASH; an unknown address (1)',
    async () => {
      const { run, parsed, people, audit, store } = await setUp({ passwordHash: HASH, contactTo: undefined });
      const rita = await people.create({ email: 'rita@example.org', name: 'Rita', role: 'reader', passwordHash: HASH, origin: 'invited' }, T0);
      if (!rita.ok) throw new Error('Rita not made');
      await people.ensureEnvOwner(T0);
      const owner = (await people.envOwner())!;
      const at = T0.toISOString();
      for (const [id, userId] of [
        ['ritas-laptop', rita.person.id],
        ['ritas-phone', rita.person.id],
        ['owners-key', owner.id],
      ] as const) {
        await store.sql.run(
          "INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, device_type, backed_up, created_at) VALUES (?, ?, 'k', 'k', 0, 'singleDevice', 0, ?)",
          [id, userId, at],
        );
      }
      await store.sql.run(
        "INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES ('h', ?, 'full', 'passkey', ?, ?)",
        [rita.person.id, at, at],
      );
      const removed = await run(parsed(['remove-passkeys', 'rita@example.org']));
      expect(removed).toMatchObject({ code: 0, out: '' });
      expect(removed.err).toContain('Removed 2 passkeys of Rita <rita@example.org> and ended their sessions: they sign in with their password');
      const left = async () => (await store.sql.all<{ id: string }>('SELECT id FROM admin_passkeys ORDER BY id')).map((row) => row.id);
      expect(await left()).toEqual(['owners-key']);
      await expect(store.sql.all('SELECT token_hash FROM admin_person_sessions')).resolves.toEqual([]);
      const first = await run(parsed(['remove-passkeys', '--first-owner']));
      expect(first).toMatchObject({ code: 0, out: '' });
      expect(first.err).toContain('Removed 1 passkey of Owner and ended their sessions: they sign in with the password of ADMIN_PASSWORD_HASH');
      expect(await left()).toEqual([]);
      expect(await run(parsed(['remove-passkeys', 'nobody@example.org']))).toMatchObject({ code: 1, out: '' });
      expect((await audit.list(10, 0)).entries.map((entry) => [entry.action, entry.detail, entry.actor])).toEqual([
        ['passkey-removed', 'every passkey of Owner (1)', 'cli'],
        ['passkey-removed', 'every passkey of Rita <rita@example.org> (2)', 'cli'],
      ]);
    },
  );
});
