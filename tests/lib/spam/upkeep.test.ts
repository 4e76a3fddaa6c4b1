import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { spamJobs, tidySpam } from '../../../packages/site-forms/src/lib/spam/upkeep.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

const INPUT = { name: 'Spammy', email: 'spam@example.com', message: 'Buy now\nsecond line', honeypot: '' };
let smtp: FakeSmtpServer;
let refuse = false;
beforeAll(async () => {
  smtp = await startSmtpServer({ answer: () => (refuse ? { code: 451, message: 'try later' } : 'accept') });
});
afterAll(() => smtp.close());

const DAY = 86_400_000;

describe.each(testEngines())('tidying held spam on $name', (engine) => {
  const open = async () => {
    const { store } = await engine.open();
    const spam = store.spam;
    const smtpConfig = { url: smtp.url(), to: 'owner@example.com', from: 'site@example.com' };
    const lines: string[] = [];
    const deps = {
      spam,
      mailer: createSmtpMailer(smtpConfig),
      smtp: smtpConfig,
      site: { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined },
      retentionDays: 30,
      logger: createLogger({ level: 'info', write: (l) => lines.push(l) }),
    };
    const age = (id: number, at: Date) => store.sql.run('UPDATE submissions SET created_at = ? WHERE id = ?', [at.toISOString(), id]);
    return { store, spam, deps, lines, age };
  };

  test("three jobs, each hourly; the digest is also due at the owner's time of day", async () => {
    const { deps } = await open();
    const jobs = spamJobs({ ...deps, digestAt: { hour: 7, minute: 30 } });
    expect(jobs.map((job) => [job.name, job.everyMs])).toEqual([
      ['spam-retention', 3_600_000],
      ['used-challenges', 3_600_000],
      ['digest', 3_600_000],
    ]);
    expect(jobs[2]!.dueAt!(new Date('2026-11-25T06:59:00.000Z'))).toEqual(new Date('2026-11-25T07:30:00.000Z'));
    expect(jobs[0]!.dueAt).toBeUndefined();
    expect(spamJobs(deps)[2]!.dueAt).toBeUndefined();
  });

  test.skipIf(!engine.available)('held spam older than the retention is deleted; younger spam and other messages stay', async () => {
    const { store, spam, deps, age } = await open();
    const now = new Date();
    const old = await spam.hold(INPUT, { reasons: ['too-fast'] });
    const young = await spam.hold(INPUT, { reasons: ['too-fast'] });
    const person = await store.submissions.save(INPUT);
    await age(old, new Date(now.getTime() - 30 * DAY - 1));
    await age(young, new Date(now.getTime() - 30 * DAY + 60_000));
    await age(person, new Date(now.getTime() - 90 * DAY));
    const result = await tidySpam({ ...deps, mailer: undefined, smtp: undefined }, now);
    expect(result).toEqual({ deleted: 1, expiredChallenges: 0, digest: 'no mail server' });
    expect((await store.outbox.list()).map((m) => m.id).sort()).toEqual([young, person].sort());
  });

  test.skipIf(!engine.available)('the digest goes out once a day when something was held, and again after a failure', async () => {
    const { spam, deps, lines } = await open();
    const before = smtp.received.length;
    // A second ahead: the digest lists what arrived before the moment it was taken.
    const now = new Date(Date.now() + 1_000);
    await expect(tidySpam(deps, now)).resolves.toMatchObject({ digest: 'nothing held' });
    await spam.hold(INPUT, { reasons: ['link-in-name'] });

    refuse = true;
    await expect(tidySpam(deps, now)).resolves.toMatchObject({ digest: 'failed' });
    refuse = false;
    await expect(tidySpam(deps, now)).resolves.toMatchObject({ digest: 'sent' });
    await expect(tidySpam(deps, new Date(now.getTime() + DAY - 1))).resolves.toMatchObject({ digest: 'not due' });
    expect(smtp.received.length - before).toBe(1);
    const mail = parseMail(smtp.received.at(-1)!.raw);
    expect(mail.header('subject')).toEqual(['[Atelier Nord] Held as spam: 1 message']);
    expect(mail.text).toContain('Spammy');
    expect(mail.text).toContain('held because: a link or a domain in the name');
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(['spam.digest_failed', 'spam.digest_sent']);

    // A day later, only what was held since is listed; with nothing new, nothing is sent.
    await expect(tidySpam(deps, new Date(now.getTime() + DAY))).resolves.toMatchObject({ digest: 'nothing held' });
  });

  test.skipIf(!engine.available)('expired challenges are forgotten', async () => {
    const { spam, deps } = await open();
    const now = Date.now();
    await spam.usedChallenges.claim('old', now - 1);
    await spam.usedChallenges.claim('live', now + 60_000);
    await expect(tidySpam({ ...deps, mailer: undefined }, new Date(now))).resolves.toMatchObject({ expiredChallenges: 1 });
  });
});
