import { describe, expect, test, vi } from 'vitest';
import { createServices } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { failure, type Outcome } from '../../../packages/site-forms/src/lib/http/outcome.ts';
import { createLogger, limitClientLines } from '../../../packages/site-forms/src/lib/log.ts';
import type { LimitedRoute } from '../../../packages/site-forms/src/lib/rate-limit.ts';
import type { FormPages, FormView } from '../../../packages/site-forms/src/lib/pipeline/form-view.ts';
import { type Reply, runPipeline } from '../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import { findTarget, type Route, type RouteHandler } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

import { NAVIGATION, usePipelineServices, VALID_CONTACT } from '../../support/pipeline-services.ts';

/**
 * The pipeline's road around a handler, in process: `_next` and the link back (decision 0167),
 * the draft's address, the context a handler is given and the timing of the log line; the real
 * services over SQLite in a temporary folder, two accepted posts per client and route.
 */
const site = usePipelineServices('onward-');
const VALID = VALID_CONTACT;
const PAGES: FormPages = { form: 'quote', thanks: '/thank-you/quote/', fields: ['name'], page: '/quote' };

function request(method: string, path: string, options: { fields?: Record<string, string>; headers?: Record<string, string> } = {}): Request {
  const body = options.fields ? new URLSearchParams(options.fields) : undefined;
  return new Request(`http://site.test${path}`, { method, body, headers: { host: 'site.test', ...options.headers } });
}

function run(req: Request): Promise<Reply> {
  const target = findTarget(new URL(req.url).pathname);
  if (target.kind === 'elsewhere') throw new Error('not a pipeline path');
  return runPipeline({ request: req, target, socketAddress: '192.0.2.1', services: site.services });
}

function runRoute(route: Route, req: Request): Promise<Reply> {
  return runPipeline({ request: req, target: { kind: 'route', route }, socketAddress: '192.0.2.9', services: site.services });
}

const events = (event: string) => site.logs.filter((line) => line.event === event);

