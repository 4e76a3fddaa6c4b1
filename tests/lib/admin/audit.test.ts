import { describe, expect, test } from 'vitest';
import { describeEntry, erasedAddress, OTHER_CLIENTS } from '../../../packages/site-forms/src/lib/admin/audit.ts';

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
