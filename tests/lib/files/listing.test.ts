import { describe, expect, test } from 'vitest';
import { filesOfMessages } from '../../../packages/site-forms/src/lib/files/listing.ts';
import { testEngines } from '../../support/stores.ts';

describe.each(testEngines())('the files of several messages on $name', (engine) => {
  test.skipIf(!engine.available)('no messages, no files, and no statement that would list none', async () => {
    const { store } = await engine.open();
    await expect(filesOfMessages(store.sql, [])).resolves.toEqual([]);
  });

  test.skipIf(!engine.available)("each message's files in the order they were sent, message by message", async () => {
    const { store } = await engine.open();
    const receive = (message: string, files: Array<{ name: string; size: number }>) =>
      store.submissions.receive({
        name: 'Ada',
        email: 'ada@example.org',
        message,
        held: undefined,
        form: 'quote',
        files: files.map((file, index) => ({
          id: `${message}-${index}-${'x'.repeat(16)}`,
          field: 'photos',
          name: file.name,
          size: file.size,
          type: 'image/png',
          storageKey: `2026-11/${message}${index}${'y'.repeat(20)}`,
        })),
      });
    const first = await receive('first', [
      { name: 'b.png', size: 2 },
      { name: 'a.png', size: 1 },
    ]);
    const second = await receive('second', [{ name: 'c.png', size: 3 }]);
    await receive('other', [{ name: 'd.png', size: 4 }]);
    await expect(filesOfMessages(store.sql, [second.id, first.id])).resolves.toEqual([
      { submissionId: first.id, field: 'photos', name: 'b.png', size: 2 },
      { submissionId: first.id, field: 'photos', name: 'a.png', size: 1 },
      { submissionId: second.id, field: 'photos', name: 'c.png', size: 3 },
    ]);
  });
});
