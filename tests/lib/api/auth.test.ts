/**
 * Bearer authentication of /api/v1 (issue 42, api/auth.ts `withKey`), on the wire through the
 * pipeline with a route table of the test's own (the API's routes come with step S9b): the 401
 * kinds and their WWW-Authenticate, the 403 of a read key on a write route, the 429 per key (and
 * another key unaffected), and the 429 per client after 30 failed authentications, before any
 * lookup; and both limits shared by two instances through Redis. The clock is the test’s
 * (decision 0215): only `Date` is faked, never a sleep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import type { KeyActor } from '../../../packages/site-forms/src/lib/access/permissions.ts';
import { createApiAccess, withKey } from '../../../packages/site-forms/src/lib/api/auth.ts';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type Reply, runPipeline } from '../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import { findTarget, routeTable } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';
import { connectRedis } from '../../../packages/site-forms/src/lib/redis.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';

const T0 = new Date('2030-01-01T10:00:00.000Z');
const JSON_TYPE = 'application/json; charset=utf-8';

let services: Services;
let dataDir: string;
const seen: Array<{ actor: KeyActor; id: string }> = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
  dataDir = mkdtempSync(join(tmpdir(), 'api-auth-'));
  // RATE_LIMIT_MAX=0 turns the forms' limits off, never the API's.
  const config = requireConfig({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', API_RATE_LIMIT_PER_MINUTE: '3' });
  services = createServices(config, createLogger({ level: 'silent' }));
  seen.length = 0;
});
afterEach(async () => {
  vi.useRealTimers();
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const table = routeTable([
  {
    path: '/api/v1/things/{id}',
    kind: 'api',
    methods: {
      GET: withKey(
        (_, __, { actor, params }) => {
          seen.push({ actor, id: params.id! });
          return { kind: 'data', status: 200, body: { success: true, id: params.id } };
        },
        { scope: 'read' },
      ),
      DELETE: withKey(
        (_, __, { actor, params }) => {
          seen.push({ actor, id: params.id! });
          return { kind: 'data', status: 200, body: { success: true, deleted: true } };
        },
        { scope: 'write' },
      ),
    },
  },
]);

function call(method: string, authorization?: string, socketAddress = '192.0.2.1'): Promise<Reply> {
  const request = new Request('http://site.test/api/v1/things/7', {
    method,
    headers: { host: 'site.test', ...(authorization !== undefined && { authorization }) },
  });
  const target = findTarget('/api/v1/things/7', table);
  if (target.kind === 'elsewhere') throw new Error('not a pipeline path');
  return runPipeline({ request, target, socketAddress, services });
}

const bodyOf = (reply: Reply) => ('body' in reply && typeof reply.body === 'string' ? (JSON.parse(reply.body) as unknown) : undefined);

async function makeKey(name: string, scope: 'read' | 'write', forms: string[] | null = null): Promise<string> {
  const made = await services.api.keys.create({ name, scope, forms, createdBy: 'cli' }, new Date());
  if (!made.ok) throw new Error('not made');
  return made.key;
}

describe('a request without a usable key', () => {
  test('without Authorization: 401 missing_key, WWW-Authenticate with the realm only, no-store; the handler is not called', async () => {
    const reply = await call('GET');
    expect(reply).toMatchObject({
      kind: 'answer',
      status: 401,
      headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="site-forms"' },
    });
    expect(bodyOf(reply)).toEqual({
      success: false,
      error: 'This address needs an API key: send it as Authorization: Bearer <key>.',
      code: 'missing_key',
    });
    expect(seen).toEqual([]);
  });

  test.each([
    ['another scheme', () => 'Basic dXNlcjpwYXNz'],
    ['a token that is no key', () => 'Bearer not-a-key'],
    ['an unknown key', () => `Bearer sfk_abcdefghijkl_${'A'.repeat(43)}`],
  ])('%s: 401 invalid_key with error="invalid_token"', async (_, header) => {
    await makeKey('real', 'read');
    const reply = await call('GET', header());
    expect(reply).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm="site-forms", error="invalid_token"' } });
    expect(bodyOf(reply)).toEqual({ success: false, error: 'The API key is not valid: it is unknown, revoked or malformed.', code: 'invalid_key' });
    expect(seen).toEqual([]);
  });

  test('a revoked key: 401 at the next request', async () => {
    const key = await makeKey('ci', 'read');
    await expect(call('GET', `Bearer ${key}`).then((reply) => reply.status)).resolves.toBe(200);
    await services.api.keys.revoke('ci', new Date());
    const reply = await call('GET', `Bearer ${key}`);
    expect(reply).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm="site-forms", error="invalid_token"' } });
    expect(bodyOf(reply)).toMatchObject({ code: 'invalid_key' });
  });
});

describe('a request with a key', () => {
  test('the handler receives the key as its actor; the scheme is read in any case', async () => {
    const key = await makeKey('reader', 'read', ['contact']);
    const reply = await call('GET', `bearer ${key}`);
    expect(reply).toMatchObject({ status: 200, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' } });
    expect(bodyOf(reply)).toEqual({ success: true, id: '7' });
    expect(seen).toEqual([
      { actor: { kind: 'key', id: expect.any(Number), name: 'reader', keyScope: 'read', scope: { all: false, forms: ['contact'] } }, id: '7' },
    ]);
  });

  test('a read key on a write route: 403 insufficient_scope, the handler not called; a write key passes', async () => {
    const reader = await makeKey('reader', 'read');
    const writer = await makeKey('writer', 'write');
    const reply = await call('DELETE', `Bearer ${reader}`);
    expect(reply).toMatchObject({
      status: 403,
      headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="site-forms", error="insufficient_scope"' },
    });
    expect(bodyOf(reply)).toEqual({ success: false, error: 'This key may only read: this request needs a key that may write.', code: 'insufficient_scope' });
    expect(seen).toEqual([]);
    await expect(call('DELETE', `Bearer ${writer}`).then((answer) => answer.status)).resolves.toBe(200);
    await expect(call('GET', `Bearer ${writer}`).then((answer) => answer.status)).resolves.toBe(200);
  });
});

describe('the limits', () => {
  test('per key: API_RATE_LIMIT_PER_MINUTE requests a minute, then 429 with Retry-After; another key is unaffected; the next minute it passes again', async () => {
    const busy = await makeKey('busy', 'read');
    const calm = await makeKey('calm', 'read');
    for (let i = 0; i < 3; i++) expect((await call('GET', `Bearer ${busy}`)).status).toBe(200);
    vi.setSystemTime(T0.getTime() + 59_000);
    const refused = await call('GET', `Bearer ${busy}`);
    expect(refused).toMatchObject({ status: 429, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'retry-after': '1' } });
    expect(bodyOf(refused)).toEqual({
      success: false,
      error: 'Too many requests with this key: try again after the seconds Retry-After gives.',
      code: 'rate_limited',
    });
    expect((await call('GET', `Bearer ${calm}`, '198.51.100.7')).status).toBe(200);
    expect((await call('GET', `Bearer ${calm}`)).status).toBe(200);
    expect(seen.map((call) => call.actor.name)).toEqual(['busy', 'busy', 'busy', 'calm', 'calm']);
    vi.setSystemTime(T0.getTime() + 60_000);
    expect((await call('GET', `Bearer ${busy}`)).status).toBe(200);
  });

  test('per client: after 30 failed authentications in 15 minutes, 429 before any lookup, even with a good key; another client is unaffected', async () => {
    const key = await makeKey('good', 'read');
    const wrong = `Bearer sfk_abcdefghijkl_${'B'.repeat(43)}`;
    for (let i = 0; i < 30; i++) expect((await call('GET', wrong)).status).toBe(401);
    // Requests without any key are no guess: they never count.
    for (let i = 0; i < 5; i++) expect((await call('GET', undefined, '192.0.2.2')).status).toBe(401);
    const find = vi.spyOn(services.api.keys, 'find');
    vi.setSystemTime(T0.getTime() + 15 * 60_000 - 1_000);
    const refused = await call('GET', `Bearer ${key}`);
    expect(refused).toMatchObject({ status: 429, headers: { 'retry-after': '1', 'cache-control': 'no-store' } });
    expect(bodyOf(refused)).toEqual({
      success: false,
      error: 'Too many failed authentications from this address: try again after the seconds Retry-After gives.',
      code: 'rate_limited',
    });
    expect(find).not.toHaveBeenCalled();
    expect((await call('GET', `Bearer ${key}`, '192.0.2.2')).status).toBe(200);
    vi.setSystemTime(T0.getTime() + 15 * 60_000);
    expect((await call('GET', `Bearer ${key}`)).status).toBe(200);
  });
});

describe.skipIf(!redisAvailable)('the limits shared through REDIS_URL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  }, 60_000);
  afterAll(() => server?.stop());

  test('two instances count one key, and one client’s failed authentications, once', async () => {
    const clients = [connectRedis(server.url, silentLogger), connectRedis(server.url, silentLogger)];
    // Connected: until then the limits are the memory's, which this test must not read.
    await Promise.all(clients.map((client) => new Promise((resolve) => client.once('ready', resolve))));
    // The limits alone: no key is looked up here.
    const [one, two] = clients.map((client) => createApiAccess({} as Sql, { apiRateLimitPerMinute: 3 }, silentLogger, client).limits) as [
      ReturnType<typeof createApiAccess>['limits'],
      ReturnType<typeof createApiAccess>['limits'],
    ];
    const verdicts = [await one.request(7), await two.request(7), await one.request(7), await two.request(7)];
    expect(verdicts.map((verdict) => verdict.ok)).toEqual([true, true, true, false]);
    await expect(one.request(8)).resolves.toEqual({ ok: true });

    for (let i = 0; i < 15; i++) {
      await one.failed('203.0.113.9');
      await two.failed('203.0.113.9');
    }
    await expect(one.mayTry('203.0.113.9')).resolves.toMatchObject({ ok: false, retryAfterSeconds: expect.any(Number) });
    await expect(two.mayTry('203.0.113.9')).resolves.toMatchObject({ ok: false });
    await expect(two.mayTry('203.0.113.10')).resolves.toEqual({ ok: true });
    for (const client of clients) client.disconnect();
  });
});
