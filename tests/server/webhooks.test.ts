import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { runInbox } from '../contact/run-inbox.ts';
import { eventually } from '../support/smtp.ts';

// The built server with a signed webhook and every chat service, each faked at the network edge
// by a real HTTP server on 127.0.0.1 (so WEBHOOK_ALLOW_PRIVATE=true).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
let edge: FakeHttpServer;
let site: Site;

beforeAll(async () => {
  edge = await startFakeHttpServer(replyJson(200, { ok: true }));
  site = await startSite({
    WEBHOOK_URL: `${edge.url}/standard`,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SLACK_WEBHOOK_URL: `${edge.url}/slack/T0/B0/secret`,
    DISCORD_WEBHOOK_URL: `${edge.url}/discord/1/token`,
    TELEGRAM_BOT_TOKEN: '123456:ABC-def',
    TELEGRAM_CHAT_ID: '-10042',
    TELEGRAM_API_URL: `${edge.url}/telegram`,
    NTFY_URL: `${edge.url}/ntfy/forms`,
  });
});
afterAll(async () => {
  await site?.stop();
  await edge?.close();
});

const to = (prefix: string) => edge.requests.filter((request) => request.url.startsWith(prefix));

describe('a contact message, told everywhere the owner works', () => {
  test('reaches the signed webhook and every chat service in its own format', async () => {
    const response = await postForm(`${site.url}/api/contact`, {
      name: 'Zoë Ångström',
      email: 'zoe@example.org',
      message: 'A table of oak, please.\nThanks!',
      honeypot: '',
    });
    expect(response.status).toBe(200);
    await eventually('every endpoint to be told', () => ['/standard', '/slack', '/discord', '/telegram', '/ntfy'].every((p) => to(p).length === 1));

    const [standard] = to('/standard');
    const verified = new Webhook(SECRET).verify(standard!.body, standard!.headers as Record<string, string>);
    expect(verified).toMatchObject({
      type: 'contact.received',
      data: { name: 'Zoë Ångström', email: 'zoe@example.org', message: 'A table of oak, please.\r\nThanks!' },
    });

    const line = `${settings.name}: new message from Zoë Ångström <zoe@example.org>\nA table of oak, please.`;
    expect(JSON.parse(to('/slack')[0]!.body)).toEqual({ text: line.replace('<', '&lt;').replace('>', '&gt;'), mrkdwn: false });
    expect(JSON.parse(to('/discord')[0]!.body)).toEqual({ content: line.replace('<', '\\<'), allowed_mentions: { parse: [] } });
    expect(to('/telegram')[0]!.url).toBe('/telegram/bot123456:ABC-def/sendMessage');
    expect(JSON.parse(to('/telegram')[0]!.body)).toEqual({ chat_id: '-10042', text: line, disable_web_page_preview: true });
    expect(to('/ntfy')[0]!.body).toBe(line);

    // The start-up log names the endpoints, never a token.
    const logged = JSON.stringify(site.logs);
    for (const secret of ['ABC-def', '/B0/secret', '/1/token', 'MfKQ9r8GKYqr']) expect(logged).not.toContain(secret);
  });

  test('a subscription reaches the webhook only: chat alerts tell of messages unless the owner chooses more', async () => {
    edge.requests.length = 0;
    expect((await postForm(`${site.url}/api/newsletter`, { email: 'reader@example.org' })).status).toBe(200);
    await eventually('the webhook to be told', () => to('/standard').length === 1);
    expect(new Webhook(SECRET).verify(to('/standard')[0]!.body, to('/standard')[0]!.headers as Record<string, string>)).toMatchObject({
      type: 'newsletter.subscribed',
      data: { email: 'reader@example.org', provider: 'local' },
    });
    // The deliveries are written with the event, before the answer: the list is final, and names no chat.
    const listed = await runInbox(['webhooks'], { DATA_DIR: site.dataDir });
    const told = listed.stdout.split('\n').filter((row) => row.includes('newsletter.subscribed'));
    expect(told.map((row) => row.split(/\s{2,}/)[3])).toEqual(['webhook']);
    expect(edge.requests).toHaveLength(1);
  });
});

describe('npm run inbox -- webhooks', () => {
  test('lists the deliveries, and replays one', async () => {
    const listed = await runInbox(['webhooks'], { DATA_DIR: site.dataDir });
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID\s+CREATED \(UTC\)\s+EVENT\s+TO\s+STATUS\s+TRIES\s+LAST ERROR$/);
    expect(rows.slice(1).map((row) => row.split(/\s{2,}/).slice(2, 6))).toContainEqual(['contact.received', 'slack', 'delivered', '1']);
    const id = rows[1]!.trim().split(/\s+/)[0]!;
    edge.requests.length = 0;
    await expect(runInbox(['webhooks', 'replay', id], { DATA_DIR: site.dataDir })).resolves.toMatchObject({
      code: 0,
      stdout: `Delivery #${id} is sent again within a few seconds by the running server.\n`,
    });
    await eventually('the replay to arrive', () => edge.requests.length === 1);
    await expect(runInbox(['webhooks', 'replay', '99999'], { DATA_DIR: site.dataDir })).resolves.toMatchObject({ code: 1 });
  });
});

describe('an endpoint at a private address', () => {
  test('is a warning at start naming WEBHOOK_ALLOW_PRIVATE, before the site listens, for an address and a name alike', async () => {
    const own = await startSite({
      WEBHOOK_URL: `${edge.url}/standard`,
      WEBHOOK_SECRET: SECRET,
      // A name that resolves to loopback, and the chat service's secret path, which the line must not show.
      SLACK_WEBHOOK_URL: 'http://localhost:9/services/T0/B0/secret',
    });
    try {
      const lines = own.logs.filter((line): line is Record<string, unknown> => typeof line === 'object');
      const listening = lines.findIndex((line) => line.event === 'server.listening');
      const warnings = lines.filter((line) => line.event === 'webhook.private_address');
      expect(warnings).toEqual([
        expect.objectContaining({ level: 'warn', endpoint: 'webhook', host: '127.0.0.1', note: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=true') }),
        expect.objectContaining({ level: 'warn', endpoint: 'slack', host: 'localhost', note: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=true') }),
      ]);
      expect(lines.indexOf(warnings[1]!)).toBeLessThan(listening);
      expect(JSON.stringify(warnings)).not.toContain('secret');
    } finally {
      await own.stop();
    }
  });

  test('allowed by WEBHOOK_ALLOW_PRIVATE=true: no warning', () => {
    expect(site.logs.filter((line) => typeof line === 'object' && line.event === 'webhook.private_address')).toEqual([]);
  });
});
