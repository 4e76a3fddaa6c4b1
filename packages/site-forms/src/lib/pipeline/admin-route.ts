import type { IncomingRequest } from '../http/form.ts';
import { clientKey, hashClient } from '../http/client-ip.ts';
import { publicOrigin } from '../http/origin.ts';
import type { Services } from '../app/services.ts';
import { type AdminAction, type AdminOutcome, handleAdminPost } from '../admin/actions/index.ts';
import { ADMIN_HEADERS } from '../admin/admin-page.ts';
import { type AnswerReply, answerReply } from './reply.ts';
import { ourPath } from '../http/mount.ts';

/** A refused admin post, for Astro to show as a page in the site's layout (src/integration/pages/admin/[...rest].astro). */
export type AdminRefusalView = { kind: 'admin-refusal'; status: number; message: string; headers: Record<string, string> };

/**
 * A value an admin post shows once (an invitation link while mail is off, a new API key), for
 * Astro to show as a page (src/integration/pages/admin/[...rest].astro) with the admin's headers,
 * `Cache-Control: no-store` among them: the value is in no URL and in no cache.
 */
export type AdminShownView = {
  kind: 'admin-shown';
  status: 200;
  title: string;
  message: string;
  value: string;
  /** The admin page the person goes back to. */
  back: string;
  headers: Record<string, string>;
};

/** The answer to an admin post: written by the server, or a page for Astro. */
export type AdminReply = AnswerReply | AdminRefusalView | AdminShownView;

/**
 * The admin's step of the one road: what the pipeline calls for a route of kind `admin`,
 * after finding it and before anything else. Without `ADMIN_PASSWORD_HASH` it is 404; a
 * GET (a reload, a bookmark) goes to the admin's front page; a POST is the action.
 * Hint: the API's origin policy does not apply here: `ALLOWED_ORIGINS` may post to the forms,
 * never to the admin, which checks the public origin itself (decision 0102).
 */
export async function runAdminRoute(action: AdminAction, request: IncomingRequest, ip: string, services: Services): Promise<AdminReply> {
  const { admin, config } = services;
  if (!admin || !(await admin.isOn())) return refusal(404, 'Page not found');
  if (request.method === 'GET' || request.method === 'HEAD') return redirect('/admin');
  if (request.method !== 'POST') return { ...refusal(405, 'Use the buttons of the admin pages.'), headers: { ...ADMIN_HEADERS, allow: 'POST' } };
  const outcome = await handleAdminPost(action, request, admin.deps, {
    publicOrigin: publicOrigin(request.headers, config),
    clientKey: clientKey(ip),
    clientHash: hashClient(ip),
  });
  return renderAdminOutcome(outcome);
}

/** Turns an admin outcome into an answer: a 303, a file, JSON, or a page (a refusal, a value shown once). */
export function renderAdminOutcome(outcome: AdminOutcome): AdminReply {
  switch (outcome.kind) {
    case 'redirect': {
      const answer = redirect(outcome.location);
      if (outcome.cookie) answer.headers['set-cookie'] = outcome.cookie;
      return answer;
    }
    case 'download':
      return answerReply({
        status: 200,
        headers: { ...ADMIN_HEADERS, 'content-type': outcome.contentType, 'content-disposition': `attachment; filename="${outcome.filename}"` },
        ...(typeof outcome.body === 'string' ? { body: outcome.body } : { body: null, stream: outcome.body }),
      });
    case 'refused':
      return { kind: 'admin-refusal', status: outcome.status, message: outcome.message, headers: { ...ADMIN_HEADERS, ...outcome.headers } };
    case 'json':
      return answerReply({
        status: outcome.status,
        // The admin's headers last: an outcome's own (Retry-After) never makes an answer cacheable.
        headers: {
          ...outcome.headers,
          ...ADMIN_HEADERS,
          'content-type': 'application/json; charset=utf-8',
          ...(outcome.cookie && { 'set-cookie': outcome.cookie }),
        },
        body: JSON.stringify(outcome.body),
      });
    case 'shown': {
      const { title, message, value, back } = outcome;
      return { kind: 'admin-shown', status: 200, title, message, value, back, headers: { ...ADMIN_HEADERS } };
    }
  }
}

function redirect(location: string): AnswerReply {
  return answerReply({ status: 303, headers: { ...ADMIN_HEADERS, location: ourPath(location) }, body: null });
}

function refusal(status: number, message: string): AdminRefusalView {
  return { kind: 'admin-refusal', status, message, headers: { ...ADMIN_HEADERS } };
}
