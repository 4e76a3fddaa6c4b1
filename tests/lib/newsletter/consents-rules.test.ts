import { describe, expect, test } from 'vitest';
import {
  CONFIRMATION_TTL_MS,
  consentVersion,
  createConsents,
  RESEND_AFTER_MS,
  truncatedClient,
} from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { testEngines } from '../../support/stores.ts';

// The consent records at their edges: the last moment a link works, the moment a second mail may
// go, a record a provider confirms by itself, a signup after an unsubscribe, and the list's order.
const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const TEXT = 'I would like the newsletter.';
const EVIDENCE = { page: '/', text: TEXT, version: 'e4189839dd6f', client: '203.0.113.0/24' };

describe('what a consent record keeps of a client and a text', () => {
  test.each([
    ['10.1.2.3', '10.1.2.0/24'],
    ['10.20.30.40', '10.20.30.0/24'],
    ['2001:db8:abcd:12:0:0:0:1', '2001:db8:abcd::/48'],
    ['2001:db8:abcd::1', '2001:db8:abcd::/48'],
    ['1.2.3', 'unknown'],
    ['1.2.3.4.5', 'unknown'],
    ['x1.2.3.4', 'unknown'],
    ['1.2.3.4x', 'unknown'],
    ['localhost', 'unknown'],
  ])('%s is kept as %s', (ip, kept) => {
    expect(truncatedClient(ip)).toBe(kept);
  });

  // Groups after "::" belong at the end: they were once taken as if they followed the first ones.
  test.each([
    ['2001:db8::1', '2001:db8::/48'],
    ['::1', '::/48'],
    ['2001:db8:0:1::', '2001:db8::/48'],
    ['2001:0DB8:00ab:cdef::1', '2001:db8:ab::/48'],
    ['fe80::1%eth0', 'fe80::/48'],
    ['::ffff:198.51.100.7', '198.51.100.0/24'],
    ['2001:db8::1::2', 'unknown'],
    ['1:2:3:4:5:6:7', 'unknown'],
    ['1:2:3:4:5:6:7:8:9', 'unknown'],
    ['1:2:3:4::5:6:7:8', 'unknown'],
    ['2001:db8:gggg::1', 'unknown'],
    ['12345::1', 'unknown'],
  ])('%s is kept as %s', (ip, kept) => {
    expect(truncatedClient(ip)).toBe(kept);
  });

  test("a text's version is the first 12 hex digits of its SHA-256", () => {
    expect(consentVersion(TEXT)).toBe('e4189839dd6f');
  });
});

