import type { Permission, PersonActor } from '../access/permissions.ts';
import { allows } from './admin-page.ts';

// The admin's navigation: one list, each page with the permission it asks of its visitor
// (the page's own `requirePerson`), so that a person is shown exactly the pages that open to
// them (issue 42 step S5, decision 0295).

/** One entry of the admin's navigation. */
export type NavEntry = { key: string; path: `/admin${string}`; label: string; permission: Permission };

/**
 * The admin's pages in its navigation, in their order. Hint: a new page is one line, appended,
 * with the same permission as the page's `requirePerson(Astro, …)`; tests/server/admin-roles.test.ts
 * opens every entry as each role and expects 200 where it is shown and 403 where it is not.
 */
export const ADMIN_NAV = [
  { key: 'overview', path: '/admin', label: 'Overview', permission: 'messages.read' },
  { key: 'messages', path: '/admin/messages', label: 'Messages', permission: 'messages.read' },
  { key: 'subscribers', path: '/admin/subscribers', label: 'Subscribers', permission: 'subscribers.read' },
  { key: 'webhooks', path: '/admin/webhooks', label: 'Webhooks', permission: 'webhooks.manage' },
  { key: 'audit', path: '/admin/audit', label: 'Audit log', permission: 'audit.read' },
  { key: 'people', path: '/admin/people', label: 'People', permission: 'people.manage' },
  { key: 'keys', path: '/admin/keys', label: 'API keys', permission: 'keys.manage' },
  { key: 'account', path: '/admin/account', label: 'Account', permission: 'self.manage' },
] as const satisfies readonly NavEntry[];

/** Which entry of the navigation a page is. */
export type NavKey = (typeof ADMIN_NAV)[number]['key'];

/** The entries a person may open, in the list's order (none for an enrolment session: it has its account page only). */
export function navFor(actor: PersonActor): NavEntry[] {
  return ADMIN_NAV.filter((entry) => allows(actor, entry.permission));
}

/** How a page names the signed-in person beside "Sign out": their name, else their email, and their role. */
export function signedInAs(actor: PersonActor): { name: string; role: string } {
  const name = actor.name !== '' ? actor.name : (actor.email ?? 'The first owner');
  return { name, role: { owner: 'Owner', editor: 'Editor', reader: 'Reader' }[actor.role] };
}
