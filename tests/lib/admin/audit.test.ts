import { describe, expect, test } from 'vitest';
import { AUDIT_DEFAULT_RETENTION_DAYS, erasedAddress, REPEAT_WINDOW_MS } from '../../../src/lib/admin/audit.ts';

describe('the audit page', () => {
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
