import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_CONFIGS_OPTION } from '../contact/run-inbox.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, type SmtpAnswer, startSmtpServer } from '../support/smtp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const POSTS = 40;
const KILL_AT = 20;

/** `npm run inbox -- export --format json`, as the owner would run it beside the instances. */
async function exportInbox(databaseUrl: string): Promise<Array<{ id: number; message: string; status: string }>> {
  const child = spawn(process.execPath, ['packages/site-forms/src/cli/inbox.ts', 'export', '--format', 'json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', NODE_OPTIONS: TEST_CONFIGS_OPTION, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise((resolve) => child.once('close', resolve));
  expect(code).toBe(0);
  return JSON.parse(stdout) as Array<{ id: number; message: string; status: string }>;
}

const markerOf = (raw: string) => /proof-marker-(\d{3})/.exec(raw)?.[1];
const messageIdOf = (raw: string) => /^Message-ID: *(<[^>]+>)/im.exec(raw)?.[1];

describe.skipIf(!postgresAvailable)('two instances on one PostgreSQL', () => {
  let postgres: PostgresServer;
  // The mail provider, reached by each instance on a port of its own, so the test knows which
  // instance is sending: the first instance's port can hold a message in the middle of its send.
  let smtpFirst: FakeSmtpServer;
  let smtpSecond: FakeSmtpServer;
  let holding = false;
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let url: string;
  const sites: Site[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
    url = await postgres.createDatabase('two_instances');
    smtpFirst = await startSmtpServer({
      answer: async (): Promise<SmtpAnswer> => {
        if (holding) {
          held += 1;
          await released;
        }
        return 'accept';
      },
    });
    smtpSecond = await startSmtpServer();
  }, 60_000);
  afterAll(async () => {
    for (const site of sites) await site.stop().catch(() => {});
    release?.();
    await smtpFirst?.close();
    await smtpSecond?.close();
    await postgres?.remove();
  });

  const start = async (smtp: FakeSmtpServer) => {
    // Each start gets a new, empty DATA_DIR: nothing of an instance lives on its disk.
    const site = await startSite({
      DATABASE_URL: url,
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'site@example.com',
      // The shortest lease allowed with SMTP: longer than the longest send (45 s), so a second
      // instance never starts a send while the first may still be talking to the mail server.
      DELIVERY_LEASE_MS: '46000',
    });
    sites.push(site);
    return site;
  };

  test('one SIGKILLed mid-send and started again on a new disk: every acknowledged message delivered, only the one being sent twice (same Message-ID), all sent as both instances and npm run inbox show', async () => {
    const live = [await start(smtpFirst), await start(smtpSecond)];
    const acknowledged: string[] = [];
    for (let i = 0; i < POSTS; i++) {
      if (i === KILL_AT) {
        // The first instance is in the middle of a send: its mail server has the message and
        // has not answered. Killed then, and the mail server accepts what it had (as a real one
        // may), so the message arrives although the instance never learned it was sent.
        holding = true;
        await eventually('the first instance to be in the middle of a send', () => held > 0, 30_000);
        await live[0]!.stop('SIGKILL');
        holding = false;
        release();
        live[0] = await start(smtpFirst);
      }
      const marker = String(i).padStart(3, '0');
      const site = live[i % 2]!;
      const response = await postForm(`${site.url}/api/contact`, {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        message: `Message proof-marker-${marker} of a stream through two instances.`,
        honeypot: '',
      }).catch(() => undefined);
      // A 200 means committed: only those must be delivered.
      if (response?.status === 200) acknowledged.push(marker);
    }
    expect(acknowledged).toHaveLength(POSTS);

    const received = () => [...smtpFirst.received, ...smtpSecond.received];
    const delivered = () =>
      received()
        .map((mail) => markerOf(mail.raw))
        .filter((m): m is string => m !== undefined);
    await eventually('every acknowledged message to be delivered', () => acknowledged.every((m) => delivered().includes(m)), 90_000);
    // Recorded as sent too: the message held at the kill only once its lease has ended and
    // another instance has sent it again.
    await eventually(
      'every acknowledged message to be recorded as sent',
      async () => {
        const stored = new Map((await exportInbox(url)).map((row) => [markerOf(row.message), row.status]));
        return acknowledged.every((marker) => stored.get(marker) === 'sent');
      },
      90_000,
    );

    const copies = new Map<string, string[]>();
    for (const mail of received()) {
      const marker = markerOf(mail.raw)!;
      copies.set(marker, [...(copies.get(marker) ?? []), messageIdOf(mail.raw)!]);
    }
    const twice = [...copies].filter(([, ids]) => ids.length > 1);
    // The message being sent at the kill went twice, with the same Message-ID; no other did.
    expect(twice).toHaveLength(1);
    for (const [, ids] of twice) expect(new Set(ids).size).toBe(1);
    expect([...copies.values()].every((ids) => ids.length <= 2)).toBe(true);

    const inbox = await exportInbox(url);
    const stored = new Map(inbox.map((row) => [markerOf(row.message), row.status]));
    for (const marker of acknowledged) expect(stored.get(marker)).toBe('sent');
    for (const site of live) {
      const health = await fetch(`${site.url}/api/health`);
      await expect(health.json()).resolves.toMatchObject({ success: true, database: 'PostgreSQL', pendingMessages: 0, failedMessages: 0 });
    }
    console.info(`two instances: ${acknowledged.length} acknowledged, ${received().length} delivered, ${twice.length} delivered twice`);
  }, 180_000);
});