describe.each(testEngines())('consent records at their edges on $name', (engine) => {
  const open = async () => createConsents((await engine.open()).store.sql);

  test.skipIf(!engine.available)('a link works until the last millisecond of its 48 hours', async () => {
    const consents = await open();
    const tokens = await consents.request('ada@example.org', EVIDENCE, T0);
    await expect(consents.confirm(tokens!.confirm, at(CONFIRMATION_TTL_MS - 1))).resolves.toBe('ada@example.org');
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'confirmed', confirmedAt: at(CONFIRMATION_TTL_MS - 1).toISOString() });
  });

  test.skipIf(!engine.available)(
    'a second signup ten minutes on, from another network, sends a new mail; the first evidence is kept and the first link still works',
    async () => {
      const consents = await open();
      const later = { page: '/blog/', text: 'Newsletter, please.', version: consentVersion('Newsletter, please.'), client: '198.51.100.0/24' };
      const links: Record<string, { first: { confirm: string; unsubscribe: string }; second: { confirm: string; unsubscribe: string } }> = {};
      for (const email of ['ada@example.org', 'bea@example.org']) {
        const first = await consents.request(email, EVIDENCE, T0);
        const second = await consents.request(email.toUpperCase(), later, at(RESEND_AFTER_MS));
        expect(second).toEqual({ confirm: expect.stringMatching(/^[\w-]{32}$/), unsubscribe: expect.stringMatching(/^[\w-]{32}$/) });
        expect(second!.confirm).not.toBe(first!.confirm);
        await expect(consents.find(email)).resolves.toEqual({ email, status: 'pending', signedUpAt: T0.toISOString(), confirmedAt: null, ...EVIDENCE });
        links[email] = { first: first!, second: second! };
      }
      // Either mail's link confirms, once; either mail's unsubscribe link ends it.
      await expect(consents.confirm(links['ada@example.org']!.first.confirm, at(RESEND_AFTER_MS + 1))).resolves.toBe('ada@example.org');
      await expect(consents.confirm(links['ada@example.org']!.second.confirm, at(RESEND_AFTER_MS + 2))).resolves.toBeUndefined();
      await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'confirmed', signedUpAt: T0.toISOString(), ...EVIDENCE });
      await expect(consents.confirm(links['bea@example.org']!.second.confirm, at(RESEND_AFTER_MS + 1))).resolves.toBe('bea@example.org');
      await expect(consents.unsubscribe(links['ada@example.org']!.second.unsubscribe, at(RESEND_AFTER_MS + 3))).resolves.toBe('ada@example.org');
      await expect(consents.unsubscribe(links['ada@example.org']!.first.unsubscribe, at(RESEND_AFTER_MS + 4))).resolves.toBeUndefined();
      await expect(consents.unsubscribe(links['bea@example.org']!.first.unsubscribe, at(RESEND_AFTER_MS + 3))).resolves.toBe('bea@example.org');
    },
  );

  test.skipIf(!engine.available)('after an unsubscribe, the confirmation link is dead; a new signup waits ten minutes, then starts afresh', async () => {
    const consents = await open();
    const tokens = await consents.request('cy@example.org', EVIDENCE, T0);
    await expect(consents.unsubscribe(tokens!.unsubscribe, at(RESEND_AFTER_MS * 3))).resolves.toBe('cy@example.org');
    await expect(consents.confirm(tokens!.confirm, at(RESEND_AFTER_MS * 3 + 1))).resolves.toBeUndefined();
    await expect(consents.request('cy@example.org', EVIDENCE, at(RESEND_AFTER_MS * 4 - 1))).resolves.toBeUndefined();
    const again = await consents.request('cy@example.org', EVIDENCE, at(RESEND_AFTER_MS * 4));
    expect(again).toBeDefined();
    await expect(consents.find('cy@example.org')).resolves.toMatchObject({ status: 'pending', signedUpAt: at(RESEND_AFTER_MS * 4).toISOString() });
  });

  test.skipIf(!engine.available)('a signup the provider confirms keeps its evidence and, when confirmed, the time; a later record replaces it', async () => {
    const consents = await open();
    await consents.record('Kit@Example.org', EVIDENCE, 'confirmed', T0);
    await expect(consents.find('kit@example.org')).resolves.toEqual({
      email: 'kit@example.org',
      status: 'confirmed',
      signedUpAt: T0.toISOString(),
      confirmedAt: T0.toISOString(),
      ...EVIDENCE,
    });
    await consents.record('kit@example.org', { ...EVIDENCE, page: '/again/' }, 'pending', at(5_000));
    await expect(consents.find('kit@example.org')).resolves.toEqual({
      email: 'kit@example.org',
      status: 'pending',
      signedUpAt: at(5_000).toISOString(),
      confirmedAt: null,
      ...EVIDENCE,
      page: '/again/',
    });
    // A record without a token cannot be confirmed by one.
    await expect(consents.confirm('', at(6_000))).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('the list is newest first, then by address; an erasure of an address not there answers false', async () => {
    const consents = await open();
    await consents.record('b@example.org', EVIDENCE, 'pending', T0);
    await consents.record('c@example.org', EVIDENCE, 'pending', at(1_000));
    await consents.record('a@example.org', EVIDENCE, 'pending', T0);
    expect((await consents.list()).map((r) => r.email)).toEqual(['c@example.org', 'a@example.org', 'b@example.org']);
    await expect(consents.erase('nobody@example.org')).resolves.toBe(false);
    await expect(consents.erase('C@Example.org')).resolves.toBe(true);
    expect((await consents.list()).map((r) => r.email)).toEqual(['a@example.org', 'b@example.org']);
  });
});
