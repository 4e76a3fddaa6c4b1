import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { site as settings } from '../../src/lib/site/site.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// The automatic reply through the built server and a real SMTP server, with the spam filter on:
// a person's message (the page's script ran, as far as the filter can tell) is answered once a day,
// a held one never.
let smtp: FakeSmtpServer;
let site: Site;

beforeAll(async () => {
  smtp = await startSmtpServer();
  site = await startSite({
    SMTP_URL: smtp.url(),
    CONTACT_TO: 'owner@example.com',
    CONTACT_FROM: 'forms@example.com',
    AUTO_REPLY: 'true',
    AUTO_REPLY_SUBJECT: 'Thanks for writing to {site}',
    AUTO_REPLY_INCLUDE_MESSAGE: 'true',
    SPAM_FILTER: 'on',
    // A browser without the page's script is one weak sign: accepted (decision 0125).
    SPAM_WEIGHTS: 'proof-missing=0',
  });
});
afterAll(async () => {
  await site?.stop();
  await smtp?.close();
});

/** A post as a browser's script sends it: the fetch metadata every current browser adds. */
const BROWSER = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));

describe('the automatic reply to the sender', () => {
  test('an accepted message is answered once, marked as automatic, with a copy of the message; a second one that day is not', async () => {
    const fields = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Do you ship to Iceland?', honeypot: '' };
    expect((await postForm(`${site.url}/api/contact`, fields, BROWSER)).status).toBe(200);
    await eventually('the reply to reach the sender', () => mailsTo('ada@example.org').length === 1);
    const reply = parseMail(mailsTo('ada@example.org')[0]!.raw);
    expect(reply.header('auto-submitted')).toEqual(['auto-replied']);
    expect(reply.header('subject')).toEqual([`Thanks for writing to ${settings.name}`]);
    expect(reply.header('reply-to')).toEqual([`${settings.senderName} <owner@example.com>`]);
    expect(reply.text).toContain(`Hello Ada Lovelace,\n\nthank you for writing to ${settings.name}.`);
    expect(reply.text).toContain('Your message:\n\nDo you ship to Iceland?');

    expect((await postForm(`${site.url}/api/contact`, { ...fields, message: 'And to Greenland?' }, BROWSER)).status).toBe(200);
    await eventually('both messages to reach the owner', () => mailsTo('owner@example.com').length === 2);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(mailsTo('ada@example.org')).toHaveLength(1);
  });

  test('a held message is never answered: the form cannot be used to mail a stranger', async () => {
    // Link stuffing, a strong sign: held.
    const fields = { name: 'Spammer', email: 'stranger@example.net', message: 'Prizes at https://a.test https://b.test https://c.test', honeypot: '' };
    expect((await postForm(`${site.url}/api/contact`, fields, BROWSER)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(mailsTo('stranger@example.net')).toHaveLength(0);
  });
});
