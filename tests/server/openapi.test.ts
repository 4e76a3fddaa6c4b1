/**
 * docs/api/openapi.yaml is the HTTP contract: a valid OpenAPI 3.1 document, naming every route
 * under /api/, and every answer the built server gives below is checked against it, so the
 * document cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { createApiKeys } from '../../packages/site-forms/src/lib/api/keys.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { recordFiles } from '../../packages/site-forms/src/lib/files/files.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { ROUTES } from '../../packages/site-forms/src/lib/pipeline/routes.ts';
import { TEST_DATABASE } from '../support/stores.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';

const DOCUMENT = new URL('../../docs/api/openapi.yaml', import.meta.url);
type Operation = { responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, { required?: boolean }> }> };
type Spec = { paths: Record<string, Record<string, Operation>> };
const spec = parse(readFileSync(DOCUMENT, 'utf8')) as Spec;

// The whole document as one schema, so that its own $refs resolve; OpenAPI's keywords are not JSON Schema's.
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(spec as object, 'api');
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** The operation's documented response for `status`, its own `$ref` followed. */
function documented(path: string, method: string, status: number) {
  let response = spec.paths[path]?.[method]?.responses[String(status)] as Record<string, unknown> | undefined;
  if (response && typeof response.$ref === 'string') {
    const name = response.$ref.split('/').pop()!;
    response = (spec as unknown as { components: { responses: Record<string, Record<string, unknown>> } }).components.responses[name];
  }
  return response as Operation['responses'][string] | undefined;
}

