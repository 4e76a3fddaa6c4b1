import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseMail } from '../support/mime.ts';
import { NAVIGATION, postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// The automatic reply through the built server and a real SMTP server, with the spam filter on,
// and the relay attack of issue 28 (item 7) run as a script against it: only a sender whose
// browser solved the page's proof is answered, once a day, and never more than
// AUTO_REPLY_MAX_PER_HOUR an hour over the whole site (decision 0149).
let smtp: FakeSmtpServer;
let site: Site;

const SITE_ENV = {
  CONTACT_TO: 'owner@example.com',
  CONTACT_FROM: 'forms@example.com',
  AUTO_REPLY: 'true',
  AUTO_REPLY_SUBJECT: 'Thanks for writing to {site}',
  AUTO_REPLY_TEXT: 'Hello {name},\\n\\nthank you for writing.',
  AUTO_REPLY_INCLUDE_MESSAGE: 'true',
  SPAM_FILTER: 'on',
  // Five accepted posts per client in 10 minutes, and the client's address from X-Forwarded-For (one proxy).
  RATE_LIMIT_MAX: '5',
  TRUST_PROXY: '1',
};

beforeAll(async () => {
  smtp = await startSmtpServer();
  site = await startSite({ ...SITE_ENV, SMTP_URL: smtp.url() });
});
afterAll(async () => {
  await site?.stop();
  await smtp?.close();
});

/** A post as a browser's script sends it: the fetch metadata every current browser adds. */
const BROWSER = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));

