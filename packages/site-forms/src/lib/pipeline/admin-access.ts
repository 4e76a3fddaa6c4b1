import { publicOrigin } from '../http/origin.ts';
import type { Admin } from '../admin/owner-inbox.ts';
import { ADMIN_HEADERS, allows, openAdminPage, type PageNeed } from '../admin/admin-page.ts';
import type { PersonActor } from '../access/permissions.ts';
import type { Session } from '../admin/session.ts';
import { ourPath } from '../http/mount.ts';
import { ENROLL_PAGE } from '../admin/actions/sign-in.ts';

/** The parts of Astro's page context every admin page has: the request, and what our server handed over with it. */
export type AdminPageContext = { request: Request; locals: Pick<App.Locals, 'services'> };

/**
 * What an admin page needs from the request's context: the admin (`undefined` when it is off)
 * and the public origin of this request, which decides `Secure` cookies and the Origin check.
 */
export function adminOf({ request, locals }: AdminPageContext): { admin: Admin | undefined; publicOrigin: string | undefined } {
  const { admin, config } = locals.services;
  return { admin, publicOrigin: publicOrigin(request.headers, config) };
}

/** The parts of Astro's page context that a page of signed-in people uses. */
export type OwnerPageContext = AdminPageContext & {
  locals: Pick<App.Locals, 'services' | 'adminRefusal'>;
  response: { headers: Headers };
  rewrite(path: string): Promise<Response>;
  redirect(path: string, status?: 303): Response;
};

/** What a person whose role cannot see a page reads there (403). */
export const ROLE_REFUSED = 'Your role cannot see this page. Ask an owner of this site if you need it.';

/**
 * Opens a page of signed-in people: the admin, the session and its person (`actor`, read from the
 * database at this request), or the answer to send instead: the not-found page while the admin is
 * off, back to sign-in once the session has ended, a 403 page ("Refused") when the person's role
 * does not have what the page needs; an enrolment session anywhere but its account page is sent
 * there (`/admin/account?enroll=1`).
 * Hint: every admin page but sign-in starts with it, so none can forget a check.
 */
export async function requirePerson(
  page: OwnerPageContext,
  need: PageNeed,
): Promise<{ ok: true; admin: Admin; session: Session; actor: PersonActor } | { ok: false; answer: Response | Promise<Response> }> {
  const { admin, publicOrigin } = adminOf(page);
  const access = await openAdminPage(page.request, page.response, admin, publicOrigin);
  if (access.kind === 'absent' || !admin) return { ok: false, answer: page.rewrite(ourPath('/admin/not-found')) };
  if (access.kind === 'signed-out') return { ok: false, answer: page.redirect('/admin?ended=expired', 303) };
  const { actor } = access.session;
  // An enrolment session (ADMIN_REQUIRE_PASSKEY) has the account page only, where it adds a passkey.
  if (actor.stage === 'enroll' && need !== 'self.manage') return { ok: false, answer: page.redirect(ENROLL_PAGE, 303) };
  if (!allows(actor, need)) {
    // Shown by [...rest].astro, as a refused post is: the site's look, the admin's headers, status 403.
    page.locals.adminRefusal = { kind: 'admin-refusal', status: 403, message: ROLE_REFUSED, headers: { ...ADMIN_HEADERS } };
    return { ok: false, answer: page.rewrite(ourPath('/admin/refused')) };
  }
  return { ok: true, admin, session: access.session, actor };
}

// Where the pages have always found them; they live with the admin, which the posts' checks share.
export { allows, type PageNeed };
// What a page may offer a person to post: the posts' registry judges it as the server does (decision 0294).
export { mayPost } from '../admin/actions/index.ts';
