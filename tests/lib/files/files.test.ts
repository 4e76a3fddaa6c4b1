import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { newFileId } from '../../../packages/site-forms/src/lib/files/files.ts';
import { createFileStorage, newStorageKey, readStored } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { testEngines } from '../../support/stores.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFile(content: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'files-repo-'));
  folders.push(folder);
  const file = join(folder, 'upload.tmp');
  writeFileSync(file, content);
  return file;
}

const message = (name: string) => ({ name, email: 'ada@example.org', message: 'A photo of the broken part.', held: undefined, form: 'quote' });

describe.each(testEngines())('the files of messages on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('a message and its files are written together, read back in the order sent, and found by id', async () => {
      const { store } = await open();
      const files = [
        { id: newFileId(), field: 'photos', name: 'b-second.png', size: 10, type: 'image/png', storageKey: '2026-11/aaaaaaaaaaaaaaaaaaaaaaaa' },
        { id: newFileId(), field: 'photos', name: 'a-first.jpg', size: 20_000_000_000, type: 'image/jpeg', storageKey: '2026-11/bbbbbbbbbbbbbbbbbbbbbbbb' },
      ];
      const { id } = await store.submissions.receive({ ...message('Ada'), files });
      const listed = await store.files.filesOf(id);
      expect(listed.map((file) => [file.name, file.size, file.submissionId])).toEqual([
        ['b-second.png', 10, id],
        ['a-first.jpg', 20_000_000_000, id],
      ]);
      await expect(store.files.fileById(files[1]!.id)).resolves.toMatchObject({
        field: 'photos',
        type: 'image/jpeg',
        storageKey: '2026-11/bbbbbbbbbbbbbbbbbbbbbbbb',
      });
      await expect(store.files.fileById('no-such-file')).resolves.toBeUndefined();
      await expect(store.files.filesOf(id + 1)).resolves.toEqual([]);
    });

    test('a file row that cannot be written takes its message with it: nothing of the post is stored', async () => {
      const { store } = await open();
      const id = newFileId();
      const file = { id, field: 'cv', name: 'cv.pdf', size: 5, type: 'application/pdf', storageKey: '2026-11/cccccccccccccccccccccccc' };
      // The same id twice: the second row breaks the primary key inside the message's transaction.
      await expect(store.submissions.receive({ ...message('Grace'), files: [file, file] })).rejects.toThrow();
      await expect(store.outbox.list()).resolves.toEqual([]);
      await expect(store.files.fileById(id)).resolves.toBeUndefined();
    });

    test('which of a batch of storage keys a row names, in one answer; and whether any file is recorded at all', async () => {
      const { store } = await open();
      await expect(store.files.anyRecorded()).resolves.toBe(false);
      await expect(store.files.recordedKeys([])).resolves.toEqual(new Set());
      const files = [
        { id: newFileId(), field: 'cv', name: 'cv.pdf', size: 5, type: 'application/pdf', storageKey: '2026-11/dddddddddddddddddddddddd' },
        { id: newFileId(), field: 'cv', name: 'photo.jpg', size: 7, type: 'image/jpeg', storageKey: '2026-10/eeeeeeeeeeeeeeeeeeeeeeee' },
      ];
      await store.submissions.receive({ ...message('Ada'), files });
      await expect(store.files.anyRecorded()).resolves.toBe(true);
      const many = Array.from({ length: 1200 }, (_, i) => `2026-11/${String(i).padStart(24, 'x')}`);
      await expect(
        store.files.recordedKeys(['2026-11/dddddddddddddddddddddddd', '2026-11/ffffffffffffffffffffffff', ...many, '2026-10/eeeeeeeeeeeeeeeeeeeeeeee']),
      ).resolves.toEqual(new Set(['2026-11/dddddddddddddddddddddddd', '2026-10/eeeeeeeeeeeeeeeeeeeeeeee']));
    });

    test('the sweep removes the stored object and the row of a deleted message, and leaves the others', async () => {
      const { store, dataDir } = await open();
      const storage = createFileStorage({ dataDir });
      const keep = { id: newFileId(), field: 'cv', name: 'keep.txt', size: 4, type: 'text/plain', storageKey: newStorageKey(newFileId()) };
      const gone = { id: newFileId(), field: 'cv', name: 'gone.txt', size: 4, type: 'text/plain', storageKey: newStorageKey(newFileId()) };
      await storage.put(keep.storageKey, tempFile('keep'), 4, 'text/plain');
      await storage.put(gone.storageKey, tempFile('gone'), 4, 'text/plain');
      const kept = await store.submissions.receive({ ...message('Ada'), files: [keep] });
      const deleted = await store.submissions.receive({ ...message('Grace'), files: [gone] });
      await store.outbox.remove(deleted.id, new Date());
      await expect(store.files.sweep(storage)).resolves.toBe(1);
      await expect(store.files.fileById(gone.id)).resolves.toBeUndefined();
      await expect(readStored(storage, gone.storageKey)).rejects.toThrow();
      expect((await readStored(storage, keep.storageKey)).toString()).toBe('keep');
      await expect(store.files.filesOf(kept.id)).resolves.toHaveLength(1);
      await expect(store.files.sweep(storage)).resolves.toBe(0);
    });
  });
});
