import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';

/** The major version of the package `name` as `from` loads it (its package.json may not be exported). */
function majorOf(name: string, from: NodeJS.Require): number {
  for (let dir = dirname(from.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const found = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version: string };
      if (found.name === name) return Number(found.version.split('.')[0]);
    } catch {}
  }
  throw new Error(`${name} not found`);
}

// What the Mailchimp SDK actually loads: its own `require('superagent')`, from its own folder.
const sdk = createRequire(createRequire(import.meta.url).resolve('@mailchimp/mailchimp_marketing/package.json'));

describe("the Mailchimp SDK's transport (package.json overrides)", () => {
  test('is superagent 10 or later, not the 3.8.1 the SDK pins', () => {
    expect(majorOf('superagent', sdk)).toBeGreaterThanOrEqual(10);
  });

  test('so its formidable is past the published advisory of 1.x (GHSA-8cp3-66vr-3r4c)', () => {
    expect(majorOf('formidable', createRequire(sdk.resolve('superagent')))).toBeGreaterThanOrEqual(3);
  });
});
