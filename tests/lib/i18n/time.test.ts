import { describe, expect, test } from 'vitest';
import { formatTime } from '../../../packages/site-forms/src/lib/i18n/time.ts';

describe('a time as a mail writes it', () => {
  test.each([
    ['en', 'UTC', '2026-11-28T17:14:15.623Z', '28 November 2026 at 17:14 UTC'],
    ['de', 'UTC', '2026-11-28T17:14:15.623Z', '28. November 2026 um 17:14 UTC'],
    ['de', 'Europe/Berlin', '2026-11-28T17:14:15.623Z', '28. November 2026 um 18:14 MEZ'],
    ['de', 'Europe/Berlin', '2026-07-01T22:30:00.000Z', '2. Juli 2026 um 00:30 MESZ'],
    ['en', 'Europe/Vienna', '2026-05-04T10:20:30.456Z', '4 May 2026 at 12:20 CEST'],
    ['en', 'America/New_York', '2026-01-01T03:00:00.000Z', '31 December 2025 at 22:00 GMT-5'],
  ] as const)('%s in %s: %s is %s', (language, timeZone, at, expected) => {
    expect(formatTime(at, language, timeZone)).toBe(expected);
  });

  test('a Date is read as the same moment', () => {
    expect(formatTime(new Date('2026-11-28T17:14:15.623Z'), 'de', 'Europe/Vienna')).toBe('28. November 2026 um 18:14 MEZ');
  });

  test('a stored value that is no time is given back as it is', () => {
    expect(formatTime('yesterday', 'en', 'UTC')).toBe('yesterday');
  });
});
