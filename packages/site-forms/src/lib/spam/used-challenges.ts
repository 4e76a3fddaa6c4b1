/** The record of challenges already answered, which makes each proof single-use. */
export interface UsedChallenges {
  /** Records `id` as used until `expiresAtMs`; answers false when it was already used. */
  claim(id: string, expiresAtMs: number): Promise<boolean>;
}

/** How many used challenges memory keeps at most; beyond it the oldest expiring go first. */
export const MEMORY_LIMIT = 100_000;

/**
 * The record in this process's memory, for tests and tools; a server keeps it in the database,
 * where a contact message's proof is consumed in the transaction that stores the message.
 * Hint: entries are dropped once their challenge has expired, since an expired proof is
 * refused anyway.
 */
export function createMemoryUsedChallenges(now: () => number = Date.now, limit = MEMORY_LIMIT): UsedChallenges {
  const used = new Map<string, number>();
  return {
    async claim(id, expiresAtMs) {
      const time = now();
      if ((used.get(id) ?? 0) > time) return false;
      if (used.size >= limit) prune(used, time, limit);
      used.set(id, expiresAtMs);
      return true;
    },
  };
}

function prune(used: Map<string, number>, time: number, limit: number): void {
  for (const [id, expiresAt] of used) if (expiresAt <= time) used.delete(id);
  // Still full of live entries: forget the oldest inserted, which expire first.
  for (const id of used.keys()) {
    if (used.size < limit) break;
    used.delete(id);
  }
}
