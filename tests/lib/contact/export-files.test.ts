import { describe, expect, test } from 'vitest';
import { exportChunks, spreadsheetOf } from '../../../packages/site-forms/src/lib/contact/export.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { filesOfMessages } from '../../../packages/site-forms/src/lib/files/listing.ts';
import type { FormsSettings } from '../../../packages/site-forms/src/lib/forms/define-forms.ts';
import { testEngines } from '../../support/stores.ts';

/** The exports of a site whose form takes files: each message's files by name and size in the file field's column. */
const FORMS: FormsSettings = {
  contact: defineForm({
    name: 'contact',
    title: 'Contact',
    fields: [
      { name: 'name', type: 'text', label: 'Name' },
      { name: 'email', type: 'email', label: 'Email' },
      { name: 'message', type: 'textarea', label: 'Message' },
    ],
  }),
  forms: [
    defineForm({
      name: 'quote',
      title: 'Quote',
      fields: [
        { name: 'name', type: 'text', label: 'Name' },
        { name: 'email', type: 'email', label: 'Email' },
        { name: 'drawings', type: 'file', label: 'Drawings', maxFiles: 3 },
      ],
    }),
  ],
};
const file = (id: string, name: string, size: number) => ({ id, field: 'drawings', name, size, type: 'application/pdf', storageKey: `2026-11/${id}` });

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let all = '';
  for await (const chunk of chunks) all += chunk;
  return all;
}

describe.each(testEngines())('exports with files on $name', (engine) => {
  const setUp = async () => {
    const { store } = await engine.open();
    const receive = (name: string, files: ReturnType<typeof file>[]) =>
      store.submissions.receive({ name, email: 'ada@example.org', message: '', form: 'quote', fields: {}, held: undefined, files });
    await receive('Ada', [file('AAAAAAAAAAAAAAAAAAAAAAAa', 'front; view.pdf', 48_213), file('BBBBBBBBBBBBBBBBBBBBBBBb', 'plan.pdf', 1_200_000)]);
    await receive('Bob', []);
    return { store, options: { forms: FORMS, files: (ids: readonly number[]) => filesOfMessages(store.sql, ids) } };
  };

  test.skipIf(!engine.available)('JSON lists each file with its name and size, in the order sent; a message without files has none', async () => {
    const { store, options } = await setUp();
    const rows = JSON.parse(await text(exportChunks(store.outbox, 'json', options))) as Array<Record<string, unknown>>;
    expect(rows.map((row) => [row.name, row.drawings])).toEqual([
      ['Bob', []],
      [
        'Ada',
        [
          { name: 'front; view.pdf', size: 48_213 },
          { name: 'plan.pdf', size: 1_200_000 },
        ],
      ],
    ]);
  });

  test.skipIf(!engine.available)('CSV writes them in one cell, name and size in bytes, separated so a name with a semicolon stays whole', async () => {
    const { store, options } = await setUp();
    const csv = await text(exportChunks(store.outbox, 'csv', options));
    const [header, bob, ada] = csv.trimEnd().split('\r\n');
    expect(header!.split(',').at(-1)).toBe('drawings');
    expect(bob!.endsWith(',')).toBe(true);
    expect(ada!.endsWith(',"front; view.pdf (48213 bytes)\nplan.pdf (1200000 bytes)"')).toBe(true);
  });

  test.skipIf(!engine.available)(
    'the spreadsheet CSV lists the files too, each field its own; JSON stays JSON and no file lister leaves the cells as stored',
    async () => {
      const { store } = await engine.open();
      const forms: FormsSettings = {
        contact: FORMS.contact,
        forms: [
          defineForm({
            name: 'quote',
            title: 'Quote',
            fields: [
              { name: 'name', type: 'text', label: 'Name' },
              { name: 'drawings', type: 'file', label: 'Drawings' },
              { name: 'photos', type: 'file', label: 'Photos' },
            ],
          }),
        ],
      };
      await store.submissions.receive({
        name: 'Ada',
        email: 'ada@example.org',
        message: '',
        form: 'quote',
        fields: {},
        held: undefined,
        files: [file('AAAAAAAAAAAAAAAAAAAAAAAa', 'plan.pdf', 1_200), { ...file('BBBBBBBBBBBBBBBBBBBBBBBb', 'roof.jpg', 300), field: 'photos' }],
      });
      await store.sql.run('UPDATE submissions SET created_at = ?, next_attempt_at = ?', ['2026-11-26T10:00:00.000Z', '2026-11-26T10:00:00.000Z']);
      const files = (ids: readonly number[]) => filesOfMessages(store.sql, ids);
      const spreadsheet = spreadsheetOf({ language: 'en', timeZone: 'Europe/Berlin' }, forms);
      const csv = await text(exportChunks(store.outbox, 'csv', { forms, files, spreadsheet }));
      const [header, ada] = csv
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split('\r\n');
      expect([header, ada]).toEqual([
        'No.,Received,Name,Email,Message,Status,Attempts,Next attempt,Last error,Sent,Spam reasons,Form,Drawings,Photos',
        '1,2026-11-26 11:00:00 +01:00,Ada,ada@example.org,,Waiting,0,2026-11-26 11:00:00 +01:00,,,,Quote,plan.pdf (1200 bytes),roof.jpg (300 bytes)',
      ]);
      const json = JSON.parse(await text(exportChunks(store.outbox, 'json', { forms, files, spreadsheet }))) as Array<Record<string, unknown>>;
      expect(json.map((row) => [row.drawings, row.photos])).toEqual([[[{ name: 'plan.pdf', size: 1_200 }], [{ name: 'roof.jpg', size: 300 }]]]);
      const plain = await text(exportChunks(store.outbox, 'csv', { forms }));
      expect(plain.trimEnd().split('\r\n')[1]).toBe('1,2026-11-26 10:00:00,Ada,ada@example.org,,pending,0,2026-11-26 10:00:00,,,,quote,,');
    },
  );
});
