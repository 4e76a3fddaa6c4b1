import { describe, expect, test } from 'vitest';
import {
  CONFIRMATION_TTL_MS,
  consentVersion,
  createConsents,
  RESEND_AFTER_MS,
  truncatedClient,
} from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { testEngines } from '../../support/stores.ts';

const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const EVIDENCE = { page: '/', text: 'I would like the newsletter.', version: consentVersion('I would like the newsletter.'), client: '203.0.113.0/24' };

describe('what a consent record keeps of a client and a text', () => {
  test.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['2001:db8:abcd:12::1', '2001:db8:abcd::/48'],
    ['', 'unknown'],
  ])('%s is kept as %s', (ip, kept) => {
    expect(truncatedClient(ip)).toBe(kept);
  });

  test('a text has a version of its own, and a changed text a new one', () => {
    expect(consentVersion('I would like the newsletter.')).toMatch(/^[0-9a-f]{12}$/);
    expect(consentVersion('I would like the newsletter!')).not.toBe(consentVersion('I would like the newsletter.'));
  });
});

describe.each(testEngines())('consent records on $name', (engine) => {
  const open = async () => createConsents((await engine.open()).store.sql);

  test.skipIf(!engine.available)('a signup is pending until its link confirms it, once, within 48 hours', async () => {
    const consents = await open();
    const tokens = await consents.request('Ada@Example.org', EVIDENCE, T0);
    expect(tokens).toEqual({ confirm: expect.stringMatching(/^[\w-]{32}$/), unsubscribe: expect.stringMatching(/^[\w-]{32}$/) });
    await expect(consents.find('ada@example.org')).resolves.toEqual({
      email: 'ada@example.org',
      status: 'pending',
      signedUpAt: T0.toISOString(),
      confirmedAt: null,
      ...EVIDENCE,
    });
    await expect(consents.confirm('not-the-token', at(1000))).resolves.toBeUndefined();
    await expect(consents.confirm(tokens!.confirm, at(1000))).resolves.toBe('ada@example.org');
    await expect(consents.confirm(tokens!.confirm, at(2000))).resolves.toBeUndefined();
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'confirmed', confirmedAt: at(1000).toISOString() });
    // Confirmed: a new signup sends nothing.
    await expect(consents.request('ada@example.org', EVIDENCE, at(RESEND_AFTER_MS * 2))).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)(
    'a link older than 48 hours confirms nothing; a second signup within 10 minutes sends no second mail, later it does',
    async () => {
      const consents = await open();
      const first = await consents.request('bob@example.org', EVIDENCE, T0);
      await expect(consents.request('bob@example.org', EVIDENCE, at(RESEND_AFTER_MS - 1))).resolves.toBeUndefined();
      await expect(consents.confirm(first!.confirm, at(CONFIRMATION_TTL_MS))).resolves.toBeUndefined();
      const second = await consents.request('bob@example.org', EVIDENCE, at(CONFIRMATION_TTL_MS));
      expect(second?.confirm).not.toBe(first!.confirm);
      // The new mail's link works; the old one never will.
      await expect(consents.confirm(first!.confirm, at(CONFIRMATION_TTL_MS + 1))).resolves.toBeUndefined();
      await expect(consents.confirm(second!.confirm, at(CONFIRMATION_TTL_MS + 1))).resolves.toBe('bob@example.org');
    },
  );

  test.skipIf(!engine.available)('unsubscribing by its token ends the record once; an erasure deletes it', async () => {
    const consents = await open();
    const tokens = await consents.request('cy@example.org', EVIDENCE, T0);
    await expect(consents.unsubscribe(tokens!.unsubscribe, at(1000))).resolves.toBe('cy@example.org');
    await expect(consents.unsubscribe(tokens!.unsubscribe, at(2000))).resolves.toBeUndefined();
    await expect(consents.find('cy@example.org')).resolves.toMatchObject({ status: 'unsubscribed' });
    await expect(consents.erase('cy@example.org')).resolves.toBe(true);
    await expect(consents.find('cy@example.org')).resolves.toBeUndefined();
  });
});
