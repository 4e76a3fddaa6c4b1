import { describe, expect, test } from 'vitest';
import { readConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { admin } from '../../../packages/site-forms/src/lib/config/owner-inbox.ts';

// The reference implementation's vector (phc-winner-argon2): a well-formed argon2id hash.
const HASH = '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';

describe('the admin configuration', () => {
  test('without ADMIN_PASSWORD_HASH the admin is off and messages are kept', () => {
    expect(admin.read({})).toEqual({ config: { admin: undefined, retentionDays: undefined, requirePasskey: false }, problems: [] });
    expect(admin.read({ ADMIN_PASSWORD_HASH: '', RETENTION_DAYS: '' })).toEqual({
      config: { admin: undefined, retentionDays: undefined, requirePasskey: false },
      problems: [],
    });
  });

  test('a hash made by hash-password turns it on', () => {
    const { config, problems } = admin.read({ ADMIN_PASSWORD_HASH: HASH });
    expect(problems).toEqual([]);
    expect(config.admin?.passwordHash).toMatchObject({ algorithm: 'argon2id', memory: 256, passes: 2, parallelism: 1 });
  });

  test.each([
    ['a password pasted instead of its hash', 'my secret password'],
    ['a hash cut short', '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65'],
  ])('%s stops the start naming the variable, never the value', (_, value) => {
    const result = readConfig({ ADMIN_PASSWORD_HASH: value });
    expect(result).toEqual({
      ok: false,
      problems: ['ADMIN_PASSWORD_HASH must be a hash printed by npm run --silent admin -- hash-password (it starts with $argon2id$ or $scrypt$)'],
    });
  });

  test.each([
    ['1', 1],
    ['30', 30],
    ['36500', 36_500],
  ])('RETENTION_DAYS=%s keeps messages %i days', (value, days) => {
    expect(admin.read({ RETENTION_DAYS: value })).toEqual({ config: { admin: undefined, retentionDays: days, requirePasskey: false }, problems: [] });
  });

  test.each(['0', '36501', '-3', '7d', '1.5'])('RETENTION_DAYS=%s is refused', (value) => {
    expect(admin.read({ RETENTION_DAYS: value }).problems).toEqual([expect.stringMatching(/^RETENTION_DAYS /)]);
  });

  test('the start-up log says whether the admin is on, never the hash', () => {
    const on = admin.read({ ADMIN_PASSWORD_HASH: HASH, RETENTION_DAYS: '90' }).config;
    expect(admin.describe(on)).toEqual({
      admin: 'on at /admin (argon2id)',
      retentionDays: 90,
      passkeys: 'off (set PUBLIC_URL to the site’s address on its domain)',
    });
    expect(admin.describe({ admin: undefined, retentionDays: undefined, requirePasskey: false, passkeyDomain: undefined })).toEqual({
      admin: 'off (set ADMIN_PASSWORD_HASH to turn it on)',
      retentionDays: 'off (messages are kept until deleted)',
      passkeys: 'off (set PUBLIC_URL to the site’s address on its domain)',
    });
    const required = admin.read({ ADMIN_PASSWORD_HASH: HASH, ADMIN_REQUIRE_PASSKEY: 'true', PUBLIC_URL: 'https://www.example.com' }).config;
    expect(admin.describe(required)).toEqual({
      admin: 'on at /admin (argon2id)',
      retentionDays: 'off (messages are kept until deleted)',
      passkeys: 'on for www.example.com',
      requirePasskey: 'on (a password only registers a passkey)',
    });
  });

  test.each([
    ['https://www.example.com', 'www.example.com'],
    ['http://localhost:4321', 'localhost'],
  ])('ADMIN_REQUIRE_PASSKEY=true with PUBLIC_URL=%s asks every person for a passkey (relying party %s)', (url, domain) => {
    expect(admin.read({ ADMIN_REQUIRE_PASSKEY: 'true', PUBLIC_URL: url })).toEqual({
      config: { admin: undefined, retentionDays: undefined, requirePasskey: true, passkeyDomain: domain },
      problems: [],
    });
  });

  test.each(['false', ''])('ADMIN_REQUIRE_PASSKEY=%j leaves passwords as they are', (value) => {
    expect(admin.read({ ADMIN_REQUIRE_PASSKEY: value, PUBLIC_URL: 'https://www.example.com' }).config.requirePasskey).toBe(false);
  });

  test.each([
    ['without PUBLIC_URL', {}],
    ['with an IP address', { PUBLIC_URL: 'https://192.0.2.10' }],
    ['with an IPv6 address', { PUBLIC_URL: 'http://[::1]:4321' }],
  ])('ADMIN_REQUIRE_PASSKEY=true %s stops the start naming the variable', (_, env) => {
    const result = readConfig({ ADMIN_REQUIRE_PASSKEY: 'true', ...env });
    expect(result).toEqual({ ok: false, problems: [expect.stringMatching(/^ADMIN_REQUIRE_PASSKEY needs PUBLIC_URL/)] });
  });

  test('ADMIN_REQUIRE_PASSKEY takes true or false only', () => {
    expect(admin.read({ ADMIN_REQUIRE_PASSKEY: 'yes', PUBLIC_URL: 'https://www.example.com' }).problems).toEqual([
      expect.stringMatching(/^ADMIN_REQUIRE_PASSKEY /),
    ]);
  });
});
