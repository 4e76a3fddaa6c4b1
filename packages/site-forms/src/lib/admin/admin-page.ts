import { authorize, type Permission, type PersonActor } from '../access/permissions.ts';
import { toolCommand } from '../commands.ts';
import type { Admin, MessageDetail } from './owner-inbox.ts';
import { formNamed } from '../forms/registry.ts';
import { MESSAGE_STATUSES, type MessageQuery, type MessageStatus } from './queries.ts';
import { readSessionToken, type Session, type Sessions } from './session.ts';

/** The headers of every admin page and answer: never cached, never indexed. */
export const ADMIN_HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' } as const;

/** Who is looking at an admin page: nobody may (the admin is off), a signed-out visitor, or a signed-in person. */
export type PageAccess = { kind: 'absent' } | { kind: 'signed-out' } | { kind: 'signed-in'; session: Session };

/**
 * Decides who is looking at an admin page and sets its headers: while the admin is off (no
 * ADMIN_PASSWORD_HASH, nobody added) every admin address is absent (404); otherwise the page
 * needs a live session.
 */
export async function openAdminPage(
  request: Request,
  response: { headers: Headers },
  admin: { sessions: Sessions; isOn(): Promise<boolean> } | undefined,
  publicOrigin: string | undefined,
): Promise<PageAccess> {
  for (const [name, value] of Object.entries(ADMIN_HEADERS)) response.headers.set(name, value);
  if (!admin || !(await admin.isOn())) return { kind: 'absent' };
  const secure = publicOrigin?.startsWith('https:') ?? false;
  const resumed = await admin.sessions.resume(readSessionToken(request, secure));
  return resumed.ok ? { kind: 'signed-in', session: resumed.session } : { kind: 'signed-out' };
}

/**
 * What a page needs of its visitor: a permission of access/permissions.ts's table, or `owner`,
 * the owner's role, for the pages not yet opened to editors and readers (issue 42 steps S4, S5).
 */
export type PageNeed = Permission | 'owner';

/** Whether a person has what a page needs; a session at the enrolment stage has no page but its account's. */
export function allows(actor: PersonActor, need: PageNeed): boolean {
  if (need === 'owner') return actor.role === 'owner' && actor.stage === 'full';
  return authorize(actor, need) === 'allow';
}

/** Reads the inbox's filter from its address: `?status=&q=&page=`, anything unknown ignored. */
export function readMessageQuery(
  params: URLSearchParams,
): Required<Pick<MessageQuery, 'page'>> & { status: MessageStatus | undefined; search: string | undefined; form: string | undefined } {
  const status = params.get('status');
  const form = params.get('form') ?? '';
  return {
    status: (MESSAGE_STATUSES as readonly string[]).includes(status ?? '') ? (status as MessageStatus) : undefined,
    // Only a form the site has: anything else shows every message.
    form: formNamed(form) ? form : undefined,
    search: params.get('q')?.trim().slice(0, 200) || undefined,
    page: readPage(params),
  };
}

/** The message a page's `[id]` names: a plain positive number of a message that exists, else `undefined`. */
export async function findMessage(admin: Pick<Admin, 'message'>, param: string | undefined): Promise<MessageDetail | undefined> {
  return param !== undefined && /^[1-9]\d{0,15}$/.test(param) ? admin.message(Number(param)) : undefined;
}

/** The page number of a list's address, from 1; anything else is page 1. */
export function readPage(params: URLSearchParams): number {
  const page = params.get('page') ?? '';
  return /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1;
}

/** How many pages a list of `total` has at `size` a page; at least one. */
export function pageCount(total: number, size: number): number {
  return Math.max(1, Math.ceil(total / size));
}

/** The address of another page of a list, keeping its filter. */
export function pageLink(path: string, params: URLSearchParams, page: number): string {
  const next = new URLSearchParams(params);
  next.delete('done');
  if (page === 1) next.delete('page');
  else next.set('page', String(page));
  const query = next.toString();
  return query ? `${path}?${query}` : path;
}

const NOTICES: Record<string, string> = {
  retry: 'The message is queued again; it will be sent within a few seconds.',
  'mark-spam': 'The message is held as spam; it will not be sent.',
  'mark-spam-sent': 'The message is held as spam. It had already been sent before you marked it.',
  'mark-spam-deferred': 'The message was being sent at that moment: it is held as spam once that send ends, and never sent again.',
  release: 'The message is released; it will be sent once.',
  'release-sent': 'The message is no longer marked as spam. It had already been sent, so it is not sent again.',
  'delete-message-deferred': 'The message was being sent at that moment: it is deleted, with its history, as soon as that send ends.',
  unchanged: 'Nothing changed: the message was already in that state.',
  deleted: 'Deleted.',
  'deleted-count-kept': `Deleted, except the address’s count in the limits: Redis could not be reached. Once it is back, run ${toolCommand('subscribers', 'erase')} with the address (the count ends within 24 hours anyway).`,
  replayed: 'The delivery is sent again from the start of its schedule, within a few seconds.',
  'delivery-due': 'The delivery was waiting for its next try: it is sent now, within a few seconds.',
  'unchanged-delivery': 'Nothing changed: that delivery is being sent right now, or is gone.',
  'signup-retried': 'The signup is tried again within a minute.',
  'unchanged-signup': 'Nothing changed: that signup is still waiting for the provider.',
};

/** The sentence shown after an action, from the `done` of the address it redirected to. */
export function noticeFor(done: string | null): string | undefined {
  // Own keys only: ?done=toString must not show Object.prototype's function as a notice.
  return done !== null && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;
}

/** What the sign-in page says, from the address a sign-in or sign-out redirected to. */
export function signInMessage(params: URLSearchParams): { error?: string; notice?: string } {
  if (params.get('failed') === '1') return { error: 'Wrong password.' };
  if (params.get('failed') === 'email') return { error: 'Wrong email or password.' };
  if (params.get('failed') === 'passkey') return { error: 'Sign in with your passkey: this site does not take a password from whoever has one.' };
  switch (params.get('ended')) {
    case 'signed-out':
      return { notice: 'You have signed out.' };
    case 'expired':
      return { notice: 'Your session has ended. Sign in again.' };
    default:
      return {};
  }
}

/**
 * A `mailto:` link to a visitor's address, each part percent-encoded, so that an address can
 * never add a query (`?bcc=…&subject=…`) to the owner's reply.
 */
export function mailtoHref(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return `mailto:${encodeURIComponent(address)}`;
  return `mailto:${encodeURIComponent(address.slice(0, at))}@${encodeURIComponent(address.slice(at + 1))}`;
}

/** The sentence above the inbox's list: how many messages there are or match, and which page this is. */
export function countSentence(total: number, filtered: boolean, page: number, pages: number): string {
  if (total === 0) return filtered ? 'No message matches.' : 'No messages yet.';
  const counted = total === 1 ? '1 message' : `${total} messages`;
  const verb = filtered ? (total === 1 ? ' matches' : ' match') : '';
  return `${counted}${verb}; page ${page} of ${pages}.`;
}
