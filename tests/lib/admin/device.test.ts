import { describe, expect, test } from 'vitest';
import { createDevices, deviceCookieName } from '../../../packages/site-forms/src/lib/admin/device.ts';
import { parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';

const HASH = '$scrypt$ln=17,r=8,p=1$c29tZXNhbHRzb21lc2FsdA$ZmFrZWtleWZha2VrZXlmYWtla2V5ZmFrZWtleWZha2U';
const OTHER = '$scrypt$ln=17,r=8,p=1$b3RoZXJzYWx0b3RoZXJzYQ$ZmFrZWtleWZha2VrZXlmYWtla2V5ZmFrZWtleWZha2U';

function hash(text: string) {
  const parsed = parsePasswordHash(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.hash;
}
const carrying = (cookie: string) => new Request('https://www.example.com/admin/actions/sign-in', { headers: { cookie: `other=1; ${cookie.split(';')[0]}` } });

describe('the cookie of a browser that signed in before', () => {
  test('is __Host-, HttpOnly, SameSite=Strict and Secure on https, kept a year, and known again', () => {
    const devices = createDevices(hash(HASH));
    const cookie = devices.cookie(true);
    expect(cookie).toMatch(/^__Host-admin_device=[\w-]{22}\.[\w-]{43}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Strict; Secure$/);
    expect(devices.known(carrying(cookie), true)).toBe(true);
    expect(deviceCookieName(false)).toBe('admin_device');
  });

  test.each([
    ['no cookie', () => ''],
    ['a forged signature', (c: string) => c.replace(/\.[\w-]{5}/, '.AAAAA')],
    ['another id with the same signature', (c: string) => c.replace(/=[\w-]{3}/, '=abc')],
    ['on plain http, the https cookie', (c: string) => c.replace('__Host-admin_device', 'admin_device_https')],
  ])('is not known with %s', (_, change) => {
    const devices = createDevices(hash(HASH));
    expect(devices.known(carrying(change(devices.cookie(true))), true)).toBe(false);
  });

  test('a new password forgets every device', () => {
    const cookie = createDevices(hash(HASH)).cookie(true);
    expect(createDevices(hash(OTHER)).known(carrying(cookie), true)).toBe(false);
  });
});

describe('the device cookie on plain http (development)', () => {
  const on = (cookie: string) => new Request('http://localhost:4321/admin/actions/sign-in', { headers: { cookie } });

  test('has no prefix and no Secure, and is known only where it was set', () => {
    const devices = createDevices(hash(HASH));
    const cookie = devices.cookie(false);
    expect(cookie).toMatch(/^admin_device=[\w-]{22}\.[\w-]{43}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Strict$/);
    const pair = cookie.split(';')[0]!;
    expect(devices.known(on(`theme=dark; ${pair}`), false)).toBe(true);
    // The plain cookie is not the __Host- one an https site reads, nor the other way round.
    expect(devices.known(on(pair), true)).toBe(false);
    expect(devices.known(on(devices.cookie(true).split(';')[0]!), false)).toBe(false);
  });

  test.each([
    ['junk before the value', (v: string) => `x${v}`],
    ['junk after the value', (v: string) => `${v}x`],
    ['an id one character short', (v: string) => v.slice(1)],
    ['no dot between id and signature', (v: string) => v.replace('.', '')],
    ['an empty value', () => ''],
  ])('is not known with %s', (_, change) => {
    const devices = createDevices(hash(HASH));
    const value = devices.cookie(false).split(';')[0]!.slice('admin_device='.length);
    expect(devices.known(on(`admin_device=${change(value)}`), false)).toBe(false);
  });

  test('a cookie without a name is skipped, and the device cookie after it is read', () => {
    const devices = createDevices(hash(HASH));
    const pair = devices.cookie(false).split(';')[0]!;
    expect(devices.known(on(`=admin_device; ${pair}`), false)).toBe(true);
    expect(devices.known(on(`=${pair}`), false)).toBe(false);
    // Blanks around a pair, as some clients write the header, are not part of it.
    expect(devices.known(on(`theme=dark ;  ${pair} ; x=y`), false)).toBe(true);
  });
});
