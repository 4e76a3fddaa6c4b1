import { describe, expect, test } from 'vitest';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { testEngines } from '../../support/stores.ts';

// Forms as data (decision 0131): a submission keeps its form and its extra fields in two columns
// on both engines, and the news of it carries them, so webhooks of an owner's form get its fields.
describe.each(testEngines())('a form of its own on $name', ({ available, open }) => {
  test.skipIf(!available)("the events of an owner's form carry its name and fields; a contact message's stay as they were", async () => {
    const { store } = await open();
    const machine = createSubmissionMachine(store.sql);
    const quote = await machine.receive({
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      message: '',
      form: 'quote',
      fields: { topic: 'table', budget: 1200, consent: true },
      held: undefined,
    });
    const contact = await machine.receive({ name: 'Bob', email: 'bob@example.org', message: 'Hello there, friends.', held: undefined });
    const held = await machine.receive({ name: 'Eve', email: 'eve@example.org', message: '', form: 'quote', fields: { topic: 'other' }, held: ['too-fast'] });
    const events = await store.sql.all<{ type: string; data: string }>('SELECT type, data FROM events');
    const data = events.map((e) => [e.type, JSON.parse(e.data) as Record<string, unknown>] as const).sort((a, b) => Number(a[1].id) - Number(b[1].id));
    expect(data).toEqual([
      [
        'contact.received',
        {
          id: quote.id,
          createdAt: expect.any(String),
          name: 'Ada Lovelace',
          email: 'ada@example.org',
          message: '',
          form: 'quote',
          fields: { topic: 'table', budget: 1200, consent: true },
        },
      ],
      ['contact.received', { id: contact.id, createdAt: expect.any(String), name: 'Bob', email: 'bob@example.org', message: 'Hello there, friends.' }],
      [
        'contact.held',
        {
          id: held.id,
          createdAt: expect.any(String),
          name: 'Eve',
          email: 'eve@example.org',
          message: '',
          form: 'quote',
          fields: { topic: 'other' },
          reasons: ['too-fast'],
        },
      ],
    ]);
    const rows = await store.sql.all<{ form: string; fields: string | null }>('SELECT form, fields FROM submissions ORDER BY id');
    expect(rows).toEqual([
      { form: 'quote', fields: '{"topic":"table","budget":1200,"consent":true}' },
      { form: 'contact', fields: null },
      { form: 'quote', fields: '{"topic":"other"}' },
    ]);

    // Released from spam, its news is told again with its fields.
    await machine.release(held.id, new Date());
    // The held message's only contact.received (it was contact.held when it came); events of one millisecond have no order.
    const told = (await store.sql.all<{ data: string }>("SELECT data FROM events WHERE type = 'contact.received'"))
      .map((row) => JSON.parse(row.data) as { id: number })
      .filter((data) => data.id === held.id);
    expect(told).toEqual([expect.objectContaining({ id: held.id, form: 'quote', fields: { topic: 'other' } })]);
  });
});