/** A refused post of the contact form by a person, followed to its draft as the browser does. */
async function refusedPage(headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Reply> {
  const refused = await run(request('POST', '/api/contact', { fields: { ...VALID, name: 'A', ...fields }, headers: { ...NAVIGATION, ...headers } }));
  expect(refused.headers.location).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
  return run(request('GET', refused.headers.location!, { headers: NAVIGATION }));
}

/** A person's confirmation token, from a post held for confirmation (no proof of work). */
async function confirmationToken(): Promise<string> {
  const asked = (await refusedPage({}, { name: VALID.name })) as FormView;
  expect(asked.status).toBe(200);
  return asked.confirm!.token;
}

describe('_next: where a person’s success goes, and the link back of a refusal (decision 0167)', () => {
  test('a success is sent to the allowed page _next names, and nothing is logged about it', async () => {
    const token = await confirmationToken();
    const confirmed = await run(request('POST', '/api/contact/confirm', { fields: { token, _next: 'https://partner.example/thanks' }, headers: NAVIGATION }));
    expect(confirmed).toMatchObject({ kind: 'answer', status: 303, headers: { location: 'https://partner.example/thanks' } });
    expect(events('form.next_ignored')).toEqual([]);
  });

  test('a _next on no allowed origin is ignored with a warning naming the route, not the value', async () => {
    const token = await confirmationToken();
    const confirmed = await run(request('POST', '/api/contact/confirm', { fields: { token, _next: 'https://evil.example/x' }, headers: NAVIGATION }));
    expect(confirmed).toMatchObject({ status: 303, headers: { location: '/thank-you/contact/' } });
    expect(events('form.next_ignored')).toEqual([expect.objectContaining({ level: 'warn', route: '/api/contact/confirm' })]);
    expect(JSON.stringify(site.logs)).not.toContain('evil.example');
  });

  test('a post without _next warns of nothing', async () => {
    await confirmationToken();
    expect(events('form.next_ignored')).toEqual([]);
  });

  test('a script’s refused post is answered in JSON: its _next is not looked at', async () => {
    const reply = await run(request('POST', '/api/contact', { fields: { ...VALID, name: 'A', _next: 'https://evil.example/x' } }));
    expect(reply).toMatchObject({ kind: 'answer', status: 400 });
    expect(events('form.next_ignored')).toEqual([]);
  });

  test('a refusal’s page carries _next on, and links back to the page the Referer names', async () => {
    const page = await refusedPage({ referer: 'https://partner.example/contact.html' }, { _next: 'https://partner.example/thanks' });
    expect(page).toMatchObject({ kind: 'form-view', status: 400, next: 'https://partner.example/thanks', back: 'https://partner.example/contact.html' });
  });

  test('without a Referer the link back is the home of _next’s origin', async () => {
    const page = await refusedPage({}, { _next: 'https://partner.example/thanks' });
    expect(page).toMatchObject({ kind: 'form-view', next: 'https://partner.example/thanks', back: 'https://partner.example/' });
  });

  test('a Referer alone on an allowed origin is the link back, with no _next', async () => {
    const page = (await refusedPage({ referer: 'https://partner.example/contact.html' })) as FormView;
    expect(page).toMatchObject({ kind: 'form-view', back: 'https://partner.example/contact.html' });
    expect(page.next).toBeUndefined();
  });
});

describe('the draft’s address is a GET’s or a HEAD’s', () => {
  test('a HEAD of a form’s address with an unknown draft is the empty form’s redirect, and the unknown draft is no error', async () => {
    await expect(run(request('HEAD', `/api/contact?draft=${'A'.repeat(32)}`, { headers: NAVIGATION }))).resolves.toEqual({
      kind: 'answer',
      status: 303,
      headers: { location: '/contact', 'cache-control': 'no-store' },
      body: null,
    });
    expect(events('form.draft_unreadable')).toEqual([]);
  });

  test('a person’s post to an address with ?draft= is a post: handled, and redirected to a draft of its own', async () => {
    const reply = await run(request('POST', `/api/contact?draft=${'A'.repeat(32)}`, { fields: { ...VALID, name: 'A' }, headers: NAVIGATION }));
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
    expect(reply.headers.location).not.toBe(`/api/contact?draft=${'A'.repeat(32)}`);
    expect(events('form.request')).toEqual([expect.objectContaining({ status: 400, outcome: 'invalid' })]);
  });
});

describe('the context a handler is given', () => {
  /** A handler that answers, as a refusal's text, the context it was given. */
  const echo: RouteHandler = (_, __, context) => failure(400, `ip ${context.ip} person ${context.person}`);
  const route = (limit: LimitedRoute | undefined, pages?: FormPages): Route => ({
    path: '/api/echo',
    kind: 'form',
    ...(limit && { limit }),
    ...(pages && { pages }),
    methods: { POST: echo },
  });

  test.each([
    ['a route without a budget', undefined],
    ['a route with a budget', 'form:echo' as const],
  ])('%s: a script is no person, and its client is the socket’s', async (_, limit) => {
    await expect(runRoute(route(limit), request('POST', '/api/echo', { fields: VALID }))).resolves.toMatchObject({
      status: 400,
      body: '{"success":false,"error":"ip 192.0.2.9 person false"}',
    });
  });

  test('a person’s post to a route without a budget: the page again, the handler told it is a person', async () => {
    const reply = await runRoute(route(undefined, PAGES), request('POST', '/api/echo', { fields: VALID, headers: NAVIGATION }));
    expect(reply.status).toBe(303);
    const page = await runRoute(route(undefined, PAGES), request('GET', reply.headers.location!, { headers: NAVIGATION }));
    expect(page).toMatchObject({ kind: 'form-view', status: 400, formError: 'ip 192.0.2.9 person true' });
  });

  test('a route without a budget is never counted: three accepted posts of one client all pass', async () => {
    const accepting: Route = { path: '/api/free', kind: 'form', methods: { POST: (): Outcome => ({ kind: 'accepted' }) } };
    for (let post = 0; post < 3; post++) {
      await expect(runRoute(accepting, request('POST', '/api/free', { fields: VALID }))).resolves.toMatchObject({ status: 200 });
    }
  });
});

describe('the log line of a form post', () => {
  test.each([
    [60.04, 60],
    [60.05, 60.1],
    [0.04, 0],
  ])('a handler that takes %d ms on the clock logs a duration of %d ms: its time, to a tenth', async (takes, logged) => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const slow: Route = {
        path: '/api/slow',
        kind: 'form',
        limit: 'form:slow',
        methods: {
          POST: (): Outcome => {
            vi.advanceTimersByTime(takes);
            return failure(400, 'no');
          },
        },
      };
      await runRoute(slow, request('POST', '/api/slow', { fields: VALID }));
    } finally {
      vi.useRealTimers();
    }
    expect(events('form.request').map((line) => line.durationMs)).toEqual([logged]);
  });
});

describe('a GET of a form’s address (no draft) is no person’s page', () => {
  test('addressed to another site’s name: the JSON 421 of the spec, even from a browser’s navigation', async () => {
    const elsewhere = createServices(
      requireConfig({ DATA_DIR: site.dataDir, PUBLIC_URL: 'https://forms.example' }),
      createLogger({ level: 'error', write: () => {} }),
    );
    try {
      const req = request('GET', '/api/contact', { headers: { ...NAVIGATION, host: 'other.example' } });
      const target = findTarget('/api/contact');
      if (target.kind === 'elsewhere') throw new Error('not a pipeline path');
      await expect(runPipeline({ request: req, target, socketAddress: '192.0.2.1', services: elsewhere })).resolves.toMatchObject({
        kind: 'answer',
        status: 421,
        body: '{"success":false,"error":"This site does not answer to that address"}',
      });
    } finally {
      await elsewhere.close();
    }
  });
});

