import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { loadEnvFile, readDataDir } from '../../../packages/site-forms/src/lib/config/config.ts';

describe('the data directory for the command-line tools', () => {
  test.each([
    ['not set: data beside package.json', {}, fileURLToPath(new URL('../../../data', import.meta.url))],
    ['set', { DATA_DIR: '/var/lib/site-forms' }, '/var/lib/site-forms'],
    ['set with spaces around it', { DATA_DIR: ' /srv/forms ' }, '/srv/forms'],
  ])('DATA_DIR %s', (_, env, dataDir) => {
    expect(readDataDir(env)).toBe(dataDir);
  });

  test('is read even while another variable is malformed', () => {
    expect(readDataDir({ DATA_DIR: '/srv/forms', PORT: 'eighty' })).toBe('/srv/forms');
  });
});

describe('the .env file', () => {
  const saved = { ENV_FILE: process.env.ENV_FILE, TOOLING_TEST_VALUE: process.env.TOOLING_TEST_VALUE };
  const folder = mkdtempSync(join(tmpdir(), 'env-file-'));
  const file = join(folder, 'site.env');
  writeFileSync(file, 'TOOLING_TEST_VALUE=from-the-file\n');

  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  test('ENV_FILE names the file to load', () => {
    process.env.ENV_FILE = file;
    delete process.env.TOOLING_TEST_VALUE;
    loadEnvFile();
    expect(process.env.TOOLING_TEST_VALUE).toBe('from-the-file');
  });

  test('a variable already set wins over the file', () => {
    process.env.ENV_FILE = file;
    process.env.TOOLING_TEST_VALUE = 'from-the-environment';
    loadEnvFile();
    expect(process.env.TOOLING_TEST_VALUE).toBe('from-the-environment');
  });

  test.each([
    ['ENV_FILE empty loads nothing', ''],
    ['a file that does not exist loads nothing', join(folder, 'missing.env')],
  ])('%s', (_, envFile) => {
    process.env.ENV_FILE = envFile;
    delete process.env.TOOLING_TEST_VALUE;
    expect(() => loadEnvFile()).not.toThrow();
    expect(process.env.TOOLING_TEST_VALUE).toBeUndefined();
  });

  afterAll(() => rmSync(folder, { recursive: true, force: true }));
});
