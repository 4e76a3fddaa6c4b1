/**
 * Who may do what (issue 42, "Roles" and "API keys and a REST API"; decision 0263): the whole
 * matrix of roles and key scopes against every permission, each on a form of the actor's, on
 * another form and with no form; the role before the form (403 before 404); the enrolment stage;
 * and the SQL condition that limits a query to an actor's forms, run on both engines (decision 0264).
 */
import { describe, expect, test } from 'vitest';
import {
  type Actor,
  type Authorization,
  actorLabel,
  authorize,
  formScope,
  type KeyActor,
  keyActor,
  PERMISSIONS,
  type Permission,
  type PersonActor,
  personActor,
  type Role,
  scopeClause,
} from '../../../packages/site-forms/src/lib/access/permissions.ts';
import { preparedStatements } from '../../../packages/site-forms/src/lib/sql/postgres.ts';
import { testEngines } from '../../support/stores.ts';

/** Who holds a permission: a person by their role, a key by its scope. */
type Holder = Role | 'read key' | 'write key';
const HOLDERS: Holder[] = ['owner', 'editor', 'reader', 'read key', 'write key'];

/**
 * The matrix, written from the words (quoted), not from the code. ✓ may, – may not.
 * "owner: everything (people, webhooks, API keys, exports, erasure, settings shown in the admin)";
 * "editor: read, spam / not spam, retry, delete messages, export their forms";
 * "reader: read only — no button that changes anything, and the server refuses such a post (403)";
 * "A read key changes nothing (403)"; the API has messages (list, one, mark spam / not spam,
 * delete), subscribers of the local list (list, erase) and no export.
 */
const MATRIX: Array<[Permission, string, string]> = [
  // [permission, 'owner editor reader read-key write-key', the words]
  ['messages.read', '✓ ✓ ✓ ✓ ✓', 'every role reads; the API lists messages for either key'],
  ['messages.triage', '✓ ✓ – – ✓', 'editor: "spam / not spam, retry"; the API marks spam / not spam'],
  ['messages.delete', '✓ ✓ – – ✓', 'editor: "delete messages"; the API deletes'],
  ['messages.export', '✓ ✓ – – –', 'editor: "export their forms"; the API has no export'],
  ['subscribers.read', '✓ ✓ ✓ ✓ ✓', 'read, by every role and key, of the local list'],
  ['subscribers.export', '✓ ✓ – – –', 'editor: "export their forms" (the list is one of them); the API has no export'],
  ['subscribers.erase', '✓ – – – ✓', 'owner: "erasure"; the API erases a subscriber'],
  ['signups.retry', '✓ – – – –', 'the newsletter provider’s queue: the owner’s, not a message'],
  ['webhooks.manage', '✓ – – – –', 'owner: "webhooks"'],
  ['people.manage', '✓ – – – –', 'owner: "people"'],
  ['keys.manage', '✓ – – – –', 'owner: "API keys"'],
  ['audit.read', '✓ – – – –', 'the log of everyone’s actions: the owner’s'],
  ['settings.read', '✓ – – – –', 'owner: "settings shown in the admin"'],
  ['self.manage', '✓ ✓ ✓ – –', 'each person their own password, passkeys and mail; a key is no person'],
];

/** The permissions of the local list: "needs `newsletter` in scope" (the plan's table). */
const ON_THE_LIST: Permission[] = ['subscribers.read', 'subscribers.export', 'subscribers.erase'];

const granted = (permission: Permission, holder: Holder) => {
  const row = MATRIX.find(([name]) => name === permission)!;
  return row[1].split(' ')[HOLDERS.indexOf(holder)] === '✓';
};

/** An actor of each kind, with the forms given (null: every form, present and future). */
function actorOf(holder: Holder, forms: string[] | null): Actor {
  if (holder === 'read key' || holder === 'write key') {
    return keyActor({ id: 7, name: 'ci-export', scope: holder === 'read key' ? 'read' : 'write', forms });
  }
  return personActor({ id: 3, name: 'Ada Lovelace', email: 'ada@example.org', role: holder, forms, stage: 'full' });
}

/** Where the actor may look: "A person limited to some forms sees only those forms'…"; "a key limited to forms sees only them (404 for others)". */
const SCOPES: Array<{ label: string; forms: string[] | null }> = [
  { label: 'limited to quote', forms: ['quote'] },
  { label: 'limited to quote and the list', forms: ['quote', 'newsletter'] },
  { label: 'with every form', forms: null },
];
const TARGETS: Array<{ label: string; target: { form: string } | undefined }> = [
  { label: 'a quote message', target: { form: 'quote' } },
  { label: 'a contact message', target: { form: 'contact' } },
  { label: 'no one message (a list)', target: undefined },
];

/** What a granted permission answers: the role passed, so only the form is left to judge. */
function expectedWhenGranted(holder: Holder, permission: Permission, forms: string[] | null, target: { form: string } | undefined): Authorization {
  // "owner: everything": an owner sees every form whatever forms their row names (decision 0263).
  if (holder === 'owner' || forms === null) return 'allow';
  // The list's permissions are about the list, whichever message is named.
  const form = ON_THE_LIST.includes(permission) ? 'newsletter' : target?.form;
  if (form === undefined) return 'allow';
  return forms.includes(form) ? 'allow' : 'not-found';
}

