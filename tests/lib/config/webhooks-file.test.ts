import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { webhooks } from '../../../packages/site-forms/src/lib/config/webhooks.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const dir = mkdtempSync(join(tmpdir(), 'site-forms-webhooks-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

describe('more endpoints from WEBHOOKS_FILE', () => {
  test('each with its own events and secret, beside the variables', () => {
    const path = file('ok.json', [
      { name: 'crm', url: 'https://crm.example.com/hooks/forms/', secret: SECRET, events: ['contact.received'] },
      { name: 'team-chat', url: 'https://hooks.slack.com/services/T/B/X', kind: 'slack', detail: 'none' },
    ]);
    const { config, problems } = webhooks.read({ WEBHOOKS_FILE: path, NTFY_URL: 'https://ntfy.sh/forms' });
    expect(problems).toEqual([]);
    expect(config.webhooks.endpoints).toEqual([
      { name: 'ntfy', kind: 'ntfy', url: 'https://ntfy.sh/forms', events: ['contact.received'], detail: 'name-and-first-line' },
      { name: 'crm', kind: 'standard', url: 'https://crm.example.com/hooks/forms', secrets: [SECRET], events: ['contact.received'] },
      { name: 'team-chat', kind: 'slack', url: 'https://hooks.slack.com/services/T/B/X', events: ['contact.received'], detail: 'none' },
    ]);
  });

  test.each([
    ['a file that is not there', () => join(dir, 'missing.json'), 'WEBHOOKS_FILE cannot be read'],
    ['not JSON', () => file('bad.json', '{'), 'WEBHOOKS_FILE is not JSON'],
    [
      'a standard webhook without a secret',
      () => file('nosecret.json', [{ name: 'a', url: 'https://a.example' }]),
      'WEBHOOKS_FILE 0.secret is required for a standard webhook',
    ],
    [
      'a weak secret',
      () => file('weak.json', [{ name: 'a', url: 'https://a.example', secret: 'hunter2' }]),
      'WEBHOOKS_FILE 0.secret must be whsec_ followed by the base64 of 24 to 64 random bytes',
    ],
    [
      'an unknown event',
      () => file('event.json', [{ name: 'a', url: 'https://a.example', secret: SECRET, events: ['contact.sent'] }]),
      'WEBHOOKS_FILE 0.events.0 must be among: contact.received, contact.held, newsletter.subscribed, newsletter.confirmed',
    ],
    [
      'a name the variables use',
      () => file('taken.json', [{ name: 'ntfy', url: 'https://a.example', kind: 'ntfy' }]),
      'WEBHOOKS_FILE names the endpoint "ntfy" twice (webhook, slack, discord, telegram and ntfy are taken by the variables)',
    ],
    ['an ftp address', () => file('ftp.json', [{ name: 'a', url: 'ftp://a.example', secret: SECRET }]), 'WEBHOOKS_FILE 0.url must be an absolute http(s) URL'],
  ])('%s stops the start, naming it', (_, path, problem) => {
    expect(webhooks.read({ WEBHOOKS_FILE: path(), NTFY_URL: 'https://ntfy.sh/forms' }).problems).toEqual([problem]);
  });
});
