import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { siteOptIn } from '../../support/opt-in.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { handleNewsletter, handleNewsletterConfirmation, handleUnsubscribe } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import type { NewsletterProvider, SubscribeOutcome } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

// Double opt-in through the handlers, in this process: the signup asks, the link's button
// confirms, the one-click link unsubscribes; a real store and a real SMTP server.
let smtp: FakeSmtpServer;
let refuse = false;
beforeAll(async () => {
  smtp = await startSmtpServer({ answer: () => (refuse ? { code: 451, message: 'try later' } : 'accept') });
});
afterAll(() => smtp.close());

function provider(name: NewsletterProvider['name'], outcome: SubscribeOutcome = { ok: true }) {
  const subscribe = vi.fn(async (_email: string) => outcome);
  return { provider: { name, subscribe } as NewsletterProvider, subscribe };
}

function post(path: string, fields: Record<string, string>) {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return new Request(`https://www.example.com${path}`, { method: 'POST', body });
}

/** The tokens of the last confirmation mail the SMTP server received. */
function tokensOfLastMail(): { confirm: string; unsubscribe: string } {
  const mail = parseMail(smtp.received.at(-1)!.raw);
  const confirm = /\/newsletter\/confirm\/\?token=([\w-]+)/.exec(mail.text)![1]!;
  const unsubscribe = /\/api\/newsletter\/unsubscribe\?token=([\w-]+)/.exec(mail.header('list-unsubscribe')[0]!)![1]!;
  return { confirm, unsubscribe };
}