const cases = MATRIX.flatMap(([permission]) =>
  HOLDERS.flatMap((holder) =>
    SCOPES.flatMap(({ label: scope, forms }) =>
      TARGETS.map(({ label: on, target }) => {
        const expected = granted(permission, holder) ? expectedWhenGranted(holder, permission, forms, target) : 'forbidden';
        return { permission, holder, scope, forms, on, target, expected };
      }),
    ),
  ),
);

describe('the matrix of roles, keys and permissions', () => {
  test('has a row for every permission, and names none that does not exist', () => {
    expect(MATRIX.map(([permission]) => permission).sort()).toEqual([...PERMISSIONS].sort());
  });

  test.each(cases)('$holder $scope: $permission on $on → $expected', ({ permission, holder, forms, target, expected }) => {
    expect(authorize(actorOf(holder, forms), permission, target)).toBe(expected);
  });
});

describe('the role first, then the form', () => {
  test('a reader asking to mark a message of a form they cannot see as spam is refused for the role (403), not told it is missing', () => {
    const reader = actorOf('reader', ['quote']);
    expect(authorize(reader, 'messages.triage', { form: 'contact' })).toBe('forbidden');
    expect(authorize(reader, 'messages.delete', { form: 'quote' })).toBe('forbidden');
  });

  test('a read key limited to quote gets 403 for deleting a contact message, a write key 404', () => {
    expect(authorize(actorOf('read key', ['quote']), 'messages.delete', { form: 'contact' })).toBe('forbidden');
    expect(authorize(actorOf('write key', ['quote']), 'messages.delete', { form: 'contact' })).toBe('not-found');
  });

  test('an editor limited to quote gets 404 for a contact message, as for a message that does not exist', () => {
    const editor = actorOf('editor', ['quote']);
    expect(authorize(editor, 'messages.triage', { form: 'contact' })).toBe('not-found');
    expect(authorize(editor, 'messages.read', { form: 'contact' })).toBe('not-found');
    expect(authorize(editor, 'messages.triage', { form: 'quote' })).toBe('allow');
  });

  test('a person with no forms at all sees no message and not the list, and may still open a (then empty) list', () => {
    const editor = actorOf('editor', []);
    expect(authorize(editor, 'messages.read', { form: 'quote' })).toBe('not-found');
    expect(authorize(editor, 'subscribers.read')).toBe('not-found');
    expect(authorize(editor, 'messages.read')).toBe('allow');
  });

  test('the list among a person’s forms opens the list, and no other form’s messages', () => {
    const editor = actorOf('editor', ['newsletter']);
    expect(authorize(editor, 'messages.read', { form: 'quote' })).toBe('not-found');
    expect(authorize(editor, 'subscribers.export')).toBe('allow');
  });
});

describe('a session that must first register a passkey (ADMIN_REQUIRE_PASSKEY)', () => {
  const roles: Role[] = ['owner', 'editor', 'reader'];
  const enrolling = (role: Role): PersonActor => personActor({ id: 4, name: 'Grace Hopper', email: 'grace@example.org', role, forms: null, stage: 'enroll' });

  test.each(roles)('an enrolling %s may manage only their own sign-in', (role) => {
    const actor = enrolling(role);
    expect(authorize(actor, 'self.manage')).toBe('allow');
    const others = PERMISSIONS.filter((permission) => permission !== 'self.manage');
    expect(others.map((permission) => [permission, authorize(actor, permission, { form: 'quote' })])).toEqual(
      others.map((permission) => [permission, 'forbidden']),
    );
  });
});

describe('the actors', () => {
  test('forms as stored: NULL is every form, present and future; an empty list is none', () => {
    expect(formScope(null)).toEqual({ all: true });
    expect(formScope([])).toEqual({ all: false, forms: [] });
    expect(formScope(['quote', 'newsletter'])).toEqual({ all: false, forms: ['quote', 'newsletter'] });
  });

  test('an owner is every form even when their row still names some (after a promotion)', () => {
    const owner = personActor({ id: 1, name: 'Owner', email: null, role: 'owner', forms: ['quote'], stage: 'full' });
    expect(owner.scope).toEqual({ all: true });
    const editor = personActor({ id: 2, name: 'Eddie', email: 'eddie@example.org', role: 'editor', forms: ['quote'], stage: 'full' });
    expect(editor.scope).toEqual({ all: false, forms: ['quote'] });
  });

  test('the audit names a person by name and address, a key by its name', () => {
    const labels: Array<[PersonActor | KeyActor, { actor: string; actorName: string }]> = [
      [actorOf('editor', null), { actor: 'person:3', actorName: 'Ada Lovelace <ada@example.org>' }],
      [personActor({ id: 1, name: 'Owner', email: null, role: 'owner', forms: null, stage: 'full' }), { actor: 'person:1', actorName: 'Owner' }],
      [
        personActor({ id: 9, name: '', email: 'rita@example.org', role: 'reader', forms: null, stage: 'full' }),
        { actor: 'person:9', actorName: 'rita@example.org' },
      ],
      [actorOf('write key', ['quote']), { actor: 'key:7', actorName: 'key ci-export' }],
    ];
    for (const [actor, label] of labels) expect(actorLabel(actor)).toEqual(label);
  });
});

