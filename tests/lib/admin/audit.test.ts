import { describe, expect, test } from 'vitest';
import { createAuditLog, describeEntry, erasedAddress, OTHER_CLIENTS } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { testEngines } from '../../support/stores.ts';

// The quarter-hour of repeats and the year kept without RETENTION_DAYS are tested as behaviour,
// on both engines, in store.test.ts.

describe('what the audit page shows of an entry', () => {
  const at = '2026-11-22T10:00:00.000Z';

  test.each([
    [
      { at, action: 'sign-in', detail: '', client: 'c0ffee' },
      { what: 'Signed in', who: 'c0ffee' },
    ],
    [
      { at, action: 'delete-message', detail: '#7', client: 'c0ffee', repeats: 1 },
      { what: 'Deleted a message: #7', who: 'c0ffee' },
    ],
    [
      { at, action: 'sign-in-failed', detail: 'wrong password', client: 'c0ffee', repeats: 2 },
      { what: 'Sign-in failed: wrong password (2 times within a quarter of an hour)', who: 'c0ffee' },
    ],
    [
      { at, action: 'sign-in-failed', detail: 'wrong password', client: OTHER_CLIENTS, repeats: 380 },
      { what: 'Sign-in failed: wrong password (380 times within a quarter of an hour)', who: 'other addresses' },
    ],
    // Issue 42: the person or key by name, and still the client.
    [
      { at, action: 'mark-spam', detail: '#7', client: 'c0ffee', actor: 'person:2', actorName: 'Eddie <eddie@example.org>' },
      { what: 'Marked as spam: #7', who: 'Eddie <eddie@example.org> (c0ffee)' },
    ],
    [
      { at, action: 'delete-message', detail: '#8', client: 'c0ffee', actor: 'key:4', actorName: 'key ci-export' },
      { what: 'Deleted a message: #8', who: 'key ci-export (c0ffee)' },
    ],
    [
      { at, action: 'refused', detail: 'mark-spam', client: OTHER_CLIENTS, repeats: 12, actor: 'person:3', actorName: 'Rita <rita@example.org>' },
      { what: 'Refused (the role cannot do this): mark-spam (12 times within a quarter of an hour)', who: 'Rita <rita@example.org> (other addresses)' },
    ],
  ] as const)('%j', (entry, shown) => {
    expect(describeEntry(entry)).toEqual(shown);
  });
});

describe('an erased subscriber in the audit log', () => {
  test.each([
    ['ada@example.org', '…@example.org'],
    ['a@b@example.org', '…@example.org'],
    ['@example.org', '…@example.org'],
    ['no-at-sign', '…'],
    ['', '…'],
  ])('%j is kept as %j', (email, kept) => {
    expect(erasedAddress(email)).toBe(kept);
  });
});

describe.each(testEngines())('the audit log names who did it, on $name (issue 42)', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('record, recordRepeated and list carry the actor and their name; entries of nobody known have neither', async () => {
      const { store } = await open();
      const audit = createAuditLog(store.sql);
      const eddie = { actor: 'person:2', actorName: 'Eddie <eddie@example.org>' };
      const rita = { actor: 'person:3', actorName: 'Rita <rita@example.org>' };
      await audit.record({ at: '2026-11-22T10:00:00.000Z', action: 'sign-in-failed', detail: 'wrong password', client: 'c0ffee' });
      await audit.record({ at: '2026-11-22T10:01:00.000Z', action: 'mark-spam', detail: '#7', client: 'c0ffee', ...eddie });
      // Two people behind one address: each refusal counted on its own person's entry.
      for (const who of [rita, rita, eddie]) {
        await audit.recordRepeated({ at: '2026-11-22T10:02:00.000Z', action: 'refused', detail: 'delete-message', client: 'c0ffee', ...who });
      }
      await expect(audit.list(10, 0)).resolves.toEqual({
        entries: [
          { at: '2026-11-22T10:02:00.000Z', action: 'refused', detail: 'delete-message', client: 'c0ffee', repeats: 1, ...eddie },
          { at: '2026-11-22T10:02:00.000Z', action: 'refused', detail: 'delete-message', client: 'c0ffee', repeats: 2, ...rita },
          { at: '2026-11-22T10:01:00.000Z', action: 'mark-spam', detail: '#7', client: 'c0ffee', repeats: 1, ...eddie },
          { at: '2026-11-22T10:00:00.000Z', action: 'sign-in-failed', detail: 'wrong password', client: 'c0ffee', repeats: 1 },
        ],
        total: 4,
      });
    });
  });
});
