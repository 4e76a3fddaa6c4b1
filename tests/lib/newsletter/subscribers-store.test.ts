import { describe, expect, test } from 'vitest';
import { consentVersion, createConsents } from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createLocalProvider } from '../../../packages/site-forms/src/lib/newsletter/local.ts';
import { handleNewsletter } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import { site } from '../../../packages/site-forms/src/lib/site/site.ts';
import { parseSubscribersArgs, runSubscribersCommand, type SubscribersCommand } from '../../../packages/site-forms/src/lib/newsletter/subscribers.ts';
import { testEngines } from '../../support/stores.ts';

// `npm run subscribers` in this process, as src/cli/subscribers.ts wires it: the store's
// subscriber list and signup queue on both engines, stdout and stderr captured.
const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const TEXT = 'I would like the newsletter.';
const EVIDENCE = { page: '/blog/', text: TEXT, version: consentVersion(TEXT), client: '203.0.113.0/24' };

describe.each(testEngines())('npm run subscribers on a store on $name', (engine) => {
  const open = async () => {
    const { store } = await engine.open();
    const signups = createSignups(store.sql, { retryBaseMs: 1_000, random: () => 0 });
    const run = async (command: SubscribersCommand, withSignups = true) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runSubscribersCommand(command, {
        subscribers: store.subscribers,
        signups: withSignups ? signups : undefined,
        out: (text) => out.push(text),
        err: (text) => err.push(text),
      });
      return { code, out: out.join(''), err: err.join('') };
    };
    return { store, signups, run };
  };

  test.skipIf(!engine.available)('waiting with an empty queue, or no queue at all, says so on stderr and succeeds', async () => {
    const { run } = await open();
    const nothing = { code: 0, out: '', err: 'No signup is waiting for the provider.\n' };
    await expect(run({ name: 'waiting' })).resolves.toEqual(nothing);
    await expect(run({ name: 'waiting' }, false)).resolves.toEqual(nothing);
  });

  test.skipIf(!engine.available)('waiting lists the waiting and given-up signups, newest first, long cells cut', async () => {
    const { signups, run } = await open();
    await signups.enqueue('ada@example.org', 'mailchimp', T0);
    const bad = await signups.enqueue('a-very-long-address-for-the-table@example.org', 'kit', at(90_000));
    const taken = await signups.claim(at(100_000), at(160_000));
    expect(taken?.signup.id).toBe(1);
    await expect(signups.finish(1, taken!.lease, { ok: false, reason: 'unavailable', detail: 'HTTP 503' }, at(100_000))).resolves.toBe('waiting');
    const second = await signups.claim(at(100_000), at(160_000));
    expect(second?.signup.id).toBe(bad);
    await expect(
      signups.finish(bad, second!.lease, { ok: false, reason: 'invalid-address', detail: 'the address looks fake or invalid to us' }, at(100_000)),
    ).resolves.toBe('failed');
    await signups.enqueue('grace@example.org', 'resend', at(200_000));

    await expect(run({ name: 'waiting' })).resolves.toEqual({
      code: 0,
      out: [
        'ID  SINCE (UTC)       EMAIL                             PROVIDER   STATUS   TRIES  LAST ERROR',
        '3   2026-11-24 12:03  grace@example.org                 resend     waiting  0',
        '2   2026-11-24 12:01  a-very-long-address-for-the-tab…  kit        failed   1      invalid-address: the address looks fake…',
        '1   2026-11-24 12:00  ada@example.org                   mailchimp  waiting  1      unavailable: HTTP 503',
        '',
      ].join('\n'),
      err: '',
    });
  });

  test.skipIf(!engine.available)('retry puts a given-up signup back in the queue; one not given up, or not there, is refused', async () => {
    const { signups, run } = await open();
    const waiting = await signups.enqueue('ada@example.org', 'mailchimp', T0);
    const failed = await signups.enqueue('bad@example.org', 'kit', T0);
    await signups.claim(at(1_000), at(61_000));
    const taken = await signups.claim(at(1_000), at(61_000));
    expect(taken?.signup.id).toBe(failed);
    await signups.finish(failed, taken!.lease, { ok: false, reason: 'forgotten', detail: 'HTTP 400' }, at(1_000));

    await expect(run({ name: 'retry', id: waiting })).resolves.toEqual({
      code: 1,
      out: '',
      err: `Signup #${waiting} is not there, or not given up; nothing to retry.\n`,
    });
    await expect(run({ name: 'retry', id: 99 })).resolves.toEqual({ code: 1, out: '', err: 'Signup #99 is not there, or not given up; nothing to retry.\n' });
    await expect(run({ name: 'retry', id: failed }, false)).resolves.toEqual({
      code: 1,
      out: '',
      err: `Signup #${failed} is not there, or not given up; nothing to retry.\n`,
    });
    await expect(signups.pending(10)).resolves.toEqual([
      expect.objectContaining({ id: failed, status: 'failed', attempts: 1 }),
      expect.objectContaining({ id: waiting, status: 'waiting' }),
    ]);

    await expect(run({ name: 'retry', id: failed })).resolves.toEqual({
      code: 0,
      out: `Signup #${failed} is tried again by the running server within a minute.\n`,
      err: '',
    });
    await expect(signups.pending(10)).resolves.toEqual([
      expect.objectContaining({ id: failed, status: 'waiting', attempts: 0 }),
      expect.objectContaining({ id: waiting, status: 'waiting' }),
    ]);
  });

  test.skipIf(!engine.available)(
    'a signup to the local list without double opt-in keeps its consent: time, text agreed to, page, no confirmation; in CSV and JSON',
    async () => {
      const { store, run } = await open();
      const consents = createConsents(store.sql);
      const signUp = (email: string, referer: string) => {
        const body = new FormData();
        body.append('email', email);
        const request = new Request('https://www.example.com/api/newsletter', { method: 'POST', body, headers: { referer } });
        return handleNewsletter(
          request,
          { provider: createLocalProvider(store.subscribers), logger: silentLogger, consentOnJoin: consents },
          { ip: '198.51.100.23' },
        );
      };
      await expect(signUp('ada@example.org', 'https://www.example.com/blog/first-post/')).resolves.toEqual({ kind: 'accepted' });
      // The same address again: the first consent stands.
      await expect(signUp('ADA@example.org', 'https://www.example.com/about/')).resolves.toEqual({ kind: 'accepted' });

      const csv = (await run({ name: 'export', format: 'csv', bom: false })).out.split('\r\n');
      expect(csv[0]).toBe('Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client');
      expect(csv[1]).toMatch(
        new RegExp(
          `^ada@example\\.org,\\S+ \\S+,subscribed,\\S+ \\S+,,${site.newsletterConsent.replace(/[.]/g, '\\.')},${consentVersion(site.newsletterConsent)},/blog/first-post/,198\\.51\\.100\\.0/24$`,
        ),
      );
      const [json] = JSON.parse((await run({ name: 'export', format: 'json', bom: false })).out);
      expect(json).toEqual({
        email: 'ada@example.org',
        created: expect.any(String),
        consent: {
          status: 'subscribed',
          signedUpAt: expect.any(String),
          confirmedAt: null,
          text: site.newsletterConsent,
          version: consentVersion(site.newsletterConsent),
          page: '/blog/first-post/',
          client: '198.51.100.0/24',
        },
      });
      expect(Date.parse(json.consent.signedUpAt)).toBeGreaterThan(0);
    },
  );

  test.skipIf(!engine.available)('export shows the record of consent in columns of its own, empty for a subscriber without one', async () => {
    const { store, run } = await open();
    const consents = createConsents(store.sql);
    await store.subscribers.add('Old@Example.org', T0);
    await store.subscribers.add('ada@example.org', at(60_000));
    await consents.record('ada@example.org', EVIDENCE, 'confirmed', at(30_000));
    await store.subscribers.add('grace@example.org', at(120_000));
    await consents.record('grace@example.org', { ...EVIDENCE, page: '/' }, 'pending', at(90_000));

    const version = consentVersion(TEXT);
    await expect(run({ name: 'export', format: 'csv', bom: false })).resolves.toEqual({
      code: 0,
      out: [
        'Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client',
        'old@example.org,2026-11-24 12:00:00,,,,,,,',
        `ada@example.org,2026-11-24 12:01:00,confirmed,2026-11-24 12:00:30,2026-11-24 12:00:30,${TEXT},${version},/blog/,203.0.113.0/24`,
        `grace@example.org,2026-11-24 12:02:00,pending,2026-11-24 12:01:30,,${TEXT},${version},/,203.0.113.0/24`,
        '',
      ].join('\r\n'),
      err: 'Exported 3 subscribers.\n',
    });

    const json = await run({ name: 'export', format: 'json', bom: false });
    expect(JSON.parse(json.out)).toEqual([
      { email: 'old@example.org', created: '2026-11-24T12:00:00.000Z' },
      {
        email: 'ada@example.org',
        created: '2026-11-24T12:01:00.000Z',
        consent: {
          status: 'confirmed',
          signedUpAt: '2026-11-24T12:00:30.000Z',
          confirmedAt: '2026-11-24T12:00:30.000Z',
          text: TEXT,
          version,
          page: '/blog/',
          client: '203.0.113.0/24',
        },
      },
      {
        email: 'grace@example.org',
        created: '2026-11-24T12:02:00.000Z',
        consent: { status: 'pending', signedUpAt: '2026-11-24T12:01:30.000Z', confirmedAt: null, text: TEXT, version, page: '/', client: '203.0.113.0/24' },
      },
    ]);
    expect(json.out.endsWith('}\n]\n')).toBe(true);
  });
});

describe('npm run subscribers arguments for the signup queue', () => {
  test.each([
    [['waiting'], { ok: true, command: { name: 'waiting' } }],
    [['waiting', 'now'], { ok: false, problem: 'Unexpected argument: now' }],
    [['retry', '12'], { ok: true, command: { name: 'retry', id: 12 } }],
    [['retry', '1'], { ok: true, command: { name: 'retry', id: 1 } }],
    [['retry', '1234567890123456'], { ok: true, command: { name: 'retry', id: 1234567890123456 } }],
    [['retry', '12', 'again'], { ok: false, problem: 'Unexpected argument: again' }],
    [['retry'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', '0'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', '012'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', 'x12'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', '12x'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', '1.5'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['retry', '12345678901234567'], { ok: false, problem: 'retry needs the id of a signup, a whole number such as 12.' }],
    [['export', '--format=json', '--bom'], { ok: true, command: { name: 'export', format: 'json', bom: true } }],
    [['export', '--bom', '--format', 'csv'], { ok: false, problem: 'export needs --format csv or --format json.' }],
  ])('%j', (args, expected) => {
    expect(parseSubscribersArgs(args)).toEqual(expected);
  });
});
