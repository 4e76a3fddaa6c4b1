import type { Browser } from 'playwright-core';
import { type FakeHttpServer, type FakeReply, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { type Site, startSite } from '../../support/site.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { launchChromium } from './browser.ts';

/** What a browser test runs against: the built server, its two fakes, and Chromium. */
export type Stack = {
  site: Site;
  /** Mailchimp's list-members API, faked: the only newsletter provider the tests use. */
  mailchimp: FakeHttpServer;
  /** The site owner's mail server: a real SMTP server that keeps what it receives. */
  smtp: FakeSmtpServer;
  browser: Browser;
  stop(): Promise<void>;
};

/** Where contact messages go, and whom they come from. */
export const MAIL = { CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' } as const;

/** Mailchimp's answer to a new member. */
export const SUBSCRIBED = replyJson(200, { id: 'abc', status: 'subscribed' });

/**
 * Starts the real server with Mailchimp and SMTP faked at the network edge, and Chromium.
 * Hint: startSite turns the rate limits off (RATE_LIMIT_MAX=0), since one browser posts
 * far more often than a visitor would.
 */
export async function startStack(): Promise<Stack> {
  const mailchimp = await startFakeHttpServer(SUBSCRIBED);
  const smtp = await startSmtpServer();
  const site = await startSite({
    MAILCHIMP_API_KEY: 'k-us1',
    MAILCHIMP_LIST_ID: 'l',
    MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    SMTP_URL: smtp.url(),
    ...MAIL,
  });
  const browser = await launchChromium();
  return {
    site,
    mailchimp,
    smtp,
    browser,
    async stop() {
      await browser.close();
      await site.stop();
      await smtp.close();
      await mailchimp.close();
    },
  };
}

/** A provider that keeps every request waiting until the test releases it. */
export type HeldReply = {
  reply: FakeReply;
  /** Answers every held request, and every later one, with `then`. */
  release(): void;
};

/** Holds the provider's answers, so a test can look at the page while a request is pending. */
export function holdReplies(then: FakeReply = SUBSCRIBED): HeldReply {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    reply: async (request, res, req) => {
      await released;
      await then(request, res, req);
    },
    release,
  };
}
