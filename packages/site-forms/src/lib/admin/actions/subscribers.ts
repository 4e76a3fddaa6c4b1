import { erasedAddress } from '../audit.ts';
import { type AdminOutcome, done, messageId, record, type SessionCall } from './shared.ts';

// The subscribers page's actions: erase an address, retry a signup waiting for the provider.

/** Erases a subscriber (the audit keeps only a masked address). */
export async function deleteSubscriber(call: SessionCall): Promise<AdminOutcome> {
  const email = typeof call.fields.email === 'string' ? call.fields.email : '';
  const erased = await call.deps.queries.deleteSubscriber(email);
  if (!erased.found) return done('/admin/subscribers?done=unchanged');
  await record(call, 'delete-subscriber', erasedAddress(email));
  // The store's part is done; the count Redis keeps (a day at most) waits for a second erasure.
  return done(`/admin/subscribers?done=${erased.redisUnreachable ? 'deleted-count-kept' : 'deleted'}`);
}

/** Sends a signup the provider refused or missed again. */
export async function retrySignup(call: SessionCall): Promise<AdminOutcome> {
  const id = messageId(call.fields.id);
  if (id === undefined || !(await call.deps.signups.retry(id))) return done('/admin/subscribers?done=unchanged-signup');
  await record(call, 'retry-signup', `#${id}`);
  return done('/admin/subscribers?done=signup-retried');
}
