import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { composeContactEmail, composeOwnerMail } from '../../../packages/site-forms/src/lib/contact/message.ts';
import { createDeliveryWorker } from '../../../packages/site-forms/src/lib/contact/worker.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type NewFile, newFileId, recordFiles } from '../../../packages/site-forms/src/lib/files/files.ts';
import { createFileStorage, type FileStorage, filesFolder, newStorageKey } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import type { SmtpConfig } from '../../../packages/site-forms/src/lib/mail/mailer-settings.ts';
import { mailParts } from '../../support/mime.ts';
import { startS3 } from '../../support/s3.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

/**
 * The owner's mail of a message with files, through a real SMTP server: small files attached
 * within MAIL_ATTACH_MAX_BYTES, the others named with the way to the admin, and every retry the same mail.
 */
const SITE = { name: 'Werkbank', senderName: 'Werkbank', adminOrigin: 'https://werkbank.example' };
const T0 = new Date('2026-11-26T10:00:00.000Z');

let dir: string;
let store: Store;
let storage: FileStorage;
let smtpServer: FakeSmtpServer;
let smtp: SmtpConfig;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'site-forms-owner-mail-'));
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
  storage = createFileStorage({ dataDir: dir });
  smtpServer = await startSmtpServer();
  smtp = { url: smtpServer.url(), to: 'owner@werkbank.example', from: 'site@werkbank.example' } as SmtpConfig;
});
afterEach(async () => {
  await smtpServer.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes of a file that tell where each byte came from: a mixed-up or cut attachment shows. */
const bytesOf = (seed: number, size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + seed) % 256));

/** A message with files, stored as a post leaves it: the bytes in the storage, the rows with the message. */
async function messageWith(files: Array<{ name: string; type: string; bytes: Buffer }>): Promise<number> {
  return (await storedMessage(files)).id;
}

/** `messageWith`, answering the storage keys of the files too. */
async function storedMessage(files: Array<{ name: string; type: string; bytes: Buffer }>): Promise<{ id: number; keys: string[] }> {
  const id = await store.submissions.save({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'The drawings for the quote.', honeypot: '' });
  await store.sql.run('UPDATE submissions SET created_at = ?, next_attempt_at = ? WHERE id = ?', [T0.toISOString(), T0.toISOString(), id]);
  const recorded: NewFile[] = [];
  for (const [index, file] of files.entries()) {
    const local = join(dir, `upload-${index}`);
    writeFileSync(local, file.bytes);
    const fileId = newFileId();
    const storageKey = newStorageKey(fileId, T0);
    await storage.put(storageKey, local, file.bytes.length, file.type);
    recorded.push({ id: fileId, field: 'drawings', name: file.name, size: file.bytes.length, type: file.type, storageKey });
  }
  await store.sql.transaction((tx) => recordFiles(tx, id, recorded, T0.toISOString()));
  return { id, keys: recorded.map((file) => file.storageKey) };
}

function worker(maxBytes: number, clock: () => Date) {
  return createDeliveryWorker({
    outbox: store.outbox,
    mailer: createSmtpMailer(smtp),
    compose: (submission) => composeOwnerMail(submission, smtp, SITE, { records: store.files, storage, maxBytes }),
    logger: createLogger({ level: 'silent' }),
    clock,
    random: () => 0,
    retryBaseMs: 1_000,
  });
}

