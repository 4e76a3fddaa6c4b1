import { describe, expect, test } from 'vitest';
import { AUDIT_DEFAULT_RETENTION_DAYS, AUDIT_LABELS, erasedAddress, REPEAT_WINDOW_MS } from '../../../src/lib/admin/audit.ts';

describe('the audit page', () => {
  test('names each action in words', () => {
    expect(AUDIT_LABELS).toEqual({
      'sign-in': 'Signed in',
      'sign-in-failed': 'Sign-in failed',
      'sign-out': 'Signed out',
      'export-messages': 'Exported messages',
      'export-subscribers': 'Exported subscribers',
      'delete-message': 'Deleted a message',
      'delete-subscriber': 'Deleted a subscriber',
      release: 'Released from spam',
      'mark-spam': 'Marked as spam',
      retry: 'Retried delivery',
      'replay-delivery': 'Replayed a webhook delivery',
      'retry-signup': 'Retried a newsletter signup',
      retention: 'Deleted old messages',
    });
  });

  test('counts repeats within a quarter-hour and keeps a year without RETENTION_DAYS', () => {
    expect(REPEAT_WINDOW_MS).toBe(900_000);
    expect(AUDIT_DEFAULT_RETENTION_DAYS).toBe(365);
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