describe('what a person typed, kept on a refusal before the handler', () => {
  test('a post from a foreign origin: the page keeps the typed text of the form’s fields, never a file sent in one', async () => {
    const body = new FormData();
    body.set('name', new Blob(['not a name']), 'name.txt');
    body.set('message', 'Hello there, a message.');
    const refused = await run(
      new Request('http://site.test/api/contact', { method: 'POST', body, headers: { host: 'site.test', origin: 'https://evil.example', ...NAVIGATION } }),
    );
    expect(refused.headers.location).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
    const page = await run(request('GET', refused.headers.location!, { headers: NAVIGATION }));
    expect(page).toMatchObject({ kind: 'form-view', status: 403 });
    expect((page as FormView).values).toEqual({ message: 'Hello there, a message.' });
  });
});

describe('_next for a script (/forms.js, issue 39 item 9a): the same rule, said in the JSON', () => {
  test('a success names the allowed page as `next`, after the spec’s fields', async () => {
    const reply = await run(request('POST', '/api/contact', { fields: { ...VALID, _next: 'https://partner.example/thanks?form=contact' } }));
    expect(reply).toMatchObject({ kind: 'answer', status: 200, body: '{"success":true,"next":"https://partner.example/thanks?form=contact"}' });
    expect(events('form.next_ignored')).toEqual([]);
  });

  test('the newsletter’s success too', async () => {
    const reply = await run(request('POST', '/api/newsletter', { fields: { email: 'reader@example.org', _next: 'https://partner.example/subscribed' } }));
    expect(reply).toMatchObject({ status: 200, body: '{"success":true,"next":"https://partner.example/subscribed"}' });
  });

  test('a _next on no allowed origin: the spec’s JSON unchanged, and the warning a person’s post gets', async () => {
    const reply = await run(request('POST', '/api/contact', { fields: { ...VALID, _next: 'https://evil.example/x' } }));
    expect(reply).toMatchObject({ status: 200, body: '{"success":true}' });
    expect(events('form.next_ignored')).toEqual([expect.objectContaining({ level: 'warn', route: '/api/contact' })]);
  });

  test('without _next the JSON is the spec’s, byte for byte', async () => {
    await expect(run(request('POST', '/api/contact', { fields: VALID }))).resolves.toMatchObject({ status: 200, body: '{"success":true}' });
  });
});

describe('a post from an origin that is not allowed (issue 39 item 9c)', () => {
  test('is logged as form.origin_refused with the origin, the route and the client', async () => {
    const reply = await run(request('POST', '/api/contact', { fields: VALID, headers: { origin: 'https://www.partner.example' } }));
    expect(reply.status).toBe(403);
    expect(events('form.origin_refused')).toEqual([
      expect.objectContaining({ level: 'warn', route: '/api/contact', origin: 'https://www.partner.example', client: expect.stringMatching(/\S/) }),
    ]);
  });

  test('an allowed origin and a post without one are not', async () => {
    await run(request('POST', '/api/contact', { fields: VALID, headers: { origin: 'https://partner.example' } }));
    await run(request('POST', '/api/contact', { fields: VALID }));
    expect(events('form.origin_refused')).toEqual([]);
  });

  test('a flood under LOG_CLIENT_LINES=limited is one line a client, its repeats counted once the minute is over', async () => {
    const lines: Array<Record<string, unknown>> = [];
    let now = 1_000_000;
    const logger = limitClientLines(createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), {
      intervalMs: 60_000,
      maxPerSecond: 50,
      maxKeys: 100,
      clock: () => now,
    });
    const services = createServices(requireConfig({ DATA_DIR: site.dataDir, ALLOWED_ORIGINS: 'https://partner.example' }), logger);
    try {
      const target = findTarget('/api/contact');
      if (target.kind === 'elsewhere') throw new Error('not a pipeline path');
      for (let post = 0; post < 5; post++) {
        const req = request('POST', '/api/contact', { fields: VALID, headers: { origin: `https://evil${post}.example` } });
        await expect(runPipeline({ request: req, target, socketAddress: '192.0.2.7', services })).resolves.toMatchObject({ status: 403 });
      }
      now += 60_000;
      logger.flush();
      expect(lines.filter((line) => line.event === 'form.origin_refused').map((line) => line.origin)).toEqual(['https://evil0.example']);
      expect(lines.filter((line) => line.event === 'log.repeated' && line.of === 'form.origin_refused')).toEqual([expect.objectContaining({ repeats: 4 })]);
    } finally {
      await services.close();
    }
  });
});