/** The proof the page's script sends: a challenge of this site, solved (ALTCHA's base64 JSON). */
async function solvedProof(url: string): Promise<string> {
  const { challenge } = (await (await fetch(`${url}/api/challenge`)).json()) as { challenge: Challenge };
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

/** How the automatic reply's deliveries ended, by the status each recorded, read from the site's own database. */
function replyDeliveries(of: Site): Record<string, number> {
  const db = new DatabaseSync(join(of.dataDir, 'forms.db'), { readOnly: true });
  try {
    const rows = db
      .prepare(`SELECT status, last_status AS code, count(*) AS n FROM webhook_deliveries WHERE endpoint = 'auto-reply' GROUP BY status, last_status`)
      .all() as { status: string; code: number | null; n: number }[];
    return Object.fromEntries(rows.map((row) => [`${row.status} ${row.code}`, Number(row.n)]));
  } finally {
    db.close();
  }
}

describe('the automatic reply to the sender', () => {
  test('a person’s message (the page’s proof solved) is answered once, marked as automatic, quoting the message without live links', async () => {
    const fields = {
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      message: 'Do you ship to Iceland? See https://Shop.Example/iceland or www.example.is.',
      honeypot: '',
      altcha: await solvedProof(site.url),
    };
    expect((await postForm(`${site.url}/api/contact`, fields, { ...BROWSER, 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    await eventually('the reply to reach the sender', () => mailsTo('ada@example.org').length === 1);
    const reply = parseMail(mailsTo('ada@example.org')[0]!.raw);
    expect(reply.header('auto-submitted')).toEqual(['auto-replied']);
    expect(reply.text).toBe(
      'Hello Ada Lovelace,\n\nthank you for writing.\n\n-- \nYour message:\n\nDo you ship to Iceland? See https[:]//Shop[.]Example/iceland or www[.]example[.]is.\n',
    );

    const again = { ...fields, message: 'And to Greenland?', altcha: await solvedProof(site.url) };
    expect((await postForm(`${site.url}/api/contact`, again, { ...BROWSER, 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    await eventually('both replies’ deliveries to end', () => replyDeliveries(site)['delivered 250'] === 1 && replyDeliveries(site)['delivered 208'] === 1);
    expect(mailsTo('ada@example.org')).toHaveLength(1);
  });

  test('a script posting JSON-style with the three Sec-Fetch-* headers and no proof reaches the owner, and gets no reply', async () => {
    const fields = { name: 'Bot Builder', email: 'victim-json@example.net', message: 'You have won a prize, reply now.', honeypot: '' };
    const response = await postForm(`${site.url}/api/contact`, fields, { ...BROWSER, accept: 'application/json', 'x-forwarded-for': '198.51.100.2' });
    expect(await response.json()).toEqual({ success: true });
    const toOwner = () => smtp.received.filter((mail) => mail.raw.includes('Bot Builder') && mail.to.includes('owner@example.com'));
    await eventually('the owner’s mail and the reply’s refusal', () => toOwner().length === 1 && (replyDeliveries(site)['delivered 403'] ?? 0) === 1);
    expect(mailsTo('victim-json@example.net')).toHaveLength(0);
  });
});

/**
 * The attack as reported: a script poses as a browser without JavaScript, follows the redirect
 * to the confirmation page, reads its token and posts it, once per victim, from three addresses.
 */
describe('the relay attack of issue 28, as a script against the built server', () => {
  async function confirmAs(client: string, victim: string): Promise<'confirmed' | 'refused'> {
    const headers = { ...NAVIGATION, origin: site.url, 'x-forwarded-for': client };
    const fields = { name: 'Prize Desk', email: victim, message: 'Claim your prize today, it is waiting for you.', honeypot: '' };
    // fetch follows the 303 to the page, as a browser does.
    const held = await postForm(`${site.url}/api/contact`, fields, headers);
    const window = new Window();
    window.document.write(await held.text());
    const token = window.document.querySelector('input[name="token"]')?.getAttribute('value');
    if (!token) return 'refused';
    const body = new FormData();
    body.append('token', token);
    const confirmed = await fetch(`${site.url}/api/contact/confirm`, { method: 'POST', body, headers, redirect: 'manual' });
    return confirmed.headers.get('location') === '/thank-you/contact/' ? 'confirmed' : 'refused';
  }

  test('20 victims from each of three clients: five held posts per client count against its budget, confirmed messages reach the owner, and no victim is mailed', async () => {
    const clients = ['203.0.113.1', '203.0.113.2', '203.0.113.3'];
    const refusedBefore = replyDeliveries(site)['delivered 403'] ?? 0;
    // Each client's script works through its victims one after the other, as the reported one did
    // (post, follow, confirm), the three at once. (Twenty posts of one client at once would leave
    // its five held pages to give way to the drafts of its fifteen refused ones: ten drafts a client.)
    const perClient = await Promise.all(
      clients.map(async (client) => {
        const outcomes: Array<'confirmed' | 'refused'> = [];
        for (let i = 0; i < 20; i++) outcomes.push(await confirmAs(client, `victim-${client}-${i}@example.net`));
        return outcomes;
      }),
    );
    const results = perClient.flat();
    // Held for confirmation is not refunded: five per client, the other 15 are 429.
    expect(results.filter((r) => r === 'confirmed')).toHaveLength(15);
    await eventually('the 15 confirmed messages to reach the owner', () => smtp.received.filter((m) => m.raw.includes('Prize Desk')).length === 15, 20_000);
    await eventually('every reply’s delivery to end', () => (replyDeliveries(site)['delivered 403'] ?? 0) === refusedBefore + 15, 20_000);
    expect(smtp.received.filter((mail) => mail.to.some((to) => to.startsWith('victim-')))).toHaveLength(0);
  });
});

describe('the site-wide cap on replies per hour (AUTO_REPLY_MAX_PER_HOUR)', () => {
  let capped: Site;
  let mail: FakeSmtpServer;
  beforeAll(async () => {
    mail = await startSmtpServer();
    capped = await startSite({ ...SITE_ENV, SMTP_URL: mail.url(), AUTO_REPLY_MAX_PER_HOUR: '2', RATE_LIMIT_MAX: '0' });
  });
  afterAll(async () => {
    await capped?.stop();
    await mail?.close();
  });

  test('a script that solves the proof for five addresses gets two replies sent; the other three end capped', async () => {
    for (let i = 0; i < 5; i++) {
      const fields = { name: 'Prize Desk', email: `solver-${i}@example.net`, message: 'Claim your prize today, it is waiting.', honeypot: '' };
      const response = await postForm(`${capped.url}/api/contact`, { ...fields, altcha: await solvedProof(capped.url) }, BROWSER);
      expect(response.status).toBe(200);
    }
    await eventually(
      'every reply’s delivery to end',
      () => replyDeliveries(capped)['delivered 250'] === 2 && replyDeliveries(capped)['delivered 429'] === 3,
      20_000,
    );
    expect(mail.received.filter((m) => m.to.some((to) => to.startsWith('solver-')))).toHaveLength(2);
  });
});
