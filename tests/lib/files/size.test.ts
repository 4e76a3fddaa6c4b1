import { expect, test } from 'vitest';
import { formatSize } from '../../../packages/site-forms/src/lib/files/size.ts';

test('a size in bytes, kB and MB of powers of 1000, written as the language writes numbers', () => {
  expect([0, 999, 1000, 1536, 999_999, 1_000_000, 1_500_000, 25_000_000].map((bytes) => formatSize(bytes, 'en'))).toEqual([
    '0 B',
    '999 B',
    '1 kB',
    '1.5 kB',
    '1,000 kB',
    '1 MB',
    '1.5 MB',
    '25 MB',
  ]);
  expect(formatSize(1_500_000, 'de')).toBe('1,5 MB');
});