describe("the owner's mail of a message with files", () => {
  test('files ride as attachments while together within the limit, byte for byte; the others are named, to download from the admin', async () => {
    const png = bytesOf(1, 1000);
    const pdf = bytesOf(2, 2500);
    const txt = bytesOf(3, 1500);
    await messageWith([
      { name: 'front.png', type: 'image/png', bytes: png },
      { name: 'plan.pdf', type: 'application/pdf', bytes: pdf },
      { name: 'notes.txt', type: 'text/plain', bytes: txt },
    ]);
    await worker(3000, () => T0).deliverDue();
    expect(smtpServer.received).toHaveLength(1);
    const [text, ...attachments] = mailParts(smtpServer.received[0]!.raw);
    expect(text!.text).toContain(
      'Files:\n- front.png (1 kB), attached\n- notes.txt (1.5 kB), attached\n- plan.pdf (2.5 kB), too large for this mail: download it from the inbox\n',
    );
    expect(text!.text).toContain('Read it in your inbox: https://werkbank.example/admin/messages/1');
    expect(
      attachments.map((part) => [part.header('content-type')[0]!.split(';')[0], /filename="?([^";]+)/.exec(part.header('content-disposition')[0]!)?.[1]]),
    ).toEqual([
      ['image/png', 'front.png'],
      ['text/plain', 'notes.txt'],
    ]);
    expect(attachments[0]!.bytes.equals(png)).toBe(true);
    expect(attachments[1]!.bytes.equals(txt)).toBe(true);
  });

  test('a retry after the mail server refused sends the very same mail: the same attachments, the same Message-ID', async () => {
    await messageWith([
      { name: 'front.png', type: 'image/png', bytes: bytesOf(1, 800) },
      { name: 'plan.pdf', type: 'application/pdf', bytes: bytesOf(2, 4000) },
    ]);
    smtpServer.answer((attempt) => (attempt === 1 ? { code: 451, message: '4.3.0 Try again later' } : 'accept'));
    let now = T0;
    const delivery = worker(2000, () => now);
    await delivery.deliverDue();
    expect(smtpServer.received).toHaveLength(0);
    now = new Date(T0.getTime() + 60_000);
    await delivery.deliverDue();
    expect(smtpServer.offered).toHaveLength(2);
    const [first, second] = smtpServer.offered.map((mail) => mailParts(mail.raw));
    expect(second!.map((part) => part.bytes.toString('base64'))).toEqual(first!.map((part) => part.bytes.toString('base64')));
    expect(second![0]!.header('message-id')).toEqual(first![0]!.header('message-id'));
    expect(second).toHaveLength(2);
  });

  test('MAIL_ATTACH_MAX_BYTES=0 attaches nothing and names every file', async () => {
    await messageWith([{ name: 'front.png', type: 'image/png', bytes: bytesOf(1, 10) }]);
    await worker(0, () => T0).deliverDue();
    const parts = mailParts(smtpServer.received[0]!.raw);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.text).toContain('Files:\n- front.png (10 B), too large for this mail: download it from the inbox\n');
  });

  test('a message without files gets the mail it always got', async () => {
    const id = await messageWith([]);
    const submission = (await store.outbox.find(id))!;
    const email = await composeOwnerMail(submission, smtp, SITE, { records: store.files, storage, maxBytes: 3000 });
    expect(email.attachments).toBeUndefined();
    expect(email.text).not.toContain('Files:');
  });
});

