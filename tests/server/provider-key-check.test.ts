/**
 * A wrong newsletter key is found when the server starts, not by the first visitor: the built
 * server, in its own process, against providers faked at the network edge.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { type Site, startSite } from '../support/site.ts';

let provider: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
});
afterAll(() => provider.close());

const KEY = 'made-up-key-0123456789-us21';

describe('the provider key check at start', () => {
  test.each<[string, () => Record<string, string>, object, RegExp]>([
    [
      'Mailchimp refusing a made-up key',
      () => ({ MAILCHIMP_API_KEY: KEY, MAILCHIMP_LIST_ID: 'l1', MAILCHIMP_API_BASE_URL: `${provider.url}/3.0` }),
      { status: 401, body: { title: 'API Key Invalid' } },
      /^MAILCHIMP_API_KEY: the newsletter provider \(mailchimp\) refused it at start \(HTTP 401: the key was refused\)/,
    ],
    [
      'Kit v4 without the form',
      () => ({ KIT_API_KEY: KEY, KIT_FORM_ID: '1234567', KIT_API_VERSION: 'v4', KIT_API_BASE_URL: `${provider.url}/v4` }),
      { status: 200, body: { forms: [{ id: 7 }] } },
      /^KIT_FORM_ID: the newsletter provider \(kit\) refused it at start \(the key works, but the form is not among its forms\)/,
    ],
    [
      'Resend without the segment',
      () => ({ RESEND_API_KEY: KEY, RESEND_SEGMENT_ID: 'seg-1', RESEND_BASE_URL: provider.url }),
      { status: 404, body: { name: 'not_found', message: 'Segment not found' } },
      /^RESEND_SEGMENT_ID: the newsletter provider \(resend\) refused it at start \(HTTP 404: not found\)/,
    ],
  ])('%s: the start stops with one line naming the variable, and no key in it', async (_, env, answer, line) => {
    const { status, body } = answer as { status: number; body: object };
    provider.reply(replyJson(status, body));
    const started = startSite(env());
    const error = await started.then(
      (site) => site.stop().then(() => undefined),
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/server exited with 1 before listening/);
    const printed = error!.message.split('\n');
    expect(printed.filter((l) => line.test(l))).toHaveLength(1);
    expect(error!.message).not.toContain('0123456789');
  });

  describe('a provider that cannot be reached', () => {
    let site: Site;
    beforeAll(async () => {
      site = await startSite({ MAILCHIMP_API_KEY: KEY, MAILCHIMP_LIST_ID: 'l1', MAILCHIMP_API_BASE_URL: 'http://127.0.0.1:9/3.0' });
    });
    afterAll(() => site.stop());

    test('is a warning and the site starts', async () => {
      expect(site.logs).toContainEqual(expect.objectContaining({ level: 'warn', event: 'newsletter.key_unchecked', provider: 'mailchimp' }));
      await expect(fetch(`${site.url}/api/health`).then((r) => r.status)).resolves.toBe(200);
    });
  });

  describe('an account set up as Resend asks today, but with an audience', () => {
    let site: Site;
    beforeAll(async () => {
      provider.reply(replyJson(200, { object: 'audience', id: 'aud-1', name: 'Newsletter' }));
      site = await startSite({ RESEND_API_KEY: KEY, RESEND_AUDIENCE_ID: 'aud-1', RESEND_BASE_URL: provider.url });
    });
    afterAll(() => site.stop());

    test('starts, logs once that audiences are deprecated, and that the key was checked', () => {
      const events = site.logs.filter((l) => typeof l === 'object').map((l) => (l as { event: string }).event);
      expect(events.filter((e) => e === 'newsletter.resend_audiences_deprecated')).toHaveLength(1);
      expect(events).toContain('newsletter.key_checked');
    });
  });
});
