/**
 * /api/v1/subscribers (issue 42, api/v1/subscribers.ts) through the pipeline, on both engines: the
 * local list only for a key with `newsletter` among its forms (404 otherwise), by cursor, newest
 * first; erasure by an address in a JSON body, audited with the key and a masked address; a read
 * key erases nothing (403).
 */
import { describe, expect, test } from 'vitest';
import { testEngines } from '../../../support/stores.ts';
import { at, bodyOf, useV1 } from './v1-support.ts';

describe.each(testEngines())('/api/v1/subscribers on $name', (engine) => {
  const v1 = useV1(engine);
  const subscribe = (email: string, ms: number) =>
    v1.services.store.sql.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?)', [email, at(ms).toISOString()]);
  const erase = (key: string, body: string, type = 'application/json') => v1.call('POST', '/api/v1/subscribers/erase', { key, body, type });

  test.skipIf(!engine.available)('pages newest first by cursor (limit 2), ties on the moment by address, every address once', async () => {
    const { key } = await v1.makeKey('list', 'read', ['newsletter']);
    await subscribe('a@example.com', 1000);
    await subscribe('b@example.com', 2000);
    await subscribe('c@example.com', 2000);
    await subscribe('d@example.com', 3000);
    await subscribe('e@example.com', 2000);
    const seen: string[] = [];
    let path = '/api/v1/subscribers?limit=2';
    for (let page = 0; page < 10; page++) {
      const body = bodyOf(await v1.call('GET', path, { key }))!;
      seen.push(...body.subscribers.map((s) => s.email));
      if (body.next === null) break;
      path = `/api/v1/subscribers?limit=2&cursor=${body.next}`;
    }
    expect(seen).toEqual(['d@example.com', 'e@example.com', 'c@example.com', 'b@example.com', 'a@example.com']);
    expect(bodyOf(await v1.call('GET', '/api/v1/subscribers?limit=1', { key }))!.subscribers).toEqual([
      { email: 'd@example.com', createdAt: at(3000).toISOString() },
    ]);
    expect((await v1.call('GET', '/api/v1/subscribers?cursor=x', { key })).status).toBe(400);
  });

  test.skipIf(!engine.available)('a key without newsletter in its forms: 404 on the list and on erasure, nothing erased; every form includes it', async () => {
    await subscribe('a@example.com', 1000);
    const { key: contactOnly } = await v1.makeKey('contact', 'write', ['contact']);
    for (const reply of [await v1.call('GET', '/api/v1/subscribers', { key: contactOnly }), await erase(contactOnly, '{"email":"a@example.com"}')]) {
      expect(reply.status).toBe(404);
      expect(bodyOf(reply)).toMatchObject({ success: false, code: 'not_found' });
    }
    const { key: every } = await v1.makeKey('every', 'read');
    expect(bodyOf(await v1.call('GET', '/api/v1/subscribers', { key: every }))!.subscribers).toHaveLength(1);
  });

  test.skipIf(!engine.available)(
    'erasure: a write key erases an address (any case), audited with the key and the domain only; a read key gets 403',
    async () => {
      await subscribe('ada@example.com', 1000);
      const { key: reader } = await v1.makeKey('reader', 'read', ['newsletter']);
      expect((await erase(reader, '{"email":"ada@example.com"}')).status).toBe(403);
      const { key, id } = await v1.makeKey('eraser', 'write', ['newsletter']);
      const reply = await erase(key, '{"email":"Ada@Example.com"}');
      expect(reply).toMatchObject({ status: 200, headers: { 'cache-control': 'no-store' } });
      expect(bodyOf(reply)).toEqual({ success: true, found: true });
      expect(await v1.services.store.sql.all('SELECT email FROM subscribers')).toEqual([]);
      expect(bodyOf(await erase(key, '{"email":"ada@example.com"}'))).toEqual({ success: true, found: false });
      expect(await v1.services.store.sql.all('SELECT action, detail, actor, actor_name FROM admin_audit')).toEqual([
        { action: 'delete-subscriber', detail: '…@Example.com', actor: `key:${id}`, actor_name: 'key eraser' },
      ]);
    },
  );

  test.skipIf(!engine.available)('erasure takes a small JSON object only: 415 for another type, 400 for no address, not JSON, or past 4 KiB', async () => {
    const { key } = await v1.makeKey('eraser', 'write', ['newsletter']);
    expect(bodyOf(await erase(key, 'email=a@example.com', 'application/x-www-form-urlencoded'))).toMatchObject({ code: 'unsupported_type' });
    expect((await erase(key, 'email=a@example.com', 'application/x-www-form-urlencoded')).status).toBe(415);
    for (const body of ['{}', '{"email": 3}', 'nope', '["a@example.com"]', JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(5000) })]) {
      const reply = await erase(key, body);
      expect(reply.status, body.slice(0, 20)).toBe(400);
      expect(bodyOf(reply), body.slice(0, 20)).toMatchObject({ code: 'bad_request' });
    }
  });
});
