import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runInbox } from '../contact/run-inbox.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually } from '../support/smtp.ts';

// A delivery survives a SIGKILL: the instance that took it dies mid-request, another takes it up
// once its lease runs out, with the same webhook-id, and it is delivered once.
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-webhook-kill-'));
let receiver: FakeHttpServer;
const sites: Site[] = [];
afterAll(async () => {
  for (const site of sites) await site.stop().catch(() => {});
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a webhook delivery across a SIGKILL', () => {
  test('is taken up by the next instance after the lease and delivered once, with the same webhook-id', async () => {
    let answered = 0;
    receiver = await startFakeHttpServer((request, res) => {
      // The first try hangs: its instance is killed before the receiver answers.
      if (receiver.requests.length === 1) return;
      answered++;
      replyJson(200, { ok: true })(request, res, undefined as never);
    });
    const env = {
      WEBHOOK_URL: `${receiver.url}/hook`,
      WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      DELIVERY_LEASE_MS: '2000',
    };
    const first = await startSite(env, { dataDir });
    sites.push(first);
    expect(
      (await postForm(`${first.url}/api/contact`, { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Sent once, told once.', honeypot: '' })).status,
    ).toBe(200);
    await eventually('the first try to reach the receiver', () => receiver.requests.length === 1);
    await first.stop('SIGKILL');

    const second = await startSite(env, { dataDir });
    sites.push(second);
    await eventually('the delivery to be taken up again', () => answered === 1);
    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
    // Delivered is a final state: once the row says so, no instance sends it again.
    const delivery = async () =>
      (await runInbox(['webhooks'], { DATA_DIR: dataDir })).stdout
        .split('\n')[1]!
        .split(/\s{2,}/)
        .slice(2, 6);
    await eventually('the delivery to be recorded as delivered', async () => (await delivery())[2] === 'delivered', 10_000);
    await expect(delivery()).resolves.toEqual(['contact.received', 'webhook', 'delivered', '2']);
    expect(receiver.requests).toHaveLength(2);
  });
});
