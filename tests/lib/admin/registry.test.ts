import { describe, expect, test } from 'vitest';
import { PERMISSIONS } from '../../../packages/site-forms/src/lib/access/permissions.ts';
import { ADMIN_ACTIONS, permissionOf, permissionsOf } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';

/**
 * Issue 42 step S0b: every admin post names, in its registry entry, the permission of
 * access/permissions.ts it needs, so that the check added when sessions carry a person (S4)
 * cannot leave one out; the sign-ins (password and passkey), following a link and asking for one
 * (step S6) alone are open to whoever is not signed in.
 */
const ENTRIES = Object.entries(ADMIN_ACTIONS);

describe("the admin's posts as a registry", () => {
  test('the twenty-six posts, each at its path under /admin/actions/', () => {
    expect(Object.fromEntries(ENTRIES.map(([path, entry]) => [path, entry.action]))).toEqual({
      '/admin/actions/sign-in': 'sign-in',
      '/admin/actions/sign-out': 'sign-out',
      '/admin/actions/retry': 'retry',
      '/admin/actions/spam': 'mark-spam',
      '/admin/actions/release': 'release',
      '/admin/actions/delete': 'delete-message',
      '/admin/actions/delete-subscriber': 'delete-subscriber',
      '/admin/actions/export': 'export',
      '/admin/actions/replay-delivery': 'replay-delivery',
      '/admin/actions/retry-signup': 'retry-signup',
      '/admin/actions/passkey-options': 'passkey-options',
      '/admin/actions/passkey-sign-in': 'passkey-sign-in',
      '/admin/actions/passkey-register': 'passkey-register',
      '/admin/actions/remove-passkey': 'remove-passkey',
      '/admin/actions/rename-passkey': 'rename-passkey',
      '/admin/actions/invite': 'invite',
      '/admin/actions/accept-link': 'accept-link',
      '/admin/actions/request-reset': 'request-reset',
      '/admin/actions/update-person': 'update-person',
      '/admin/actions/remove-person': 'remove-person',
      '/admin/actions/send-link': 'send-link',
      '/admin/actions/revoke-link': 'revoke-link',
      '/admin/actions/create-key': 'create-key',
      '/admin/actions/revoke-key': 'revoke-key',
      '/admin/actions/mail-preferences': 'mail-preferences',
      '/admin/actions/person-mail': 'person-mail',
    });
  });

  test('only the sign-ins (with a password; with a passkey, its options: those of a new passkey check their session) and the two posts of the link pages are public', () => {
    expect(ENTRIES.filter(([, entry]) => 'public' in entry && entry.public).map(([, entry]) => entry.action)).toEqual([
      'sign-in',
      'passkey-options',
      'passkey-sign-in',
      'accept-link',
      'request-reset',
    ]);
  });

  test.each(ENTRIES.filter(([, entry]) => !('public' in entry)))('%s names permissions of the table', (_, entry) => {
    const named = permissionsOf(entry);
    expect(named.length).toBeGreaterThan(0);
    for (const permission of named) expect(PERMISSIONS).toContain(permission);
  });

  test('each action asks the permission of the plan’s table (decision 0263)', () => {
    expect(Object.fromEntries(ENTRIES.map(([, entry]) => [entry.action, permissionsOf(entry)]))).toEqual({
      'sign-in': [],
      'sign-out': ['self.manage'],
      retry: ['messages.triage'],
      'mark-spam': ['messages.triage'],
      release: ['messages.triage'],
      'delete-message': ['messages.delete'],
      'delete-subscriber': ['subscribers.erase'],
      export: ['messages.export', 'subscribers.export'],
      'replay-delivery': ['webhooks.manage'],
      'retry-signup': ['signups.retry'],
      'passkey-options': [],
      'passkey-sign-in': [],
      'passkey-register': ['self.manage'],
      'remove-passkey': ['self.manage'],
      'rename-passkey': ['self.manage'],
      invite: ['people.manage'],
      'accept-link': [],
      'request-reset': [],
      'update-person': ['people.manage'],
      'remove-person': ['people.manage'],
      'send-link': ['people.manage'],
      'revoke-link': ['people.manage'],
      'create-key': ['keys.manage'],
      'revoke-key': ['keys.manage'],
      'mail-preferences': ['self.manage'],
      'person-mail': ['people.manage'],
    });
  });
});

describe('the permission one post asks', () => {
  test('a fixed one, whatever the fields', () => {
    expect(permissionOf(ADMIN_ACTIONS['/admin/actions/delete'], {})).toBe('messages.delete');
    expect(permissionOf(ADMIN_ACTIONS['/admin/actions/delete'], { what: 'subscribers' })).toBe('messages.delete');
  });

  test('the export asks the permission of what it exports', () => {
    const entry = ADMIN_ACTIONS['/admin/actions/export'];
    expect(permissionOf(entry, { what: 'messages', format: 'csv' })).toBe('messages.export');
    expect(permissionOf(entry, { what: 'subscribers', format: 'json' })).toBe('subscribers.export');
  });

  test.each([
    ['no field', {}],
    ['another value', { what: 'people' }],
    ['a name every object has', { what: 'toString' }],
    ['a list', { what: ['messages'] }],
  ])('an export with %s asks none: it is refused as unreadable', (_, fields) => {
    expect(permissionOf(ADMIN_ACTIONS['/admin/actions/export'], fields)).toBeUndefined();
  });

  test('sign-in asks none', () => {
    expect(permissionOf(ADMIN_ACTIONS['/admin/actions/sign-in'], { password: 'x' })).toBeUndefined();
  });
});
