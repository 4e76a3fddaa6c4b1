import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { readVariables } from '../../../packages/site-forms/src/lib/config/variables.ts';

describe('reading one concern’s variables', () => {
  const schemas = {
    CODE: v.optional(v.pipe(v.string(), v.regex(/^\d+$/)), '7'),
    NAME: v.optional(v.string(), 'default'),
  };

  test('a check without its own message says "is not valid", never quoting the value', () => {
    expect(readVariables(schemas, { CODE: 'pm-token-9f8e' })).toEqual({ config: { CODE: '7', NAME: 'default' }, problems: ['CODE is not valid'] });
  });

  test('reads each variable, defaults for those not set', () => {
    expect(readVariables(schemas, { CODE: '42' })).toEqual({ config: { CODE: '42', NAME: 'default' }, problems: [] });
  });

  test('reports only the first failed check of a variable', () => {
    const twoChecks = { N: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be digits'), v.minLength(3, 'must be three long')), '100') };
    expect(readVariables(twoChecks, { N: 'x' })).toEqual({ config: { N: '100' }, problems: ['N must be digits'] });
  });
});
