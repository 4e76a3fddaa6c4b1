import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { formHandler, handleContact } from '../../../packages/site-forms/src/lib/contact/contact-handlers.ts';
import type { SubmissionStore } from '../../../packages/site-forms/src/lib/contact/submission-store.ts';
import { incomingFolder } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { createUploads, type UploadSettings } from '../../../packages/site-forms/src/lib/files/uploads.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';

const folders: string[] = [];
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

const SETTINGS: UploadSettings = { maxTotalBytes: 1_000, diskMinFreeBytes: 0, s3: undefined, clamd: undefined };

/** A form with a file field, its uploads on a temp folder, and a store that keeps what it is given. */
function parts(fileField: Record<string, unknown> = {}, settings: Partial<UploadSettings> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'contact-files-'));
  folders.push(dataDir);
  const uploads = createUploads({ ...SETTINGS, ...settings }, { dataDir, logger: silentLogger });
  const form = defineForm({
    name: 'application',
    title: 'Apply',
    fields: [
      { name: 'name', type: 'text', label: 'Name', required: true },
      { name: 'cv', type: 'file', label: 'CV', ...fileField },
    ],
  });
  const saved: Array<Record<string, unknown>> = [];
  const submissions: Pick<SubmissionStore, 'receive'> = {
    receive: async (message) => ({ id: saved.push(message as Record<string, unknown>), status: 'pending', reasons: [] }),
  };
  const incoming = () => {
    try {
      return readdirSync(incomingFolder(dataDir));
    } catch {
      return [];
    }
  };
  return { handle: formHandler(form), deps: { submissions, logger: silentLogger, uploads }, saved, incoming };
}

function post(fields: Record<string, string>, file?: { name: string; content: string; type: string }): Request {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  if (file) body.append('cv', new File([file.content], file.name, { type: file.type }));
  return new Request('http://site.test/api/forms/application', { method: 'POST', body });
}

const CV = { name: 'cv.txt', content: 'Curriculum vitae of Ada', type: 'text/plain' };

describe('a post with files, through the uploads', () => {
  test('its file is kept and stored with the message, not among its fields, and its temp file goes', async () => {
    const { handle, deps, saved, incoming } = parts({ required: true });
    await expect(handle(post({ name: 'Ada Lovelace', honeypot: '' }, CV), deps, { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    expect(saved).toHaveLength(1);
    expect(saved[0]!.fields).toStrictEqual({});
    expect((saved[0]!.files as Array<{ field: string; name: string; size: number }>).map(({ field, name, size }) => ({ field, name, size }))).toEqual([
      { field: 'cv', name: 'cv.txt', size: 23 },
    ]);
    expect(incoming()).toEqual([]);
  });

  test('a post without its optional file stores the message with no files at all', async () => {
    const { handle, deps, saved } = parts();
    await expect(handle(post({ name: 'Ada Lovelace', honeypot: '' }), deps, { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    expect(saved).toHaveLength(1);
    expect('files' in saved[0]!).toBe(false);
    expect(saved[0]!.fields).toStrictEqual({});
  });

  test('a file of a type the field does not take is refused with the other values kept, and nothing is stored', async () => {
    const { handle, deps, saved, incoming } = parts({ accept: ['image/png'] });
    await expect(handle(post({ name: 'Ada Lovelace', honeypot: '' }, CV), deps, { ip: '203.0.113.7' })).resolves.toStrictEqual({
      kind: 'invalid',
      values: { name: 'Ada Lovelace' },
      errors: { cv: ['CV: this kind of file is not accepted (accepted: image/png)'] },
    });
    expect(saved).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  test('a post larger than the uploads take is refused before any field is looked at', async () => {
    const { handle, deps, saved, incoming } = parts();
    const outcome = await handle(post({ name: 'Ada Lovelace', honeypot: '' }, { ...CV, content: 'x'.repeat(5_000) }), deps, { ip: '203.0.113.7' });
    expect(outcome).toMatchObject({ kind: 'failure', status: 413 });
    expect(saved).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  test('a storage that fails is a 503 with the values typed, and nothing is stored', async () => {
    const s3 = { endpoint: 'http://127.0.0.1:9', bucket: 'files', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' };
    const { handle, deps, saved, incoming } = parts({}, { s3 });
    await expect(handle(post({ name: 'Ada Lovelace', honeypot: '' }, CV), deps, { ip: '203.0.113.7' })).resolves.toEqual({
      kind: 'failure',
      status: 503,
      error: 'Files cannot be received right now. Please try again in a few minutes.',
      headers: { 'retry-after': '60' },
      values: { name: 'Ada Lovelace' },
    });
    expect(saved).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  test('a form without a file field is read as a plain form even when uploads are configured', async () => {
    const { deps, saved } = parts();
    const body = new URLSearchParams({ name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' });
    const request = new Request('http://site.test/api/contact', { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await expect(handleContact(request, deps, { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    expect(saved).toHaveLength(1);
    expect('files' in saved[0]!).toBe(false);
  });
});
