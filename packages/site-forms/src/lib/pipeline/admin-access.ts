import { publicOrigin } from '../http/origin.ts';
import type { Admin } from '../admin/owner-inbox.ts';
import { openAdminPage } from '../admin/admin-page.ts';
import type { Session } from '../admin/session.ts';
import { ourPath } from '../http/mount.ts';

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

/** The parts of Astro's page context that a page only the owner may see uses. */
export type OwnerPageContext = AdminPageContext & {
  response: { headers: Headers };
  rewrite(path: string): Promise<Response>;
  redirect(path: string, status?: 303): Response;
};

/**
 * Opens a page only the signed-in owner may see: the admin, or the answer to send instead
 * (the not-found page while the admin is off, back to sign-in once the session has ended).
 * Hint: every owner-only page starts with it, so none can forget a check.
 */
export async function requireOwner(
  page: OwnerPageContext,
): Promise<{ ok: true; admin: Admin; session: Session } | { ok: false; answer: Response | Promise<Response> }> {
  const { admin, publicOrigin } = adminOf(page);
  const access = await openAdminPage(page.request, page.response, admin, publicOrigin);
  if (access.kind === 'absent' || !admin) return { ok: false, answer: page.rewrite(ourPath('/admin/not-found')) };
  if (access.kind === 'signed-out') return { ok: false, answer: page.redirect('/admin?ended=expired', 303) };
  return { ok: true, admin, session: access.session };
}
