import { type AdminOutcome, done, messageId, record, type SessionCall } from './shared.ts';

// The webhooks page's action: a delivery sent again.

/** Replays a webhook delivery, at once or when its endpoint is due. */
export async function replayDelivery(call: SessionCall): Promise<AdminOutcome> {
  const id = messageId(call.fields.id);
  const replay = id === undefined ? undefined : await call.deps.webhooks.replay(id);
  if (replay?.kind !== 'replayed' && replay?.kind !== 'due') return done('/admin/webhooks?done=unchanged-delivery');
  await record(call, 'replay-delivery', `#${id}`);
  return done(`/admin/webhooks?done=${replay.kind === 'due' ? 'delivery-due' : 'replayed'}`);
}
