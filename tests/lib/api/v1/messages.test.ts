/**
 * /api/v1/messages (issue 42, api/v1/messages.ts) through the pipeline with the app's route table,
 * on both engines: pages by cursor, newest first, with no duplicate and no gap; the filters; a key
 * limited to forms sees only them (404 otherwise, as for a message that does not exist); a read key
 * changes nothing (403 before any lookup); spam, not spam and delete go through the state machine
 * (deferred while the message is being sent), each change audited with the key.
 */
import { describe, expect, test } from 'vitest';
import { recordFiles } from '../../../../packages/site-forms/src/lib/files/files.ts';
import { testEngines } from '../../../support/stores.ts';
import { T0, at, bodyOf, useV1 } from './v1-support.ts';

const MINUTE = 60_000;

describe.each(testEngines())('/api/v1/messages on $name', (engine) => {
  const v1 = useV1(engine);
  const ids = async (path: string, key: string) => (bodyOf(await v1.call('GET', path, { key }))!.messages as Array<{ id: number }>).map((m) => m.id);
  const audit = () => v1.services.store.sql.all<Record<string, unknown>>('SELECT action, detail, client, actor, actor_name FROM admin_audit ORDER BY id');
  const statusOf = async (id: number) => (await v1.services.store.sql.get<{ status: string }>('SELECT status FROM submissions WHERE id = ?', [id]))?.status;

  test.skipIf(!engine.available)('pages newest first by cursor (limit 2): every message once, ties on the moment by id, next null at the end', async () => {
    const { key } = await v1.makeKey('reader', 'read');
    const a = await v1.receive('contact', at(1 * MINUTE));
    const b = await v1.receive('contact', at(2 * MINUTE));
    const c = await v1.receive('quote', at(2 * MINUTE));
    const d = await v1.receive('contact', at(2 * MINUTE));
    const e = await v1.receive('contact', at(3 * MINUTE));
    const seen: number[] = [];
    let path = '/api/v1/messages?limit=2';
    const pages: number[] = [];
    for (let page = 0; page < 10; page++) {
      const reply = await v1.call('GET', path, { key });
      expect(reply).toMatchObject({ status: 200, headers: { 'cache-control': 'no-store' } });
      const body = bodyOf(reply)!;
      seen.push(...(body.messages as Array<{ id: number }>).map((m) => m.id));
      pages.push(body.messages.length);
      if (body.next === null) break;
      expect(body.next).toMatch(/^[A-Za-z0-9_-]+$/);
      // A message received meanwhile is newer than the cursor: it never shifts the pages still to come.
      if (page === 0) await v1.receive('contact', at(4 * MINUTE));
      path = `/api/v1/messages?limit=2&cursor=${body.next}`;
    }
    expect(seen).toEqual([e, d, c, b, a]);
    expect(pages).toEqual([2, 2, 1]);
    const first = bodyOf(await v1.call('GET', '/api/v1/messages?limit=1', { key }))!;
    expect(first.messages).toEqual([
      {
        id: expect.any(Number),
        form: 'contact',
        status: 'pending',
        createdAt: at(4 * MINUTE).toISOString(),
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        excerpt: 'A message of the contact form.',
      },
    ]);
  });

  test.skipIf(!engine.available)('filters: form, status, since (inclusive) and until (exclusive); a long message is an excerpt of 200 characters', async () => {
    const { key } = await v1.makeKey('reader', 'read');
    const a = await v1.receive('contact', at(1 * MINUTE), { message: 'é'.repeat(300) });
    const b = await v1.receive('quote', at(2 * MINUTE));
    const c = await v1.receive('contact', at(3 * MINUTE), { held: ['too-fast'] });
    expect(await ids('/api/v1/messages?form=quote', key)).toEqual([b]);
    expect(await ids('/api/v1/messages?status=spam', key)).toEqual([c]);
    expect(await ids('/api/v1/messages?form=contact&status=pending', key)).toEqual([a]);
    expect(await ids(`/api/v1/messages?since=${at(2 * MINUTE).toISOString()}`, key)).toEqual([c, b]);
    expect(await ids(`/api/v1/messages?until=${at(2 * MINUTE).toISOString()}`, key)).toEqual([a]);
    expect(await ids(`/api/v1/messages?since=2030-01-01T10:01:30%2B00:00&until=2030-01-01T10:02:30Z`, key)).toEqual([b]);
    const long = bodyOf(await v1.call('GET', '/api/v1/messages?form=contact&status=pending', { key }))!.messages[0]!.excerpt;
    expect(long).toBe('é'.repeat(200));
  });

  test.skipIf(!engine.available)('400 bad_request: a cursor this server did not write, a limit outside 1–100, a status or a date that is none', async () => {
    const { key } = await v1.makeKey('reader', 'read');
    const forged = Buffer.from(JSON.stringify({ c: "x' OR 1=1", i: 1 })).toString('base64url');
    for (const query of ['cursor=nope!', `cursor=${forged}`, 'limit=0', 'limit=101', 'limit=ten', 'status=sending', 'since=yesterday', 'until=2030-13-45']) {
      const reply = await v1.call('GET', `/api/v1/messages?${query}`, { key });
      expect(reply.status, query).toBe(400);
      expect(bodyOf(reply), query).toMatchObject({ success: false, code: 'bad_request' });
    }
  });

  test.skipIf(!engine.available)(
    'a key limited to forms sees only them: listed, opened, ?form= outside is 404, another form’s message 404 as an absent one',
    async () => {
      const { key } = await v1.makeKey('quotes', 'read', ['quote']);
      const contact = await v1.receive('contact', at(1 * MINUTE));
      const quote = await v1.receive('quote', at(2 * MINUTE));
      expect(await ids('/api/v1/messages', key)).toEqual([quote]);
      expect(await ids('/api/v1/messages?form=quote', key)).toEqual([quote]);
      const outside = await v1.call('GET', '/api/v1/messages?form=contact', { key });
      expect(outside.status).toBe(404);
      expect(bodyOf(outside)).toMatchObject({ success: false, code: 'not_found' });
      expect((await v1.call('GET', `/api/v1/messages/${quote}`, { key })).status).toBe(200);
      const other = await v1.call('GET', `/api/v1/messages/${contact}`, { key });
      const absent = await v1.call('GET', '/api/v1/messages/999999', { key });
      expect(other.status).toBe(404);
      expect(bodyOf(other)).toEqual(bodyOf(absent));
      // A key with no form at all sees nothing.
      const { key: none } = await v1.makeKey('none', 'read', []);
      expect(await ids('/api/v1/messages', none)).toEqual([]);
    },
  );

  test.skipIf(!engine.available)('one message: its fields and its files as signed links, absolute from the request’s origin, with their end', async () => {
    const { key } = await v1.makeKey('reader', 'read');
    const id = await v1.receive('quote', at(1 * MINUTE));
    await v1.services.store.sql.transaction((tx) =>
      recordFiles(tx, id, [{ id: 'f'.repeat(32), field: 'plan', name: 'plan.pdf', size: 1234, type: 'application/pdf', storageKey: 'k1' }], T0.toISOString()),
    );
    const reply = await v1.call('GET', `/api/v1/messages/${id}`, { key });
    expect(reply.status).toBe(200);
    const { message } = bodyOf(reply)!;
    expect(message).toEqual({
      id,
      form: 'quote',
      status: 'pending',
      createdAt: at(1 * MINUTE).toISOString(),
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      message: 'A message of the quote form.',
      fields: {},
      attempts: 0,
      sentAt: null,
      files: [
        { id: 'f'.repeat(32), field: 'plan', name: 'plan.pdf', size: 1234, type: 'application/pdf', url: expect.any(String), expiresAt: expect.any(String) },
      ],
    });
    const url = new URL(message.files[0]!.url);
    expect(url.origin).toBe('http://site.test');
    expect(url.pathname).toBe(`/api/files/${'f'.repeat(32)}`);
    expect(new Date(message.files[0]!.expiresAt).getTime()).toBe(Number(url.searchParams.get('expires')) * 1000);
    expect(
      await v1.services.files.links.verify({ id: 'f'.repeat(32), expires: url.searchParams.get('expires')!, signature: url.searchParams.get('signature')! }),
    ).toBe('valid');
  });

  test.skipIf(!engine.available)(
    'a read key changes nothing: 403 insufficient_scope on spam, not spam and delete, before any lookup (an absent id too)',
    async () => {
      const { key } = await v1.makeKey('reader', 'read');
      const id = await v1.receive('contact', at(1 * MINUTE));
      for (const [method, path] of [
        ['POST', `/api/v1/messages/${id}/spam`],
        ['POST', `/api/v1/messages/${id}/not-spam`],
        ['DELETE', `/api/v1/messages/${id}`],
        ['DELETE', '/api/v1/messages/999999'],
      ] as const) {
        const reply = await v1.call(method, path, { key });
        expect(reply.status, path).toBe(403);
        expect(bodyOf(reply), path).toMatchObject({ code: 'insufficient_scope' });
      }
      expect(await statusOf(id)).toBe('pending');
      expect(await audit()).toEqual([]);
    },
  );

  test.skipIf(!engine.available)(
    'a write key: spam, not spam and delete through the machine, each change audited once with the key; another form’s message 404, unchanged',
    async () => {
      const { key, id: keyId } = await v1.makeKey('triage', 'write', ['quote']);
      const contact = await v1.receive('contact', at(1 * MINUTE));
      const quote = await v1.receive('quote', at(2 * MINUTE));
      const spam = await v1.call('POST', `/api/v1/messages/${quote}/spam`, { key, ip: '198.51.100.7' });
      expect(spam.status).toBe(200);
      expect(bodyOf(spam)).toEqual({ success: true, changed: true, status: 'spam', deferred: false });
      expect(await statusOf(quote)).toBe('spam');
      // Again: nothing moves, nothing more in the audit log.
      expect(bodyOf(await v1.call('POST', `/api/v1/messages/${quote}/spam`, { key }))).toEqual({
        success: true,
        changed: false,
        status: 'spam',
        deferred: false,
      });
      expect(bodyOf(await v1.call('POST', `/api/v1/messages/${quote}/not-spam`, { key }))).toEqual({
        success: true,
        changed: true,
        status: 'pending',
        deferred: false,
      });
      expect(await statusOf(quote)).toBe('pending');
      for (const [method, path] of [
        ['POST', `/api/v1/messages/${contact}/spam`],
        ['DELETE', `/api/v1/messages/${contact}`],
      ] as const)
        expect((await v1.call(method, path, { key })).status, path).toBe(404);
      expect(await statusOf(contact)).toBe('pending');
      const deleted = await v1.call('DELETE', `/api/v1/messages/${quote}`, { key });
      expect(deleted.status).toBe(200);
      expect(bodyOf(deleted)).toEqual({ success: true, deleted: true, deferred: false });
      expect(await statusOf(quote)).toBeUndefined();
      expect((await v1.call('DELETE', `/api/v1/messages/${quote}`, { key })).status).toBe(404);
      const entries = await audit();
      expect(entries.map((e) => [e.action, e.detail, e.actor, e.actor_name])).toEqual([
        ['mark-spam', `#${quote}`, `key:${keyId}`, 'key triage'],
        ['release', `#${quote}`, `key:${keyId}`, 'key triage'],
        ['delete-message', `#${quote}`, `key:${keyId}`, 'key triage'],
      ]);
      expect(entries[0]!.client).toMatch(/^[0-9a-f]+$/);
      // Each request that reached its handler is one log line naming the key, never the key itself.
      const lines = v1.logs.filter((line) => line.event === 'api.request' || line.msg === 'api.request');
      expect(lines.at(0)).toMatchObject({
        method: 'POST',
        route: `/api/v1/messages/${quote}/spam`,
        status: 200,
        key: keyId,
        keyName: 'triage',
        client: entries[0]!.client,
      });
      expect(lines.at(-1)).toMatchObject({ method: 'DELETE', status: 404 });
      expect(JSON.stringify(v1.logs)).not.toContain(key.slice(17));
    },
  );

  test.skipIf(!engine.available)('a message being sent: spam and delete are deferred to the send’s end, as the admin’s buttons', async () => {
    const { key } = await v1.makeKey('triage', 'write');
    const id = await v1.receive('contact', at(-MINUTE));
    const claimed = await v1.services.store.messages.claim(T0, at(MINUTE));
    expect(claimed?.id).toBe(id);
    expect(bodyOf(await v1.call('POST', `/api/v1/messages/${id}/spam`, { key }))).toEqual({ success: true, changed: true, status: 'sending', deferred: true });
    expect(bodyOf(await v1.call('DELETE', `/api/v1/messages/${id}`, { key }))).toEqual({ success: true, deleted: true, deferred: true });
    expect(await statusOf(id)).toBe('pending');
    expect((await audit()).map((e) => e.detail)).toEqual([`#${id} (when its send ends)`, `#${id} (when its send ends)`]);
  });
});
