import { describe, expect, test } from 'vitest';
import { type PersonActor, personActor, type Role } from '../../../packages/site-forms/src/lib/access/permissions.ts';
import { ADMIN_ACTIONS, type AdminActionPath, mayPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { ADMIN_NAV, navFor } from '../../../packages/site-forms/src/lib/admin/nav.ts';

/**
 * Issue 42 step S5: what each person sees. A page shows a button only when `mayPost` says the
 * person may send its post, and `mayPost` reads the permission from the post's registry entry as
 * the server does (decision 0294), so a page cannot offer what the server refuses, nor hide what it
 * allows. The admin's navigation is one list, each entry with the permission its page asks.
 */
const person = (role: Role, forms: readonly string[] | null = null, stage: 'full' | 'enroll' = 'full'): PersonActor =>
  personActor({ id: 7, name: 'Pat', email: 'pat@example.org', role, forms, stage });

const SELF = ['/admin/actions/sign-out', '/admin/actions/passkey-register', '/admin/actions/remove-passkey', '/admin/actions/rename-passkey'];
const PUBLIC = [
  '/admin/actions/sign-in',
  '/admin/actions/passkey-options',
  '/admin/actions/passkey-sign-in',
  '/admin/actions/accept-link',
  '/admin/actions/request-reset',
];
/** One's own mail choices (decision 0301): every full session's, never an enrolment's. */
const OWN_MAIL = ['/admin/actions/mail-preferences'];
const TRIAGE = ['/admin/actions/retry', '/admin/actions/spam', '/admin/actions/release', '/admin/actions/delete'];
const EVERY_PATH = Object.keys(ADMIN_ACTIONS) as AdminActionPath[];

/** The paths one actor may post (the export by what it exports), in the registry's order. */
function allowed(actor: PersonActor): string[] {
  const paths: string[] = [];
  for (const path of EVERY_PATH) {
    if (path !== '/admin/actions/export') {
      if (mayPost(actor, path)) paths.push(path);
      continue;
    }
    for (const what of ['messages', 'subscribers']) if (mayPost(actor, path, { what })) paths.push(`${path}?what=${what}`);
  }
  return paths.sort();
}

describe('which posts a page may offer (mayPost, from the registry)', () => {
  test('an owner: every post', () => {
    expect(allowed(person('owner'))).toEqual(
      [
        ...EVERY_PATH.filter((path) => path !== '/admin/actions/export'),
        '/admin/actions/export?what=messages',
        '/admin/actions/export?what=subscribers',
      ].sort(),
    );
  });

  test('an editor of every form: triage, delete and export, their own passkeys and mail; no subscriber erasure, webhook, signup or people post', () => {
    expect(allowed(person('editor'))).toEqual(
      [...PUBLIC, ...SELF, ...OWN_MAIL, ...TRIAGE, '/admin/actions/export?what=messages', '/admin/actions/export?what=subscribers'].sort(),
    );
  });

  test('an editor of the quote form: the subscribers’ export is not theirs (the list is not among their forms)', () => {
    expect(allowed(person('editor', ['quote']))).toEqual([...PUBLIC, ...SELF, ...OWN_MAIL, ...TRIAGE, '/admin/actions/export?what=messages'].sort());
  });

  test.each([[null], [['quote']], [['newsletter']]])(
    'a reader (forms %j): nothing that changes anything, only their own sign-out, passkeys and mail choices',
    (forms) => {
      expect(allowed(person('reader', forms))).toEqual([...PUBLIC, ...SELF, ...OWN_MAIL].sort());
    },
  );

  test('an owner whose session must first add a passkey (ADMIN_REQUIRE_PASSKEY): only that, and signing out', () => {
    expect(allowed(person('owner', null, 'enroll'))).toEqual([...PUBLIC, ...SELF].sort());
  });

  test('an export of something unknown is judged as the server judges it: refused to whoever cannot ask one of its permissions, else left to the action (its 400)', () => {
    expect(mayPost(person('editor'), '/admin/actions/export', { what: 'people' })).toBe(true);
    expect(mayPost(person('editor', ['quote']), '/admin/actions/export', {})).toBe(true);
    expect(mayPost(person('reader'), '/admin/actions/export', {})).toBe(false);
  });
});

describe("the admin's navigation (one list, each entry with its page's permission)", () => {
  const keys = (actor: PersonActor) => navFor(actor).map((entry) => entry.key);

  test('the entries, each naming the permission its page asks', () => {
    expect(ADMIN_NAV.map(({ key, path, permission }) => [key, path, permission])).toEqual([
      ['overview', '/admin', 'messages.read'],
      ['messages', '/admin/messages', 'messages.read'],
      ['subscribers', '/admin/subscribers', 'subscribers.read'],
      ['webhooks', '/admin/webhooks', 'webhooks.manage'],
      ['audit', '/admin/audit', 'audit.read'],
      ['people', '/admin/people', 'people.manage'],
      ['keys', '/admin/keys', 'keys.manage'],
      ['account', '/admin/account', 'self.manage'],
    ]);
  });

  test.each([
    ['an owner', ['overview', 'messages', 'subscribers', 'webhooks', 'audit', 'people', 'keys', 'account'], person('owner')],
    ['an editor of every form', ['overview', 'messages', 'subscribers', 'account'], person('editor')],
    ['an editor of the quote form', ['overview', 'messages', 'account'], person('editor', ['quote'])],
    ['a reader of the quote form', ['overview', 'messages', 'account'], person('reader', ['quote'])],
    ['a reader of the list', ['overview', 'messages', 'subscribers', 'account'], person('reader', ['newsletter'])],
    ['an enrolment session', ['account'], person('owner', null, 'enroll')],
  ])('%s sees %j', (_, expected, actor) => {
    expect(keys(actor)).toEqual(expected);
  });
});
