/**
 * The one leased queue under the outbox, the signup queue and the webhook deliveries, on both
 * engines: two workers taking at once get different rows, a finish under a lost lease changes
 * nothing, a lease names its worker, a try is counted as it is taken, and a row whose every try
 * died with its process (a poison row) is held as failed after the most tries.
 */
import { describe, expect, test, vi } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createSignupWorker } from '../../../packages/site-forms/src/lib/newsletter/signup-worker.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { backoff, createLeasedQueue, drain, givesUp } from '../../../packages/site-forms/src/lib/queue/queue.ts';
import { queueSettings } from '../../../packages/site-forms/src/lib/queue/settings.ts';
import { upkeepJobs } from '../../../packages/site-forms/src/lib/queue/upkeep.ts';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import { recordEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', held: undefined };
const T0 = new Date('2030-01-01T10:00:00.000Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

/** Runs `step` as an instance whose process clock runs ten minutes fast (the database's is the real one). */
async function tenMinutesFast<T>(step: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 10 * 60_000);
  try {
    return await step();
  } finally {
    vi.useRealTimers();
  }
}

describe('the backoff and the give-up rule', () => {
  test('doubling from the base up to the cap, less up to a tenth at random', () => {
    const policy = { baseMs: 1_000, maxMs: 5_000 };
    expect([1, 2, 3, 4].map((n) => backoff(n, policy, () => 0))).toEqual([1_000, 2_000, 4_000, 5_000]);
    expect(backoff(2, policy, () => 1)).toBe(1_800);
    expect(backoff(2, policy, () => 0.5)).toBe(1_900);
  });

  test('a schedule gives its step, and none past its end', () => {
    expect(backoff(1, { schedule: [0, 5_000, 60_000] }, () => 0)).toBe(5_000);
    expect(backoff(3, { schedule: [0, 5_000, 60_000] }, () => 0)).toBeUndefined();
  });

  test('given up at the most tries, past the end of the round, or with no next step', () => {
    expect(givesUp({ attempts: 2, maxAttempts: 3, next: 100, until: 100 })).toBe(false);
    expect(givesUp({ attempts: 3, maxAttempts: 3, next: 100, until: 100 })).toBe(true);
    expect(givesUp({ attempts: 2, maxAttempts: 3, next: 101, until: 100 })).toBe(true);
    expect(givesUp({ attempts: 2, maxAttempts: 3, next: undefined })).toBe(true);
  });
});

describe('the queues’ settings and upkeep', () => {
  test('DELIVERY_LEASE_MS sets the lease of the mail and the webhooks, not of the signups', () => {
    expect(queueSettings('outbox', { leaseMs: 90_000 })).toEqual({ pollMs: 5_000, leaseMs: 90_000, upkeepMs: 90_000 });
    expect(queueSettings('webhooks', { leaseMs: 90_000 }).leaseMs).toBe(90_000);
    expect(queueSettings('webhooks', {}).leaseMs).toBe(60_000);
    expect(queueSettings('signups', { leaseMs: 90_000 })).toEqual({ pollMs: 30_000, leaseMs: 60_000, upkeepMs: 60_000 });
  });

  test('one upkeep job a queue, named after it, run once a lease with the time it is given', async () => {
    const ran: string[] = [];
    const upkeep = (name: string) => async (now: Date) => void ran.push(`${name} ${now.toISOString()}`);
    const jobs = upkeepJobs({ outbox: upkeep('outbox'), webhooks: upkeep('webhooks'), signups: upkeep('signups') }, { leaseMs: 90_000 });
    expect(jobs.map(({ name, everyMs }) => ({ name, everyMs }))).toEqual([
      { name: 'queue.outbox', everyMs: 90_000 },
      { name: 'queue.webhooks', everyMs: 90_000 },
      { name: 'queue.signups', everyMs: 60_000 },
    ]);
    for (const job of jobs) await job.run(T0);
    expect(ran).toEqual([`outbox ${T0.toISOString()}`, `webhooks ${T0.toISOString()}`, `signups ${T0.toISOString()}`]);
  });

  test('the loop takes, tries and finishes one row after another until none is left, on the clock it is given or none (the database’s)', async () => {
    const rows = [1, 2];
    const seen: string[] = [];
    const work = {
      claim: async (now: Date | undefined, leaseMs: number) => {
        seen.push(`claim ${now?.toISOString() ?? 'database'} ${leaseMs}`);
        return rows.shift();
      },
      send: async (row: number) => `sent ${row}`,
      finish: async (row: number, end: string) => void seen.push(`${row}: ${end}`),
    };
    await drain(new AbortController().signal, work, { leaseMs: 1_000 });
    expect(seen).toEqual(['claim database 1000', '1: sent 1', 'claim database 1000', '2: sent 2', 'claim database 1000']);
    rows.push(3);
    seen.length = 0;
    await drain(new AbortController().signal, work, { leaseMs: 1_000, clock: () => T0 });
    expect(seen).toEqual([`claim ${T0.toISOString()} 1000`, '3: sent 3', `claim ${T0.toISOString()} 1000`]);
    // Stopped: no further claim.
    const stopped = new AbortController();
    stopped.abort();
    rows.push(3);
    await drain(stopped.signal, work, { leaseMs: 1_000, clock: () => T0 });
    expect(rows).toEqual([3]);
  });
});

describe.each(testEngines())('the leased queue on $name', (engine) => {
  /** The store, and the same database opened a second time: another instance of the site. */
  const open = async (): Promise<{ store: Store; other: Store }> => {
    const { store, url, dataDir } = await engine.open();
    const other = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await other.ready;
    return { store, other };
  };
  const due = (store: Store) => store.sql.run('UPDATE submissions SET next_attempt_at = ?', [T0.toISOString()]);

  describe('the outbox', () => {
    test.skipIf(!engine.available)('two workers taking at once get different messages, and a third finds none', async () => {
      const { store, other } = await open();
      const mine = createSubmissionMachine(store.sql);
      const theirs = createSubmissionMachine(other.sql);
      const ids = [(await mine.receive(input)).id, (await mine.receive(input)).id];
      await due(store);
      const taken = await Promise.all([mine.claim(T0, at(MINUTE), { worker: 'a' }), theirs.claim(T0, at(MINUTE), { worker: 'b' })]);
      expect(taken.map((t) => t?.id).sort()).toEqual(ids);
      expect(taken.map((t) => t?.lease.worker)).toEqual(['a', 'b']);
      await expect(mine.claim(T0, at(MINUTE), { worker: 'a' })).resolves.toBeUndefined();
      await other.close();
    });

    test.skipIf(!engine.available)(
      'a worker whose process clock is ten minutes off neither takes a row another worker’s live lease holds nor leaves one whose lease ran out by the database’s clock',
      async () => {
        const { store, other } = await open();
        const mine = createSubmissionMachine(store.sql);
        const live = (await mine.receive(input)).id;
        const ranOut = (await mine.receive(input)).id;
        // By the real clock, which the database reads: one row under another worker's lease for five
        // more minutes, one whose dead worker's lease ended a minute ago; both due an hour ago.
        const real = Date.now();
        const iso = (ms: number) => new Date(real + ms).toISOString();
        await store.sql.run('UPDATE submissions SET next_attempt_at = ?, attempts = 1', [iso(-60 * MINUTE)]);
        await store.sql.run(`UPDATE submissions SET lease_until = ?, leased_by = 'a' WHERE id = ?`, [iso(5 * MINUTE), live]);
        await store.sql.run(`UPDATE submissions SET lease_until = ?, leased_by = 'dead' WHERE id = ?`, [iso(-MINUTE), ranOut]);
        const theirs = createSubmissionMachine(other.sql);
        for (const skew of [10 * MINUTE, -10 * MINUTE]) {
          // This process's clock only: the database's stays right.
          vi.useFakeTimers({ toFake: ['Date'] });
          vi.setSystemTime(real + skew);
          const taken: number[] = [];
          try {
            // The worker's own loop, as it runs in production: no clock of a test's.
            await drain(
              new AbortController().signal,
              {
                claim: (now, lease) => theirs.claim(now, lease, { worker: 'b' }),
                send: async (row) => row,
                finish: async (row) => void taken.push(row!.id),
              },
              { leaseMs: MINUTE },
            );
          } finally {
            vi.useRealTimers();
          }
          expect({ skew, taken }).toEqual({ skew, taken: [ranOut] });
          await expect(store.sql.get('SELECT leased_by FROM submissions WHERE id = ?', [live])).resolves.toEqual({ leased_by: 'a' });
          // Free the row again for the other direction, its lease run out a minute ago.
          await store.sql.run(`UPDATE submissions SET lease_until = ?, leased_by = 'dead' WHERE id = ?`, [iso(-MINUTE), ranOut]);
        }
        await other.close();
      },
    );

    test.skipIf(!engine.available)(
      'the owner’s Spam then Not spam on an instance whose clock runs ten minutes fast waits for the send under way, and no second worker takes the message',
      async () => {
        const { store, other } = await open();
        const { id } = await store.messages.receive(input);
        await store.sql.run('UPDATE submissions SET next_attempt_at = ?', [new Date(Date.now() - MINUTE).toISOString()]);
        // A worker takes it on the database's clock (no time of a test's), as in production.
        const sending = await store.messages.claim(undefined, 2 * MINUTE, { worker: 'a' });
        expect(sending?.id).toBe(id);
        // The owner's buttons, on the other instance, through the store the admin calls.
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(Date.now() + 10 * MINUTE);
        let spam: unknown;
        let notSpam: unknown;
        try {
          spam = await other.spam.markSpam(id);
          notSpam = await other.spam.release(id);
        } finally {
          vi.useRealTimers();
        }
        // Both wait on the send under way: the Spam deferred, then taken back.
        expect(spam).toMatchObject({ from: 'sending', deferred: true });
        expect(notSpam).toMatchObject({ from: 'spam', to: 'sending', changed: true });
        await expect(store.sql.get('SELECT status, leased_by, attempts FROM submissions WHERE id = ?', [id])).resolves.toMatchObject({
          status: 'pending',
          leased_by: 'a',
          attempts: 1,
        });
        // No second worker finds it while the first one's lease lives.
        await expect(other.messages.claim(undefined, 2 * MINUTE, { worker: 'b' })).resolves.toBeUndefined();
        await other.close();
      },
    );

    test.skipIf(!engine.available)(
      'a message received by an instance whose clock runs ten minutes fast is due at once for a worker on the database’s clock',
      async () => {
        const { store, other } = await open();
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(Date.now() + 10 * MINUTE);
        let id: number;
        try {
          ({ id } = await other.messages.receive(input));
        } finally {
          vi.useRealTimers();
        }
        await expect(store.messages.claim(undefined, MINUTE, { worker: 'a' })).resolves.toMatchObject({ id });
        await other.close();
      },
    );

    test.skipIf(!engine.available)('a finish under a lease another worker has taken over, or under its expiry with another name, changes nothing', async () => {
      const { store, other } = await open();
      const mine = createSubmissionMachine(store.sql);
      const { id } = await mine.receive(input);
      await due(store);
      const first = await mine.claim(T0, at(MINUTE), { worker: 'a' });
      // The same expiry under another worker's name is not the lease.
      await expect(mine.finish(id, { worker: 'b', until: first!.lease.until }, { kind: 'failed', at: at(1_000), error: '550' })).resolves.toBe('pending');
      const second = await createSubmissionMachine(other.sql).claim(at(MINUTE), at(2 * MINUTE), { worker: 'b' });
      expect(second?.id).toBe(id);
      await expect(mine.finish(id, first!.lease, { kind: 'failed', at: at(MINUTE + 1), error: '550' })).resolves.toBe('pending');
      await expect(store.sql.get('SELECT status, attempts, leased_by, last_error FROM submissions WHERE id = ?', [id])).resolves.toEqual({
        status: 'pending',
        attempts: 2,
        leased_by: 'b',
        last_error: null,
      });
      await other.close();
    });

    test.skipIf(!engine.available)('a message whose every send dies is counted at each claim and held as failed after the most attempts', async () => {
      const { store } = await open();
      const machine = createSubmissionMachine(store.sql);
      const { id } = await machine.receive(input);
      await due(store);
      // Three claims whose sends never end: each lease simply runs out.
      for (let n = 0; n < 3; n++) {
        await expect(machine.claim(at(n * MINUTE), at((n + 1) * MINUTE), { maxAttempts: 3 })).resolves.toMatchObject({ id });
      }
      await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 3 });
      // No claim takes it again; the scheduled upkeep, not a claim, gives it up.
      await expect(machine.claim(at(3 * MINUTE), at(4 * MINUTE), { maxAttempts: 3 })).resolves.toBeUndefined();
      await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 3 });
      await expect(machine.upkeep(at(3 * MINUTE), { maxAttempts: 3 })).resolves.toEqual({
        gaveUp: [{ id, error: 'gave up after 3 attempts that never ended (the server stopped during each send)' }],
      });
      await expect(store.outbox.find(id)).resolves.toMatchObject({
        status: 'failed',
        attempts: 3,
        lastError: 'gave up after 3 attempts that never ended (the server stopped during each send)',
      });
      await expect(store.outbox.history(id)).resolves.toEqual([
        { at: at(3 * MINUTE).toISOString(), outcome: 'failed', error: 'gave up after 3 attempts that never ended (the server stopped during each send)' },
      ]);
      // The owner's "Retry" gives it a fresh round.
      await expect(machine.requeue(id, at(4 * MINUTE))).resolves.toMatchObject({ changed: true, to: 'pending' });
      await expect(machine.claim(at(4 * MINUTE), at(5 * MINUTE), { maxAttempts: 3 })).resolves.toMatchObject({ id });
    });

    test.skipIf(!engine.available)(
      'a message with a request of the owner’s on it is claimed by no worker, another instance’s included, after its sender died; the upkeep applies the request',
      async () => {
        const { store, other } = await open();
        const mine = createSubmissionMachine(store.sql);
        const theirs = createSubmissionMachine(other.sql);
        const held = (await mine.receive(input)).id;
        const deleted = (await mine.receive(input)).id;
        await due(store);
        await mine.claim(T0, at(MINUTE), { worker: 'a' });
        await mine.claim(T0, at(MINUTE), { worker: 'a' });
        // The owner's "Spam" and "Delete" while each is being sent: requests its send's end would apply.
        await expect(mine.hold(held, at(1_000))).resolves.toMatchObject({ deferred: true });
        await expect(mine.remove(deleted, at(1_000))).resolves.toMatchObject({ deferred: true });
        // The sender died: its leases ran out, and the messages read as pending and due. No claim
        // may take them: a send now would mail what the owner marked as spam or deleted.
        await expect(theirs.claim(at(2 * MINUTE), at(3 * MINUTE), { worker: 'b' })).resolves.toBeUndefined();
        await expect(mine.claim(at(2 * MINUTE), at(3 * MINUTE), { worker: 'a' })).resolves.toBeUndefined();
        await expect(store.outbox.nextDueAt()).resolves.toBeUndefined();
        await expect(store.sql.all('SELECT status, requested, attempts FROM submissions ORDER BY id')).resolves.toEqual([
          { status: 'pending', requested: 'hold', attempts: 1 },
          { status: 'pending', requested: 'delete', attempts: 1 },
        ]);
        await expect(theirs.upkeep(at(2 * MINUTE))).resolves.toMatchObject({ gaveUp: [] });
        await expect(store.outbox.find(held)).resolves.toMatchObject({ status: 'spam', sentAt: null, attempts: 1 });
        await expect(store.outbox.find(deleted)).resolves.toBeUndefined();
        await other.close();
      },
    );

    test.skipIf(!engine.available)('a message whose every send died with the owner’s request on it gets the request, not the give-up', async () => {
      const { store } = await open();
      const machine = createSubmissionMachine(store.sql);
      const { id } = await machine.receive(input);
      await due(store);
      await machine.claim(T0, at(MINUTE), { maxAttempts: 1 });
      await machine.remove(id, at(1_000));
      await expect(machine.upkeep(at(2 * MINUTE), { maxAttempts: 1 })).resolves.toMatchObject({ gaveUp: [] });
      await expect(store.outbox.find(id)).resolves.toBeUndefined();
      await expect(store.sql.all('SELECT id FROM delivery_attempts')).resolves.toEqual([]);
    });
  });

  describe('the fenced finish', () => {
    const table = {
      table: 'submissions',
      waiting: 'pending',
      failed: 'failed',
      dueWhenUnset: true,
      roundFrom: '(SELECT min(attempted_at) FROM delivery_attempts WHERE submission_id = submissions.id)',
    };
    const policy = { backoff: { baseMs: 1_000, maxMs: 4_000 }, maxAttempts: 3, random: () => 0 };
    /** The queue's finish in a transaction of its own, its answer without the columns it asked back. */
    const finish = async (store: Store, ...args: Parameters<ReturnType<typeof createLeasedQueue>['finish']> extends [unknown, ...infer R] ? R : never) => {
      const finished = await store.sql.transaction((tx) => createLeasedQueue(store.engine, table).finish(tx, ...args));
      if (!finished) return finished;
      const { row: _, at: __, ...rest } = finished;
      return rest;
    };

    test.skipIf(!engine.available)('a row finished without a claim counts its try now, in the decision too', async () => {
      const { store } = await open();
      const { id } = await createSubmissionMachine(store.sql).receive(input);
      await expect(finish(store, id, null, { kind: 'failed', error: '550' }, T0)).resolves.toStrictEqual({ kind: 'failed', attempts: 1, error: '550' });
      const second = (await createSubmissionMachine(store.sql).receive(input)).id;
      // Counted now, the one try reaches the most of one: given up rather than retried.
      await expect(finish(store, second, null, { kind: 'retry', error: '451' }, T0, { ...policy, maxAttempts: 1 })).resolves.toMatchObject({
        kind: 'failed',
        attempts: 1,
        error: '451',
      });
    });

    test.skipIf(!engine.available)(
      'a retry is given its next try, or given up past the round with the reason of the queue; a retry needs the policy',
      async () => {
        const { store } = await open();
        const machine = createSubmissionMachine(store.sql);
        const { id } = await machine.receive(input);
        await due(store);
        const taken = await machine.claim(T0, at(MINUTE));
        await expect(finish(store, id, taken!.lease, { kind: 'retry', error: '451' }, T0)).rejects.toThrow(/needs the queue's policy/);
        const round = { ms: MINUTE, by: 'try' as const };
        const gaveUp = (attempts: number, error: string, over: boolean) => `${attempts} ${error} ${over}`;
        await expect(finish(store, id, taken!.lease, { kind: 'retry', error: '451' }, T0, { ...policy, round, gaveUp })).resolves.toStrictEqual({
          kind: 'retry',
          attempts: 1,
          error: '451',
          next: at(1_000),
        });
        const again = await machine.claim(at(MINUTE), at(2 * MINUTE));
        // The round began at T0 (no history here: the try's end); a try ending a minute later is past it.
        const late = { ...policy, round: { ms: MINUTE, by: 'try' as const }, gaveUp };
        await store.sql.run(`INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, 'retrying', '451')`, [
          id,
          T0.toISOString(),
        ]);
        await expect(finish(store, id, again!.lease, { kind: 'retry', error: '451' }, at(MINUTE), late)).resolves.toStrictEqual({
          kind: 'failed',
          attempts: 2,
          error: '2 451 true',
          overRound: true,
        });
      },
    );
    test.skipIf(!engine.available)(
      'a retry recorded at the last attempt with its own time is given up by the finish, not by the upkeep as a dead send',
      async () => {
        const { store } = await open();
        const machine = createSubmissionMachine(store.sql);
        const { id } = await machine.receive(input);
        await due(store);
        const taken = await machine.claim(T0, at(MINUTE), { maxAttempts: 1 });
        // The caller picks the next time itself (outbox.markRetry), yet this was the last attempt allowed.
        await expect(
          finish(store, id, taken!.lease, { kind: 'retry', error: '451', next: at(5_000) }, T0, { ...policy, maxAttempts: 1 }),
        ).resolves.toStrictEqual({
          kind: 'failed',
          attempts: 1,
          error: '451',
        });
        // A row at the most attempts whose last try ended normally (the owner lowered the most) is
        // given up by the upkeep as tried so often, not as a send that never ended.
        const other = (await machine.receive(input)).id;
        await due(store);
        const again = await machine.claim(T0, at(MINUTE), { maxAttempts: 2 });
        expect(again?.id).toBe(other);
        await finish(store, other, again!.lease, { kind: 'retry', error: '451', next: at(1_000) }, T0);
        const { gaveUp } = await machine.upkeep(at(2 * MINUTE), { maxAttempts: 1 });
        expect(gaveUp).toEqual([{ id: other, error: 'gave up: tried as many times as allowed (1)' }]);
        await expect(store.outbox.find(other)).resolves.toMatchObject({ status: 'failed', lastError: 'gave up: tried as many times as allowed (1)' });
      },
    );

    test.skipIf(!engine.available)(
      'a retry with its own time below the most tries stays a retry; one finished without a claim counts its try; one under a lost lease changes nothing; a send done at the last try is done',
      async () => {
        const { store } = await open();
        const machine = createSubmissionMachine(store.sql);
        const { id } = await machine.receive(input);
        await due(store);
        const taken = await machine.claim(T0, at(MINUTE), { maxAttempts: 3 });
        // One try of three: the time the caller picked stands.
        await expect(finish(store, id, taken!.lease, { kind: 'retry', error: '451', next: at(5_000) }, T0, policy)).resolves.toMatchObject({
          kind: 'retry',
          attempts: 1,
        });
        // Under a lease that is not the row's (taken back meanwhile): nothing is written, nothing answered.
        await expect(
          finish(store, id, { worker: 'someone else', until: at(MINUTE).toISOString() }, { kind: 'retry', error: '451', next: at(5_000) }, T0, policy),
        ).resolves.toBeUndefined();
        // Two tries on record and a finish with no claim (the row was never taken): its try is the third, the last.
        await store.sql.run('UPDATE submissions SET attempts = 2, lease_until = NULL, leased_by = NULL WHERE id = ?', [id]);
        await expect(finish(store, id, null, { kind: 'retry', error: '451', next: at(5_000) }, T0, policy)).resolves.toMatchObject({ kind: 'failed' });
        // A send that succeeded at the last try allowed is done, whatever the policy says of retries.
        const last = (await machine.receive(input)).id;
        await due(store);
        const sent = await machine.claim(T0, at(MINUTE), { maxAttempts: 1 });
        expect(sent?.id).toBe(last);
        await expect(finish(store, last, sent!.lease, { kind: 'done', set: "status = 'sent'" }, T0, { ...policy, maxAttempts: 1 })).resolves.toMatchObject({
          kind: 'done',
        });
      },
    );

    test.skipIf(!engine.available)(
      'a message whose send died, its lease then ended by a restart (SQLite at start), is given up as a send that never ended',
      async () => {
        const { store } = await open();
        const machine = createSubmissionMachine(store.sql);
        const { id } = await machine.receive(input);
        await due(store);
        await machine.claim(T0, at(MINUTE), { maxAttempts: 1 });
        // The server is killed during the send; at the next start every lease is ended.
        await machine.releaseLeases();
        const { gaveUp } = await machine.upkeep(at(2 * MINUTE), { maxAttempts: 1 });
        expect(gaveUp).toEqual([{ id, error: expect.stringContaining('never ended') }]);
      },
    );
  });

  describe('the signup queue', () => {
    test.skipIf(!engine.available)('a signup the provider refuses for good is given up at once, its end on record', async () => {
      const { store } = await open();
      const signups = createSignups(store.sql, { retryBaseMs: 1_000 });
      const id = await signups.enqueue('ada@example.org', 'kit', T0);
      const taken = await signups.claim(at(1_000), at(MINUTE));
      await expect(signups.finish(id, taken!.lease, { ok: false, reason: 'invalid-address', detail: 'fake address' }, at(2_000))).resolves.toBe('failed');
      await expect(store.sql.get('SELECT status, done_at, next_attempt_at FROM signup_queue WHERE id = ?', [id])).resolves.toEqual({
        status: 'failed',
        done_at: at(2_000).toISOString(),
        next_attempt_at: null,
      });
    });

    test.skipIf(!engine.available)(
      'the signup worker, its process clock ten minutes ahead, leaves the signup under a live lease and times its retry on the database’s clock',
      async () => {
        const { store, other } = await open();
        const real = Date.now();
        const iso = (ms: number) => new Date(real + ms).toISOString();
        const mine = createSignups(store.sql, { retryBaseMs: 1_000 });
        const live = await mine.enqueue('ada@example.org', 'kit', new Date(real - 60 * MINUTE));
        const ranOut = await mine.enqueue('grace@example.org', 'kit', new Date(real - 60 * MINUTE));
        await store.sql.run(`UPDATE signup_queue SET lease_until = ?, leased_by = 'a', attempts = 1 WHERE id = ?`, [iso(5 * MINUTE), live]);
        await store.sql.run(`UPDATE signup_queue SET lease_until = ?, leased_by = 'dead', attempts = 1 WHERE id = ?`, [iso(-MINUTE), ranOut]);
        const tried: string[] = [];
        const worker = createSignupWorker({
          signups: createSignups(other.sql, { retryBaseMs: 1_000, worker: 'b', random: () => 0 }),
          // The provider is down: the signup is retried, its next time reckoned by the queue.
          provider: {
            name: 'kit',
            subscribe: async (email) => {
              tried.push(email);
              return { ok: false, reason: 'unavailable', detail: '503' };
            },
          },
          logger: createLogger({ level: 'silent' }),
        });
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(real + 10 * MINUTE);
        try {
          await worker.runPass();
        } finally {
          vi.useRealTimers();
        }
        expect(tried).toEqual(['grace@example.org']);
        await expect(store.sql.get('SELECT leased_by FROM signup_queue WHERE id = ?', [live])).resolves.toEqual({ leased_by: 'a' });
        const retried = await store.sql.get<{ status: string; next_attempt_at: string }>('SELECT status, next_attempt_at FROM signup_queue WHERE id = ?', [
          ranOut,
        ]);
        expect(retried?.status).toBe('waiting');
        // Two tries so far: the second wait (2 s) from the database's now, not from ten minutes ahead.
        const next = Date.parse(retried!.next_attempt_at);
        expect(next > real && next < real + 5 * MINUTE).toBe(true);
        await other.close();
      },
    );

    test.skipIf(!engine.available)(
      'a signup stored or retried by an instance whose clock runs ten minutes fast is due for a worker on the database’s clock',
      async () => {
        const { store, other } = await open();
        const fast = createSignups(other.sql, { retryBaseMs: 0 });
        const stored = await tenMinutesFast(() => fast.enqueue('ada@example.org', 'kit'));
        const worker = createSignups(store.sql, { retryBaseMs: 0, worker: 'a' });
        await expect(worker.claim(undefined, MINUTE)).resolves.toMatchObject({ signup: { id: stored } });
        const failed = await worker.enqueue('grace@example.org', 'kit');
        await store.sql.run(`UPDATE signup_queue SET status = 'failed', next_attempt_at = NULL WHERE id = ?`, [failed]);
        await expect(tenMinutesFast(() => fast.retry(failed))).resolves.toBe(true);
        await expect(worker.claim(undefined, MINUTE)).resolves.toMatchObject({ signup: { id: failed } });
        await other.close();
      },
    );

    test.skipIf(!engine.available)('two workers taking at once get different signups, and a third finds none', async () => {
      const { store, other } = await open();
      const mine = createSignups(store.sql, { retryBaseMs: 1_000, worker: 'a' });
      const theirs = createSignups(other.sql, { retryBaseMs: 1_000, worker: 'b' });
      const ids = [await mine.enqueue('ada@example.org', 'kit', T0), await mine.enqueue('bea@example.org', 'kit', T0)];
      const taken = await Promise.all([mine.claim(at(1_000), at(MINUTE)), theirs.claim(at(1_000), at(MINUTE))]);
      expect(taken.map((t) => t?.signup.id).sort()).toEqual(ids);
      expect(taken.map((t) => t?.lease.worker)).toEqual(['a', 'b']);
      await expect(mine.claim(at(1_000), at(MINUTE))).resolves.toBeUndefined();
      await other.close();
    });

    test.skipIf(!engine.available)('a finish under a lease another worker has taken over, or under its expiry with another name, changes nothing', async () => {
      const { store, other } = await open();
      const mine = createSignups(store.sql, { retryBaseMs: 1_000, worker: 'a' });
      const id = await mine.enqueue('ada@example.org', 'kit', T0);
      const first = await mine.claim(at(1_000), at(MINUTE));
      await expect(mine.finish(id, { worker: 'b', until: first!.lease.until }, { ok: true }, at(2_000))).resolves.toBeUndefined();
      const second = await createSignups(other.sql, { retryBaseMs: 1_000, worker: 'b' }).claim(at(MINUTE), at(2 * MINUTE));
      expect(second?.signup.id).toBe(id);
      await expect(mine.finish(id, first!.lease, { ok: true }, at(MINUTE + 1))).resolves.toBeUndefined();
      await expect(store.sql.get('SELECT status, attempts, leased_by, done_at FROM signup_queue WHERE id = ?', [id])).resolves.toEqual({
        status: 'waiting',
        attempts: 2,
        leased_by: 'b',
        done_at: null,
      });
      await other.close();
    });

    test.skipIf(!engine.available)('a signup whose every try dies is held as failed after the most tries', async () => {
      const { store } = await open();
      const signups = createSignups(store.sql, { retryBaseMs: 1_000, maxAttempts: 2 });
      const id = await signups.enqueue('ada@example.org', 'kit', T0);
      await expect(signups.claim(at(1_000), at(MINUTE))).resolves.toMatchObject({ signup: { id, attempts: 1 } });
      await expect(signups.claim(at(MINUTE), at(2 * MINUTE))).resolves.toMatchObject({ signup: { id, attempts: 2 } });
      await expect(signups.claim(at(2 * MINUTE), at(3 * MINUTE))).resolves.toBeUndefined();
      await expect(signups.nextDueAt()).resolves.toBeUndefined();
      await expect(signups.pending(10)).resolves.toEqual([expect.objectContaining({ id, status: 'waiting', attempts: 2 })]);
      await expect(signups.upkeep(at(2 * MINUTE))).resolves.toEqual([id]);
      await expect(signups.pending(10)).resolves.toEqual([
        expect.objectContaining({ id, status: 'failed', attempts: 2, lastError: 'gave up after 2 tries that never ended' }),
      ]);
    });
  });

  describe('the webhook deliveries', () => {
    const endpoint: Endpoint = { name: 'webhook', kind: 'standard', url: 'http://127.0.0.1:9/hook', events: ['contact.received'] };
    /** Two events, each fanned out to the one endpoint: two deliveries due at T0. */
    const deliveriesDue = async (store: Store) => {
      for (const id of [1, 2]) await store.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id }, T0, `event-${id}`));
      expect(await createDeliveries(store.sql).fanOut([endpoint], T0)).toBe(2);
    };

    test.skipIf(!engine.available)(
      'a delivery fanned out by an instance whose clock runs ten minutes fast is due at once for a worker on the database’s clock',
      async () => {
        const { store, other } = await open();
        await store.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id: 1 }, new Date(), 'event-1'));
        await expect(tenMinutesFast(() => createDeliveries(other.sql).fanOut([endpoint]))).resolves.toBe(1);
        await expect(createDeliveries(store.sql, { worker: 'a' }).claim(undefined, MINUTE)).resolves.toMatchObject({ event: { id: 'event-1' } });
        await other.close();
      },
    );

    test.skipIf(!engine.available)(
      'the owner’s Replay on an instance whose clock runs ten minutes fast leaves a delivery under a live lease to its try, and makes a waiting one due on the database’s clock',
      async () => {
        const { store, other } = await open();
        for (const id of [1, 2]) await store.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id }, new Date(), `event-${id}`));
        const worker = createDeliveries(store.sql, { worker: 'a' });
        await worker.fanOut([endpoint]);
        const sending = await worker.claim(undefined, 2 * MINUTE);
        const waiting = (await worker.list(10)).find((delivery) => delivery.id !== sending!.delivery.id)!;
        // The other one waits five minutes for its next try, by the database's clock.
        await store.sql.run('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?', [new Date(Date.now() + 5 * MINUTE).toISOString(), waiting.id]);
        const owner = createDeliveries(other.sql);
        await expect(tenMinutesFast(() => owner.replay(sending!.delivery.id))).resolves.toEqual({ kind: 'sending', until: sending!.lease.until });
        await expect(tenMinutesFast(() => owner.replay(waiting.id))).resolves.toMatchObject({ kind: 'due' });
        await expect(store.sql.get('SELECT leased_by, lease_until FROM webhook_deliveries WHERE id = ?', [sending!.delivery.id])).resolves.toEqual({
          leased_by: 'a',
          lease_until: sending!.lease.until,
        });
        // Due now on the database's clock: a worker there takes it at once, not ten minutes later.
        await expect(createDeliveries(store.sql, { worker: 'b' }).claim(undefined, MINUTE)).resolves.toMatchObject({ delivery: { id: waiting.id } });
        await other.close();
      },
    );

    test.skipIf(!engine.available)('two workers taking at once get different deliveries, and a third finds none', async () => {
      const { store, other } = await open();
      await deliveriesDue(store);
      const mine = createDeliveries(store.sql, { worker: 'a' });
      const theirs = createDeliveries(other.sql, { worker: 'b' });
      const taken = await Promise.all([mine.claim(T0, at(MINUTE), 'webhook'), theirs.claim(T0, at(MINUTE), 'webhook')]);
      expect(taken.map((t) => t?.event.id).sort()).toEqual(['event-1', 'event-2']);
      expect(taken.map((t) => t?.lease.worker)).toEqual(['a', 'b']);
      await expect(mine.claim(T0, at(MINUTE))).resolves.toBeUndefined();
      await other.close();
    });

    test.skipIf(!engine.available)('a finish under a lease another worker has taken over, or under its expiry with another name, changes nothing', async () => {
      const { store, other } = await open();
      await store.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id: 1 }, T0, 'event-1'));
      const mine = createDeliveries(store.sql, { worker: 'a' });
      await mine.fanOut([endpoint], T0);
      const first = await mine.claim(T0, at(MINUTE));
      const id = first!.delivery.id;
      await expect(mine.finish(id, { worker: 'b', until: first!.lease.until }, { kind: 'delivered', status: 200 }, at(1_000))).resolves.toBeUndefined();
      const second = await createDeliveries(other.sql, { worker: 'b' }).claim(at(MINUTE), at(2 * MINUTE));
      expect(second?.delivery.id).toBe(id);
      await expect(mine.finish(id, first!.lease, { kind: 'delivered', status: 200 }, at(MINUTE + 1))).resolves.toBeUndefined();
      await expect(store.sql.get('SELECT status, attempts, leased_by, delivered_at FROM webhook_deliveries WHERE id = ?', [id])).resolves.toEqual({
        status: 'pending',
        attempts: 2,
        leased_by: 'b',
        delivered_at: null,
      });
      await expect(mine.attempts(id)).resolves.toEqual([]);
      await other.close();
    });

    test.skipIf(!engine.available)('a delivery whose every try dies is held as failed after the most tries, its give-up on record', async () => {
      const { store } = await open();
      await store.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id: 1 }, T0, 'event-1'));
      const deliveries = createDeliveries(store.sql, { maxAttempts: 2 });
      await deliveries.fanOut([endpoint], T0);
      await expect(deliveries.claim(T0, at(MINUTE))).resolves.toMatchObject({ delivery: { attempts: 1 } });
      await expect(deliveries.claim(at(MINUTE), at(2 * MINUTE))).resolves.toMatchObject({ delivery: { attempts: 2 } });
      await expect(deliveries.claim(at(2 * MINUTE), at(3 * MINUTE))).resolves.toBeUndefined();
      await expect(deliveries.dueEndpoints(at(2 * MINUTE))).resolves.toEqual([]);
      await expect(deliveries.nextDueAt()).resolves.toBeUndefined();
      await expect(deliveries.list(10)).resolves.toEqual([expect.objectContaining({ status: 'pending', attempts: 2 })]);
      await expect(deliveries.upkeep(at(2 * MINUTE))).resolves.toHaveLength(1);
      const [failed] = await deliveries.list(10);
      expect(failed).toMatchObject({ status: 'failed', attempts: 2, lastError: 'gave up after 2 tries that never ended', nextAttemptAt: null });
      await expect(deliveries.attempts(failed!.id)).resolves.toEqual([
        { at: at(2 * MINUTE).toISOString(), status: null, error: 'gave up after 2 tries that never ended' },
      ]);
    });
  });
});