describe('the condition that limits a query to the actor’s forms', () => {
  const limited = (n: number) => formScope(['quote', 'booking', 'contact', 'newsletter', 'survey'].slice(0, n));

  test.each(['sqlite', 'postgresql'] as const)('on %s: one SQL text for 1, 2 or 5 forms, the forms in one parameter', (engine) => {
    const clauses = [1, 2, 5].map((n) => scopeClause(engine, limited(n)));
    expect(new Set(clauses.map((clause) => clause.sql)).size).toBe(1);
    expect(clauses.map((clause) => clause.params)).toEqual([['["quote"]'], ['["quote","booking"]'], ['["quote","booking","contact","newsletter","survey"]']]);
  });

  test('on PostgreSQL one prepared statement serves every list', () => {
    const prepare = preparedStatements();
    const names = [1, 2, 5].map((n) => {
      const clause = scopeClause('postgresql', limited(n));
      return prepare(`SELECT id FROM submissions WHERE ${clause.sql}`, clause.params).name;
    });
    expect(names).toEqual(['site_forms_1', 'site_forms_1', 'site_forms_1']);
  });

  test('every form: no condition and no parameter', () => {
    expect(scopeClause('sqlite', formScope(null))).toEqual({ sql: '', params: [] });
    expect(scopeClause('postgresql', formScope(null))).toEqual({ sql: '', params: [] });
  });

  test('a column of a joined table may be named; anything but a column name is a bug', () => {
    expect(scopeClause('sqlite', limited(1), 's.form').sql).toMatch(/^s\.form IN /);
    expect(() => scopeClause('sqlite', limited(1), 'form) OR (1=1')).toThrow(/column/);
    expect(() => scopeClause('postgresql', limited(1), '')).toThrow(/column/);
  });
});

describe.each(testEngines())('the condition run on $name', ({ available, open }) => {
  const ROWS: Array<[number, string]> = [
    [1, 'quote'],
    [2, 'contact'],
    [3, 'booking'],
    [4, 'quote'],
    [5, 'o\'brien, "ltd"'],
    [6, 'survey'],
  ];

  test.skipIf(!available)('each scope selects exactly its forms’ rows; every form all; none nothing', async () => {
    const { store } = await open();
    await store.sql.run('CREATE TABLE scope_probe (id INTEGER PRIMARY KEY, form TEXT NOT NULL)');
    for (const [id, form] of ROWS) await store.sql.run('INSERT INTO scope_probe (id, form) VALUES (?, ?)', [id, form]);
    const ids = async (forms: string[] | null) => {
      const clause = scopeClause(store.sql.engine, formScope(forms));
      const where = clause.sql ? `WHERE ${clause.sql}` : '';
      const rows = await store.sql.all<{ id: number | string }>(`SELECT id FROM scope_probe ${where} ORDER BY id`, clause.params);
      return rows.map((row) => Number(row.id));
    };
    await expect(ids(['quote'])).resolves.toEqual([1, 4]);
    await expect(ids(['quote', 'booking'])).resolves.toEqual([1, 3, 4]);
    await expect(ids(['quote', 'booking', 'contact', 'survey', 'o\'brien, "ltd"'])).resolves.toEqual([1, 2, 3, 4, 5, 6]);
    await expect(ids(["o'brien"])).resolves.toEqual([]);
    await expect(ids([])).resolves.toEqual([]);
    await expect(ids(null)).resolves.toEqual([1, 2, 3, 4, 5, 6]);
  });

  test.skipIf(!available)('with a joined table’s column, beside other conditions and parameters', async () => {
    const { store } = await open();
    await store.sql.run('CREATE TABLE scope_probe (id INTEGER PRIMARY KEY, form TEXT NOT NULL, status TEXT NOT NULL)');
    await store.sql.run('CREATE TABLE scope_note (probe_id INTEGER NOT NULL, note TEXT NOT NULL)');
    for (const [id, form, status] of [
      [1, 'quote', 'sent'],
      [2, 'contact', 'sent'],
      [3, 'quote', 'spam'],
    ] as const) {
      await store.sql.run('INSERT INTO scope_probe (id, form, status) VALUES (?, ?, ?)', [id, form, status]);
      await store.sql.run('INSERT INTO scope_note (probe_id, note) VALUES (?, ?)', [id, `note ${id}`]);
    }
    const clause = scopeClause(store.sql.engine, formScope(['quote', 'contact']), 'p.form');
    const rows = await store.sql.all<{ note: string }>(
      `SELECT n.note FROM scope_note n JOIN scope_probe p ON p.id = n.probe_id WHERE p.status = ? AND ${clause.sql} AND n.probe_id > ? ORDER BY n.note`,
      ['sent', ...clause.params, 0],
    );
    expect(rows.map((row) => row.note)).toEqual(['note 1', 'note 2']);
  });
});
