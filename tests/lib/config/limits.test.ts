import { describe, expect, test } from 'vitest';
import { describeConfig, readConfig, requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';

// API_RATE_LIMIT_PER_MINUTE (issue 42): requests per API key and minute on /api/v1, its own setting.
describe('the API rate limit', () => {
  test('is 120 requests per key and minute unless set, and RATE_LIMIT_MAX=0 does not turn it off', () => {
    expect(requireConfig({}).apiRateLimitPerMinute).toBe(120);
    expect(requireConfig({ RATE_LIMIT_MAX: '0' }).apiRateLimitPerMinute).toBe(120);
    expect(describeConfig(requireConfig({ RATE_LIMIT_MAX: '0' }))).toMatchObject({ rateLimit: 'off', apiRateLimitPerMinute: 120 });
  });

  test.each([
    ['1', 1],
    [' 600 ', 600],
    ['100000', 100_000],
  ])('API_RATE_LIMIT_PER_MINUTE=%s allows %i', (value, perMinute) => {
    expect(requireConfig({ API_RATE_LIMIT_PER_MINUTE: value }).apiRateLimitPerMinute).toBe(perMinute);
  });

  test.each(['0', '-1', '100001', '1.5', 'many'])('API_RATE_LIMIT_PER_MINUTE=%s stops the start, naming it', (value) => {
    expect(readConfig({ API_RATE_LIMIT_PER_MINUTE: value })).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^API_RATE_LIMIT_PER_MINUTE /)],
    });
  });
});
