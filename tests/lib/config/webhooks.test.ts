import { describe, expect, test } from 'vitest';
import { webhooks } from '../../../packages/site-forms/src/lib/config/webhooks.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const read = (env: Record<string, string>) => webhooks.read(env);

describe('the configuration of webhooks and chat alerts', () => {
  test('nothing set: no endpoint, private addresses refused', () => {
    expect(read({})).toEqual({ config: { webhooks: { endpoints: [], allowPrivate: false } }, problems: [] });
    expect(webhooks.describe(read({}).config)).toEqual({ webhooks: 'off' });
  });

  test('a signed webhook with a rotation, and every chat service', () => {
    const { config, problems } = read({
      WEBHOOK_URL: 'https://hooks.example.com/forms',
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_SECRET_PREVIOUS: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
      WEBHOOK_EVENTS: 'contact.received, newsletter.subscribed',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
      DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/1/abc',
      TELEGRAM_BOT_TOKEN: '123456:ABC-def_1',
      TELEGRAM_CHAT_ID: '-100123',
      NTFY_URL: 'https://ntfy.sh/my-forms',
      ALERT_EVENTS: 'contact.received,contact.held',
      ALERT_DETAIL: 'full',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    expect(problems).toEqual([]);
    expect(config.webhooks.allowPrivate).toBe(true);
    expect(config.webhooks.endpoints).toEqual([
      {
        name: 'webhook',
        kind: 'standard',
        url: 'https://hooks.example.com/forms',
        secrets: [SECRET, 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'],
        events: ['contact.received', 'newsletter.subscribed'],
      },
      { name: 'slack', kind: 'slack', url: 'https://hooks.slack.com/services/T000/B000/XXXX', events: ['contact.received', 'contact.held'], detail: 'full' },
      { name: 'discord', kind: 'discord', url: 'https://discord.com/api/webhooks/1/abc', events: ['contact.received', 'contact.held'], detail: 'full' },
      {
        name: 'telegram',
        kind: 'telegram',
        url: 'https://api.telegram.org/bot123456:ABC-def_1/sendMessage',
        chatId: '-100123',
        events: ['contact.received', 'contact.held'],
        detail: 'full',
      },
      { name: 'ntfy', kind: 'ntfy', url: 'https://ntfy.sh/my-forms', events: ['contact.received', 'contact.held'], detail: 'full' },
    ]);
    // The start-up log shows no secret: not the signing keys, not Slack's, Discord's or Telegram's tokens.
    const described = JSON.stringify(webhooks.describe(config));
    for (const secret of ['MfKQ9r8GKYqr', 'XXXX', '/abc', 'ABC-def_1']) expect(described).not.toContain(secret);
  });

  test('chat alerts tell of new messages by default, with the name and first line', () => {
    expect(read({ SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X' }).config.webhooks.endpoints[0]).toMatchObject({
      events: ['contact.received'],
      detail: 'name-and-first-line',
    });
  });

  test.each([
    [{ WEBHOOK_URL: 'https://h.example' }, 'WEBHOOK_SECRET is required when WEBHOOK_URL is set (make one with: echo whsec_$(openssl rand -base64 32))'],
    [{ WEBHOOK_URL: 'https://h.example', WEBHOOK_SECRET: 'hunter2' }, 'WEBHOOK_SECRET must be whsec_ followed by the base64 of 24 to 64 random bytes'],
    [{ WEBHOOK_SECRET: SECRET }, 'WEBHOOK_URL is required when WEBHOOK_SECRET is set'],
    [{ WEBHOOK_URL: 'ftp://h.example', WEBHOOK_SECRET: SECRET }, 'WEBHOOK_URL must be an absolute http(s) URL'],
    [
      { WEBHOOK_URL: 'https://h.example', WEBHOOK_SECRET: SECRET, WEBHOOK_EVENTS: 'contact.sent' },
      'WEBHOOK_EVENTS must be a comma-separated list of: contact.received, contact.held, newsletter.subscribed, newsletter.confirmed',
    ],
    [{ TELEGRAM_BOT_TOKEN: '123:abc' }, 'TELEGRAM_BOT_TOKEN and TELEGRAM_CHAT_ID go together'],
    [{ TELEGRAM_BOT_TOKEN: 'nope', TELEGRAM_CHAT_ID: '1' }, 'TELEGRAM_BOT_TOKEN must be the token BotFather gave, such as 123456:ABC-def'],
    [{ ALERT_DETAIL: 'everything' }, 'ALERT_DETAIL must be one of: name-and-first-line, full, none'],
    [{ WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE must be true or false'],
  ])('%j is refused: %s', (env, problem) => {
    expect(read(env).problems).toEqual([problem]);
  });
});