/** Checks one real answer against the document: a documented status, JSON, the required headers, and a body the schema accepts. */
async function expectDocumented(path: string, method: string, response: Response): Promise<void> {
  const answer = documented(path, method, response.status);
  expect(answer, `${method.toUpperCase()} ${path} ${response.status} is not in docs/api/openapi.yaml`).toBeDefined();
  for (const [name, header] of Object.entries(answer!.headers ?? {})) {
    if ((header as { required?: boolean }).required || '$ref' in (header as object)) expect(response.headers.get(name), `${name} header`).not.toBeNull();
  }
  if (method === 'options') return;
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body: unknown = await response.json();
  const inline = spec.paths[path]![method]!.responses[String(response.status)]!;
  const ref =
    '$ref' in inline
      ? `api#/components/responses/${(inline as { $ref: string }).$ref.split('/').pop()}/content/application~1json/schema`
      : `api#/paths/${pointer(path)}/${method}/responses/${response.status}/content/application~1json/schema`;
  const validate = ajv.compile({ $ref: ref });
  expect(validate(body), `${method.toUpperCase()} ${path} ${response.status}: ${JSON.stringify(body)} ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/**
 * The document's path of a route of the table: a templated route's pattern is OpenAPI's path as
 * it is (`/api/v1/messages/{id}`, the parameters named alike); the owner's forms are one
 * templated path (decision 0131), and the file links' route is the one whose path ends in a value
 * (decision 0180).
 */
function documentedPath(routePath: string): string {
  return routePath.replace(/^\/api\/forms\/[^/{}]+$/, '/api/forms/{name}').replace(/^\/api\/files\/$/, '/api/files/{id}');
}

const CONTACT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.' };

describe('the document', () => {
  test('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(readFileSync(DOCUMENT, 'utf8'));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('names every route under /api/ the server answers, with its methods, and no other', () => {
    // The owner's forms are one templated path, whether or not forms.config.ts lists any (decision 0131).
    const served = [
      ...new Set([
        ...ROUTES.filter((route) => route.path.startsWith('/api/')).map(
          (route) => `${documentedPath(route.path)} ${Object.keys(route.methods).sort().join(',')}`,
        ),
        '/api/forms/{name} POST',
      ]),
    ].sort();
    const inDocument = Object.entries(spec.paths)
      .map(
        ([path, operations]) =>
          `${path} ${Object.keys(operations)
            .filter((m) => m !== 'options')
            .map((m) => m.toUpperCase())
            .sort()
            .join(',')}`,
      )
      .sort();
    expect(inDocument).toEqual(served);
  });

  test.each([
    ['/api/v1/messages/{id}', '/api/v1/messages/{id}'],
    ['/api/v1/messages/{id}/spam', '/api/v1/messages/{id}/spam'],
    ['/api/forms/{name}', '/api/forms/{name}'],
    ['/api/forms/booking', '/api/forms/{name}'],
    // A templated route keeps its parameter's name, which the document must use too.
    ['/api/forms/{form}', '/api/forms/{form}'],
    ['/api/files/', '/api/files/{id}'],
    ['/api/contact', '/api/contact'],
  ])('the route %s is documented as %s', (routePath, path) => {
    expect(documentedPath(routePath)).toBe(path);
  });
});

describe('the built server answers as the document says', () => {
  let site: Site;
  let limited: Site;
  let mailchimp: FakeHttpServer;
  let withMailchimp: Site;
  beforeAll(async () => {
    mailchimp = await startFakeHttpServer(replyJson(200, { id: 'list' }));
    [site, limited, withMailchimp] = await Promise.all([
      startSite({ SPAM_FILTER: 'on', ALLOWED_ORIGINS: 'https://partner.example' }),
      // One post a client, and one API request a key and minute.
      startSite({ RATE_LIMIT_MAX: '1', API_RATE_LIMIT_PER_MINUTE: '1' }),
      // Double opt-in that Mailchimp runs itself: no mail server needed.
      startSite({ MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'list', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`, NEWSLETTER_DOUBLE_OPT_IN: 'true' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([site.stop(), limited.stop(), withMailchimp.stop()]);
    await mailchimp.close();
  });

  const raw = (url: string, body: string, headers: Record<string, string>) => fetch(url, { method: 'POST', body, headers });

  test.each<[string, (s: { site: Site; limited: Site }) => Promise<Response>, number]>([
    ['a valid message (held by the filter, answered alike)', ({ site }) => postForm(`${site.url}/api/contact`, CONTACT), 200],
    ['invalid fields', ({ site }) => postForm(`${site.url}/api/contact`, { name: 'A', email: 'x', message: 'short', honeypot: 'bot' }), 400],
    [
      'a form in Latin-1',
      ({ site }) => raw(`${site.url}/api/contact`, 'name=Zo%EB', { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }),
      400,
    ],
    ['a post from another website', ({ site }) => postForm(`${site.url}/api/contact`, CONTACT, { origin: 'https://evil.example' }), 403],
    ['a GET', ({ site }) => fetch(`${site.url}/api/contact`), 405],
    ['a body over 64 KiB', ({ site }) => raw(`${site.url}/api/contact`, 'x'.repeat(70_000), { 'content-type': 'application/x-www-form-urlencoded' }), 413],
    ['JSON', ({ site }) => raw(`${site.url}/api/contact`, '{}', { 'content-type': 'application/json' }), 415],
    [
      'a second post past a budget of one',
      async ({ limited }) => {
        await postForm(`${limited.url}/api/contact`, CONTACT);
        return postForm(`${limited.url}/api/contact`, CONTACT);
      },
      429,
    ],
  ])('POST /api/contact, %s', async (_, send, status) => {
    const response = await send({ site, limited });
    expect(response.status).toBe(status);
    await expectDocumented('/api/contact', 'post', response);
  });

  test.each<[string, () => Promise<Response>, number]>([
    ['a forged token', () => postForm(`${site.url}/api/contact/confirm`, { token: `1.9999999999.${'A'.repeat(43)}` }), 400],
    ['no token', () => postForm(`${site.url}/api/contact/confirm`, {}), 400],
    ['a post from another website', () => postForm(`${site.url}/api/contact/confirm`, { token: 'x' }, { origin: 'https://evil.example' }), 403],
    ['a GET', () => fetch(`${site.url}/api/contact/confirm`), 405],
  ])('POST /api/contact/confirm, %s', async (_, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    await expectDocumented('/api/contact/confirm', 'post', response);
  });

  test('POST /api/contact/confirm with the token a person without JavaScript was given: 200, and again 200', async () => {
    const navigation = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'same-origin' };
    // The page that asks is shown from a draft, after a 303 (decision 0133); fetch follows it as a browser does.
    const asked = await fetch(`${site.url}/api/contact`, { method: 'POST', body: new URLSearchParams(CONTACT), headers: { ...navigation, origin: site.url } });
    expect(asked.redirected).toBe(true);
    expect(asked.status).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(await asked.text())?.[1];
    expect(token).toMatch(/^\d+\.\d+\.[\w-]{43}$/);
    for (let press = 0; press < 2; press++) {
      const response = await postForm(`${site.url}/api/contact/confirm`, { token: token! });
      expect(response.status).toBe(200);
      await expectDocumented('/api/contact/confirm', 'post', response);
    }
  });

  test.each<[string, string, () => Promise<Response>, number]>([
    ['/api/newsletter/confirm', 'a token that is not ours', () => postForm(`${site.url}/api/newsletter/confirm`, { token: 'nope' }), 400],
    ['/api/newsletter/unsubscribe', 'a token that is not ours', () => postForm(`${site.url}/api/newsletter/unsubscribe?token=nope`, {}), 400],
    ['/api/newsletter/confirm', 'a GET', () => fetch(`${site.url}/api/newsletter/confirm`), 405],
  ])('POST %s, %s', async (path, _, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    await expectDocumented(path, 'post', response);
  });

  test('OPTIONS /api/contact from an allowed origin: 204', async () => {
    const response = await fetch(`${site.url}/api/contact`, {
      method: 'OPTIONS',
      headers: { origin: 'https://partner.example', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    await expectDocumented('/api/contact', 'options', response);
  });

  test.each<[string, () => Promise<Response>, number]>([
    ['a valid address on the local list', () => postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' }), 200],
    [
      'with double opt-in: the address awaits its confirmation',
      async () => {
        mailchimp.reply(replyJson(200, { id: 'm1', status: 'pending' }));
        const response = await postForm(`${withMailchimp.url}/api/newsletter`, { email: 'ada@example.com' });
        await expect(response.clone().json()).resolves.toEqual({ success: true, awaitingConfirmation: true });
        return response;
      },
      200,
    ],
    ['an invalid address', () => postForm(`${site.url}/api/newsletter`, { email: 'ada@' }), 400],
    ['JSON', () => raw(`${site.url}/api/newsletter`, '{}', { 'content-type': 'application/json' }), 415],
    ['a GET', () => fetch(`${site.url}/api/newsletter`), 405],
    [
      'a provider that refuses the key',
      async () => {
        mailchimp.reply(replyJson(401, { title: 'API Key Invalid' }));
        return postForm(`${withMailchimp.url}/api/newsletter`, { email: 'ada@example.com' });
      },
      502,
    ],
    [
      "a provider that stays busy (the spec's failure: nothing is stored)",
      async () => {
        mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
        return postForm(`${withMailchimp.url}/api/newsletter`, { email: 'ada@example.com' });
      },
      503,
    ],
  ])('POST /api/newsletter, %s', async (_, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    await expectDocumented('/api/newsletter', 'post', response);
  });

  test.each<[string, string, number]>([
    ['/api/challenge', 'get', 200],
    ['/api/health', 'get', 200],
  ])('GET %s: %i', async (path, method, status) => {
    const response = await fetch(`${site.url}${path}`);
    expect(response.status).toBe(status);
    await expectDocumented(path, method, response);
  });

  test('POST /api/health: 405 with Allow', async () => {
    const response = await fetch(`${site.url}/api/health`, { method: 'POST' });
    expect(response.status).toBe(405);
    await expectDocumented('/api/health', 'get', response);
  });

  describe('/api/v1 (issue 42): every answer of each operation', () => {
    let store: Store;
    let keys: Record<'read' | 'write' | 'contact' | 'limited', string>;
    let message: number;
    let quote: number;
    beforeAll(async () => {
      // The keys and messages are made in the server's own database, as `npm run admin` would.
      store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: site.dataDir }, createLogger({ level: 'silent' }));
      await store.ready;
      const apiKeys = createApiKeys(store.sql);
      const make = async (name: string, scope: 'read' | 'write', forms: string[] | null, on = apiKeys) => {
        const made = await on.create({ name, scope, forms, createdBy: 'cli' }, new Date());
        if (!made.ok) throw new Error(name);
        return made.key;
      };
      const limitedStore = openStore({ ...TEST_DATABASE, url: undefined, dataDir: limited.dataDir }, createLogger({ level: 'silent' }));
      await limitedStore.ready;
      keys = {
        read: await make('reader', 'read', null),
        write: await make('writer', 'write', ['contact', 'newsletter']),
        contact: await make('contact', 'read', ['contact']),
        limited: await make('limited', 'read', null, createApiKeys(limitedStore.sql)),
      };
      await limitedStore.close();
      const received = (form: string) =>
        store.messages.receive({ name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', held: undefined, form });
      message = (await received('contact')).id;
      quote = (await received('quote')).id;
      await received('contact');
      await store.sql.transaction((tx) =>
        recordFiles(
          tx,
          message,
          [{ id: 'a'.repeat(32), field: 'plan', name: 'plan.pdf', size: 10, type: 'application/pdf', storageKey: 'x' }],
          new Date().toISOString(),
        ),
      );
      await store.sql.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?), (?, ?)', [
        'a@example.com',
        new Date().toISOString(),
        'b@example.com',
        new Date().toISOString(),
      ]);
    });
    afterAll(async () => {
      await store.close();
    });

    const api = (path: string, key?: string, init: RequestInit = {}) =>
      fetch(`${site.url}${path}`, { ...init, headers: { ...(key && { authorization: `Bearer ${key}` }), ...(init.headers as Record<string, string>) } });
    const json = { 'content-type': 'application/json' };

    test.each<[string, string, string, () => Promise<Response>, number]>([
      ['/api/v1/messages', 'get', 'a page', () => api('/api/v1/messages?limit=2', keys.read), 200],
      [
        '/api/v1/messages',
        'get',
        'the next page by cursor',
        async () => {
          const first = (await (await api('/api/v1/messages?limit=2', keys.read)).json()) as { next: string };
          return api(`/api/v1/messages?limit=2&cursor=${first.next}`, keys.read);
        },
        200,
      ],
      ['/api/v1/messages', 'get', 'a malformed cursor', () => api('/api/v1/messages?cursor=%7B', keys.read), 400],
      ['/api/v1/messages', 'get', 'no key', () => api('/api/v1/messages'), 401],
      ['/api/v1/messages', 'get', 'an unknown key', () => api('/api/v1/messages', `sfk_abcdefghijkl_${'A'.repeat(43)}`), 401],
      ['/api/v1/messages', 'get', 'a form outside the key’s', () => api('/api/v1/messages?form=quote', keys.contact), 404],
      ['/api/v1/messages', 'get', 'a POST', () => api('/api/v1/messages', keys.read, { method: 'POST' }), 405],
      [
        '/api/v1/messages',
        'get',
        'a key past its budget (one a minute)',
        async () => {
          await fetch(`${limited.url}/api/v1/messages`, { headers: { authorization: `Bearer ${keys.limited}` } });
          return fetch(`${limited.url}/api/v1/messages`, { headers: { authorization: `Bearer ${keys.limited}` } });
        },
        429,
      ],
      ['/api/v1/messages/{id}', 'get', 'a message with a file', () => api(`/api/v1/messages/${message}`, keys.read), 200],
      ['/api/v1/messages/{id}', 'get', 'another form’s message', () => api(`/api/v1/messages/${quote}`, keys.contact), 404],
      ['/api/v1/messages/{id}', 'delete', 'a read key', () => api(`/api/v1/messages/${message}`, keys.read, { method: 'DELETE' }), 403],
      ['/api/v1/messages/{id}/spam', 'post', 'spam by a write key', () => api(`/api/v1/messages/${message}/spam`, keys.write, { method: 'POST' }), 200],
      [
        '/api/v1/messages/{id}/not-spam',
        'post',
        'not spam by a write key',
        () => api(`/api/v1/messages/${message}/not-spam`, keys.write, { method: 'POST' }),
        200,
      ],
      ['/api/v1/messages/{id}/spam', 'post', 'a read key', () => api(`/api/v1/messages/${message}/spam`, keys.read, { method: 'POST' }), 403],
      ['/api/v1/messages/{id}/spam', 'post', 'another form’s message', () => api(`/api/v1/messages/${quote}/spam`, keys.write, { method: 'POST' }), 404],
      [
        '/api/v1/messages/{id}/spam',
        'post',
        'a POST from another website',
        () => api(`/api/v1/messages/${message}/spam`, keys.write, { method: 'POST', headers: { origin: 'https://evil.example' } }),
        403,
      ],
      ['/api/v1/messages/{id}', 'delete', 'a write key', () => api(`/api/v1/messages/${message}`, keys.write, { method: 'DELETE' }), 200],
      ['/api/v1/messages/{id}', 'delete', 'a message gone', () => api(`/api/v1/messages/${message}`, keys.write, { method: 'DELETE' }), 404],
      ['/api/v1/subscribers', 'get', 'a page', () => api('/api/v1/subscribers?limit=1', keys.read), 200],
      ['/api/v1/subscribers', 'get', 'a limit past 100', () => api('/api/v1/subscribers?limit=500', keys.read), 400],
      ['/api/v1/subscribers', 'get', 'a key without newsletter', () => api('/api/v1/subscribers', keys.contact), 404],
      [
        '/api/v1/subscribers/erase',
        'post',
        'an address',
        () => api('/api/v1/subscribers/erase', keys.write, { method: 'POST', headers: json, body: '{"email":"a@example.com"}' }),
        200,
      ],
      [
        '/api/v1/subscribers/erase',
        'post',
        'no address',
        () => api('/api/v1/subscribers/erase', keys.write, { method: 'POST', headers: json, body: '{}' }),
        400,
      ],
      [
        '/api/v1/subscribers/erase',
        'post',
        'a form',
        () => api('/api/v1/subscribers/erase', keys.write, { method: 'POST', body: new URLSearchParams({ email: 'a@example.com' }) }),
        415,
      ],
      [
        '/api/v1/subscribers/erase',
        'post',
        'a body over 64 KiB',
        () => api('/api/v1/subscribers/erase', keys.write, { method: 'POST', headers: json, body: 'x'.repeat(70_000) }),
        413,
      ],
      [
        '/api/v1/subscribers/erase',
        'post',
        'a read key',
        () => api('/api/v1/subscribers/erase', keys.read, { method: 'POST', headers: json, body: '{"email":"b@example.com"}' }),
        403,
      ],
      ['/api/v1/forms', 'get', 'the forms', () => api('/api/v1/forms', keys.read), 200],
      [
        '/api/v1/forms',
        'get',
        'a revoked key',
        async () => {
          await createApiKeys(store.sql).revoke('contact', new Date());
          return api('/api/v1/forms', keys.contact);
        },
        401,
      ],
    ])('%s %s, %s', async (path, method, _, send, status) => {
      const response = await send();
      expect(response.status).toBe(status);
      await expectDocumented(path, method, response);
    });
  });

  test.each(['/api/contact/', '/API/contact', '/api/unknown', '//api/contact'])('%s is the documented JSON 404 of any other path under /api/', async (path) => {
    const response = await fetch(`${site.url}${path}`, { method: 'POST' });
    expect(response.status).toBe(404);
    await expect(response.json()).resolves.toEqual({ success: false, error: 'Not found' });
  });
});
