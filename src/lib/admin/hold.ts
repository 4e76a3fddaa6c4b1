import type { Sql } from '../store/sql.ts';
import type { MessageCommands } from './actions.ts';

/**
 * Holding a message as spam and releasing it, as conditional updates of its status, so a
 * double click or two instances change it once.
 * Hint: a released message that was never sent goes back to the queue, due at once; one that
 * had already been sent becomes `sent` again, so "Not spam" never emails a message twice.
 */
export function createHoldCommands(sql: Sql, onReleased: (id: number) => void): Pick<MessageCommands, 'markSpam' | 'release'> {
  return {
    async markSpam(id) {
      const { changes } = await sql.run("UPDATE submissions SET status = 'spam', next_attempt_at = NULL WHERE id = ? AND status <> 'spam'", [id]);
      return changes > 0;
    },
    async release(id, at) {
      const { changes } = await sql.run(
        "UPDATE submissions SET status = CASE WHEN sent_at IS NULL THEN 'pending' ELSE 'sent' END, attempts = 0, next_attempt_at = ? WHERE id = ? AND status = 'spam'",
        [at.toISOString(), id],
      );
      if (changes > 0) onReleased(id);
      return changes > 0;
    },
  };
}