describe.each(testEngines())('double opt-in through the handlers on $name', (engine) => {
  const open = async () => {
    return siteOptIn((await engine.open()).store.sql, smtp.url());
  };

  test.skipIf(!engine.available)('a signup asks and adds nobody; the button confirms once and records the news; the link unsubscribes', async () => {
    const { consents, optIn } = await open();
    const { provider: local, subscribe } = provider('local');
    const events = { record: vi.fn(async () => {}) };
    const unsubscribeLocal = vi.fn(async () => true);

    await expect(
      handleNewsletter(post('/api/newsletter', { email: 'Ada@Example.org' }), { provider: local, logger: silentLogger, optIn, events: events as never }),
    ).resolves.toEqual({
      kind: 'accepted',
      thanks: '/thank-you/confirm-subscription/',
      awaitingConfirmation: true,
    });
    expect(subscribe).not.toHaveBeenCalled();
    expect(events.record).not.toHaveBeenCalled();
    const tokens = tokensOfLastMail();

    const confirm = () =>
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: tokens.confirm }), {
        provider: local,
        logger: silentLogger,
        optIn,
        events: events as never,
      });
    await expect(confirm()).resolves.toEqual({ kind: 'accepted' });
    expect(subscribe).toHaveBeenCalledTimes(1);
    expect(subscribe).toHaveBeenCalledWith('ada@example.org');
    expect(events.record).toHaveBeenCalledWith('newsletter.confirmed', { email: 'ada@example.org', provider: 'local' });
    await expect(confirm()).resolves.toEqual({
      kind: 'failure',
      status: 400,
      error: 'This confirmation link has expired or was already used. Please subscribe again.',
    });
    expect(subscribe).toHaveBeenCalledTimes(1);
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'confirmed' });

    // What a mail program posts by RFC 8058, to the address in List-Unsubscribe.
    const oneClick = () =>
      new Request(`https://www.example.com/api/newsletter/unsubscribe?token=${tokens.unsubscribe}`, {
        method: 'POST',
        body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }),
      });
    await expect(handleUnsubscribe(oneClick(), { provider: local, logger: silentLogger, optIn, unsubscribeLocal })).resolves.toEqual({
      kind: 'accepted',
      thanks: '/thank-you/unsubscribed/',
    });
    expect(unsubscribeLocal).toHaveBeenCalledWith('ada@example.org');
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'unsubscribed' });
    // The token worked once.
    await expect(handleUnsubscribe(oneClick(), { provider: local, logger: silentLogger, optIn, unsubscribeLocal })).resolves.toMatchObject({ status: 400 });
    expect(unsubscribeLocal).toHaveBeenCalledTimes(1);
  });

  test.skipIf(!engine.available)('a confirmation whose news cannot be recorded is still accepted, and the warning names the event (issue 30)', async () => {
    const { optIn } = await open();
    await handleNewsletter(post('/api/newsletter', { email: 'news@example.org' }), { provider: provider('local').provider, logger: silentLogger, optIn });
    const { confirm } = tokensOfLastMail();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const events = { record: vi.fn(async () => Promise.reject(new Error('database is locked'))) };
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: confirm }), {
        provider: provider('local').provider,
        logger,
        optIn,
        events: events as never,
      }),
    ).resolves.toEqual({ kind: 'accepted' });
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({ event: 'webhook.event_not_recorded', type: 'newsletter.confirmed', error: 'Error: database is locked' }),
    ]);
  });

  test.skipIf(!engine.available)('a confirmation mail the server refuses is a 503 that asks the person to try later', async () => {
    const { optIn } = await open();
    refuse = true;
    try {
      await expect(
        handleNewsletter(post('/api/newsletter', { email: 'grace@example.org' }), { provider: provider('local').provider, logger: silentLogger, optIn }),
      ).resolves.toEqual({
        kind: 'failure',
        status: 503,
        error: 'We could not send the confirmation email right now. Please try again in a few minutes.',
        headers: { 'retry-after': '120' },
        values: { email: 'grace@example.org' },
      });
    } finally {
      refuse = false;
    }
  });

  test.skipIf(!engine.available)('a provider that is busy at the confirmation gets the signup queued; one that refuses answers its failure', async () => {
    const { optIn } = await open();
    await handleNewsletter(post('/api/newsletter', { email: 'busy@example.org' }), { provider: provider('resend').provider, logger: silentLogger, optIn });
    const busy = tokensOfLastMail();
    const signups = { enqueue: vi.fn(async () => 7), poke: vi.fn() };
    const { provider: resend } = provider('resend', { ok: false, reason: 'unavailable', detail: 'HTTP 503' });
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: busy.confirm }), { provider: resend, logger: silentLogger, optIn, signups }),
    ).resolves.toEqual({
      kind: 'accepted',
    });
    expect(signups.enqueue).toHaveBeenCalledWith('busy@example.org', 'resend');
    expect(signups.poke).toHaveBeenCalledTimes(1);

    // The owner's key refused after the person confirmed: queued too (the link is spent), and the owner told what to check.
    await handleNewsletter(post('/api/newsletter', { email: 'keyless@example.org' }), { provider: provider('resend').provider, logger: silentLogger, optIn });
    const keyless = tokensOfLastMail();
    const ownerLines: string[] = [];
    const { provider: refusing } = provider('resend', { ok: false, reason: 'misconfigured', detail: 'HTTP 403 invalid_api_key', check: 'RESEND_API_KEY' });
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: keyless.confirm }), {
        provider: refusing,
        logger: createLogger({ write: (line) => ownerLines.push(line) }),
        optIn,
        signups,
      }),
    ).resolves.toEqual({ kind: 'accepted' });
    expect(signups.enqueue).toHaveBeenLastCalledWith('keyless@example.org', 'resend');
    expect(signups.poke).toHaveBeenCalledTimes(2);
    expect(ownerLines.map((line) => JSON.parse(line)).map(({ time: _, ...rest }) => rest)).toEqual([
      {
        level: 'error',
        event: 'newsletter.confirmed_queued',
        provider: 'resend',
        reason: 'misconfigured',
        detail: 'HTTP 403 invalid_api_key',
        check: 'RESEND_API_KEY',
      },
      { level: 'info', event: 'newsletter.confirmed', provider: 'resend' },
    ]);

    await handleNewsletter(post('/api/newsletter', { email: 'refused@example.org' }), { provider: provider('resend').provider, logger: silentLogger, optIn });
    const refused = tokensOfLastMail();
    const lines: string[] = [];
    const { provider: strict } = provider('resend', { ok: false, reason: 'invalid-address', detail: 'HTTP 422' });
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: refused.confirm }), {
        provider: strict,
        logger: createLogger({ write: (line) => lines.push(line) }),
        optIn,
      }),
    ).resolves.toMatchObject({ kind: 'failure', status: 400, error: 'Please enter a valid email address' });
    expect(lines.map((line) => JSON.parse(line).event)).toEqual(['newsletter.confirmed_not_added']);
  });

  test.skipIf(!engine.available)("unsubscribing from a remote provider's list tells the owner to remove it there too; a bad token is a 400", async () => {
    const { optIn } = await open();
    await handleNewsletter(post('/api/newsletter', { email: 'kit@example.org' }), { provider: provider('kit').provider, logger: silentLogger, optIn });
    const { unsubscribe } = tokensOfLastMail();
    const lines: string[] = [];
    const unsubscribeLocal = vi.fn(async () => true);
    const logger = createLogger({ write: (line) => lines.push(line) });
    // The unsubscribe page's button posts the token in the form.
    await expect(
      handleUnsubscribe(post('/api/newsletter/unsubscribe', { token: unsubscribe }), { provider: provider('kit').provider, logger, optIn, unsubscribeLocal }),
    ).resolves.toEqual({
      kind: 'accepted',
      thanks: '/thank-you/unsubscribed/',
    });
    expect(unsubscribeLocal).not.toHaveBeenCalled();
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', event: 'newsletter.unsubscribed', provider: 'kit', note: 'remove the address from the kit list too' }),
    ]);
    await expect(
      handleUnsubscribe(post('/api/newsletter/unsubscribe', { token: 'forged' }), { provider: provider('kit').provider, logger, optIn }),
    ).resolves.toEqual({
      kind: 'failure',
      status: 400,
      error: 'This unsubscribe link is not valid any more: you may already be unsubscribed.',
    });
  });
});