describe("the owner's mail when the storage fails", () => {
  test('a file gone from the storage (removed by hand) is named as gone, and the mail goes with the others', async () => {
    const png = bytesOf(1, 1000);
    const txt = bytesOf(3, 1500);
    const { id, keys } = await storedMessage([
      { name: 'front.png', type: 'image/png', bytes: png },
      { name: 'plan.pdf', type: 'application/pdf', bytes: bytesOf(2, 2500) },
      { name: 'notes.txt', type: 'text/plain', bytes: txt },
    ]);
    rmSync(join(filesFolder(dir), ...keys[1]!.split('/')));
    await worker(10_000, () => T0).deliverDue();
    expect(smtpServer.received).toHaveLength(1);
    const [text, ...attachments] = mailParts(smtpServer.received[0]!.raw);
    expect(text!.text).toContain('Files:\n- front.png (1 kB), attached\n- notes.txt (1.5 kB), attached\n- plan.pdf (2.5 kB), no longer in the storage\n');
    expect(attachments.map((part) => /filename="?([^";]+)/.exec(part.header('content-disposition')[0]!)?.[1])).toEqual(['front.png', 'notes.txt']);
    expect(attachments[0]!.bytes.equals(png)).toBe(true);
    expect(attachments[1]!.bytes.equals(txt)).toBe(true);
    await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'sent' });
  });

  test('an object store whose object is gone (a bucket emptied) names the file as gone, and the mail goes with the others', async () => {
    const s3 = await startS3('emptied-bucket');
    try {
      storage = createFileStorage({ dataDir: dir, s3: s3.settings });
      const png = bytesOf(1, 600);
      const { id, keys } = await storedMessage([
        { name: 'front.png', type: 'image/png', bytes: png },
        { name: 'back.png', type: 'image/png', bytes: bytesOf(4, 700) },
      ]);
      await storage.remove(keys[1]!);
      await worker(10_000, () => T0).deliverDue();
      expect(smtpServer.received).toHaveLength(1);
      const [text, ...attachments] = mailParts(smtpServer.received[0]!.raw);
      expect(text!.text).toContain('Files:\n- front.png (600 B), attached\n- back.png (700 B), no longer in the storage\n');
      expect(attachments).toHaveLength(1);
      expect(attachments[0]!.bytes.equals(png)).toBe(true);
      await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'sent' });
    } finally {
      await s3.stop();
    }
  });

  test('a storage that is down fails the attempt with no word of its own; the retry, once it is back, sends the mail with the file', async () => {
    const png = bytesOf(1, 10);
    const id = await messageWith([{ name: 'front.png', type: 'image/png', bytes: png }]);
    // A real object store that does not answer (nothing listens on port 9), then the storage that has the file.
    const down = createFileStorage({
      dataDir: dir,
      s3: { endpoint: 'http://127.0.0.1:9', bucket: 'files', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' },
    });
    let current: FileStorage = down;
    let now = T0;
    const delivery = createDeliveryWorker({
      outbox: store.outbox,
      mailer: createSmtpMailer(smtp),
      compose: (submission) =>
        composeOwnerMail(submission, smtp, SITE, { records: store.files, storage: { open: (key) => current.open(key) }, maxBytes: 3000 }),
      logger: createLogger({ level: 'silent' }),
      clock: () => now,
      random: () => 0,
      retryBaseMs: 1_000,
    });
    await delivery.deliverDue();
    expect(smtpServer.offered).toHaveLength(0);
    const failed = (await store.outbox.find(id))!;
    expect(failed.status).toBe('pending');
    expect(failed.lastError).toMatch(/^unexpected error: Error: the storage could not open a file \([A-Za-z]+\)$/);
    expect(failed.lastError).not.toContain('127.0.0.1');

    current = storage;
    now = new Date(T0.getTime() + 60_000);
    await delivery.deliverDue();
    expect(smtpServer.received).toHaveLength(1);
    const [text, attachment] = mailParts(smtpServer.received[0]!.raw);
    expect(text!.text).toContain('Files:\n- front.png (10 B), attached\n');
    expect(attachment!.bytes.equals(png)).toBe(true);
    await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'sent' });
  });

  test('a file the storage cannot open fails the attempt, to be retried, with no word of the storage in the reason', async () => {
    await messageWith([{ name: 'front.png', type: 'image/png', bytes: bytesOf(1, 10) }]);
    const broken = {
      open: async () => Promise.reject(Object.assign(new Error('SignatureDoesNotMatch: the secret key acme-prod-7 is wrong'), { code: 'EACCES' })),
    };
    const delivery = createDeliveryWorker({
      outbox: store.outbox,
      mailer: createSmtpMailer(smtp),
      compose: (submission) => composeOwnerMail(submission, smtp, SITE, { records: store.files, storage: broken, maxBytes: 3000 }),
      logger: createLogger({ level: 'silent' }),
      clock: () => T0,
      random: () => 0,
    });
    await delivery.deliverDue();
    expect(smtpServer.offered).toHaveLength(0);
    const message = (await store.outbox.find(1))!;
    expect([message.status, message.lastError]).toEqual(['pending', 'unexpected error: Error: the storage could not open a file (EACCES)']);
  });
});

describe("the owner's mail's files, composed", () => {
  test('a mail whose files are all too large carries no attachments at all', async () => {
    const id = await messageWith([{ name: 'front.png', type: 'image/png', bytes: bytesOf(1, 10) }]);
    const email = await composeOwnerMail((await store.outbox.find(id))!, smtp, SITE, { records: store.files, storage, maxBytes: 0 });
    expect('attachments' in email).toBe(false);
  });

  test('a file the storage cannot open closes the files already opened for the mail', async () => {
    const id = await messageWith([
      { name: 'a.png', type: 'image/png', bytes: bytesOf(1, 10) },
      { name: 'b.png', type: 'image/png', bytes: bytesOf(2, 10) },
    ]);
    const opened: Readable[] = [];
    const failing = {
      open: async (key: string) => {
        if (opened.length > 0) throw Object.assign(new Error('down'), { code: 'EIO' });
        const stream = await storage.open(key);
        opened.push(stream);
        return stream;
      },
    };
    await expect(composeOwnerMail((await store.outbox.find(id))!, smtp, SITE, { records: store.files, storage: failing, maxBytes: 3000 })).rejects.toThrow(
      'the storage could not open a file (EIO)',
    );
    expect(opened.map((stream) => stream.destroyed)).toEqual([true]);
  });

  test('a plan without gone files lists the others only, and an empty plan adds no files section', async () => {
    const id = await messageWith([]);
    const submission = (await store.outbox.find(id))!;
    const listed = composeContactEmail(submission, smtp, SITE, { attached: [{ name: 'a.png', size: 10 }], linked: [{ name: 'b.pdf', size: 20 }] });
    expect(listed.text).toContain(
      'The drawings for the quote.\n\nFiles:\n- a.png (10 B), attached\n- b.pdf (20 B), too large for this mail: download it from the inbox\n\n-- \n',
    );
    const empty = composeContactEmail(submission, smtp, SITE, { attached: [], linked: [] });
    expect(empty.text.startsWith('The drawings for the quote.\n\n-- \n')).toBe(true);
  });
});
