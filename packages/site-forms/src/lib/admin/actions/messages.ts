import { authorize } from '../../access/permissions.ts';
import type { Change } from '../../submissions/machine.ts';
import { type AdminOutcome, done, messageId, record, type SessionCall } from './shared.ts';

// The commands of a message's page: retry, spam, not spam (release) and delete.

/** The message commands, by the action that asks them. */
export type MessageAction = 'retry' | 'mark-spam' | 'release' | 'delete-message';

/**
 * The action that runs one message command and goes back to the message's page (or the list,
 * once deleted). Hint: the message's form is read first and authorized with the actor: one of
 * another form is the same 404 as one that does not exist (a message never changes form).
 */
export function messageCommand(action: MessageAction): (call: SessionCall) => Promise<AdminOutcome> {
  return async (call) => {
    const { commands, queries } = call.deps;
    const id = messageId(call.fields.id);
    if (id === undefined) return { kind: 'refused', status: 400, message: 'No such message.' };
    const form = await queries.formOf(id);
    const permission = action === 'delete-message' ? 'messages.delete' : 'messages.triage';
    if (form === undefined || authorize(call.session.actor, permission, { form }) !== 'allow') return notFound();
    const command = { retry: commands.retry, 'mark-spam': commands.markSpam, release: commands.release, 'delete-message': commands.remove }[action];
    const change = await command(id, call.now());
    if (!change.found) return notFound();
    // Only the instance whose write moved the message records it: concurrent clicks audit once.
    if (change.changed) await record(call, action, `#${id}${change.deferred ? ' (when its send ends)' : ''}`);
    if (action === 'delete-message' && change.changed && !change.deferred) return done('/admin/messages?done=deleted');
    return done(`/admin/messages/${id}?done=${noticeOf(action, change)}`);
  };
}

/** Which notice the message's page shows after a command: what happened, or will once the send under way ends. */
function noticeOf(action: MessageAction, change: Extract<Change, { found: true }>): string {
  if (!change.changed) return 'unchanged';
  if (change.deferred) return `${action}-deferred`;
  if (action === 'release' && change.to === 'sent') return 'release-sent';
  if (action === 'mark-spam' && change.from === 'sent') return 'mark-spam-sent';
  return action;
}

function notFound(): AdminOutcome {
  return { kind: 'refused', status: 404, message: 'No such message: it may have been deleted already.' };
}
