import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';

// What the Mailchimp SDK actually loads: its own `require('superagent')` from its own folder.
const sdk = createRequire(createRequire(import.meta.url).resolve('@mailchimp/mailchimp_marketing/package.json'));
const major = (name: string, from: NodeJS.Require) => Number((from(`${name}/package.json`) as { version: string }).version.split('.')[0]);

describe("the Mailchimp SDK's transport (package.json overrides)", () => {
  test('is superagent 10 or later, not the 3.8.1 the SDK pins', () => {
    expect(major('superagent', sdk)).toBeGreaterThanOrEqual(10);
  });

  test('so its formidable is past the published advisory of 1.x (GHSA-8cp3-66vr-3r4c)', () => {
    const superagent = createRequire(sdk.resolve('superagent/package.json'));
    expect(major('formidable', superagent)).toBeGreaterThanOrEqual(3);
  });
});
