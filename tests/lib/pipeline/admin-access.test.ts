import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { adminOf, ROLE_REFUSED, requirePerson } from '../../../packages/site-forms/src/lib/pipeline/admin-access.ts';
import { type Reply, runPipeline } from '../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import { findTarget } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

/**
 * The owner's side of the road, in process: the check every owner-only page starts with, and the
 * admin's form posts through the pipeline, over real services on a SQLite store in a temporary folder.
 */
// The reference implementation's vector (phc-winner-argon2): a well-formed argon2id hash; nobody signs in with it here.
const HASH = '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';
const ADMIN_HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' };

let services: Services;
let logs: Array<Record<string, unknown>>;
let dataDir: string;

beforeEach(() => {
  logs = [];
  dataDir = mkdtempSync(join(tmpdir(), 'pipeline-admin-'));
});
afterEach(async () => {
  await services.close().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

function open(env: Record<string, string> = { ADMIN_PASSWORD_HASH: HASH }): Services {
  services = createServices(
    requireConfig({ DATA_DIR: dataDir, ...env }),
    createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
  );
  return services;
}

const events = (event: string) => logs.filter((line) => line.event === event);

/** An admin page's context as Astro hands it over: `rewrite` and `redirect` answer what they were asked. */
function pageFor(request: Request) {
  return {
    request,
    locals: { services },
    response: { headers: new Headers() },
    rewrite: async (path: string) => new Response(`the page of ${path}`, { status: 404 }),
    redirect: (path: string, status?: 303) => new Response(null, { status, headers: { location: path } }),
  };
}

const get = (path: string, headers: Record<string, string> = {}) => new Request(`http://site.test${path}`, { headers: { host: 'site.test', ...headers } });

describe('what an admin page learns from its request', () => {
  test('the admin, and the public origin: PUBLIC_URL when set, else the Host the browser addressed', () => {
    open({ ADMIN_PASSWORD_HASH: HASH, PUBLIC_URL: 'https://forms.example' });
    expect(adminOf(pageFor(get('/admin')))).toEqual({ admin: services.admin, publicOrigin: 'https://forms.example' });
    expect(services.admin).toBeDefined();
  });

  test('without ADMIN_PASSWORD_HASH: the admin is built, and off while nobody was added', async () => {
    open({});
    expect(adminOf(pageFor(get('/admin')))).toEqual({ admin: services.admin, publicOrigin: 'http://site.test' });
    await expect(services.admin!.isOn()).resolves.toBe(false);
    await services.admin!.ready;
    await expect(services.admin!.people.list()).resolves.toEqual([]);
  });

  test('without ADMIN_PASSWORD_HASH: on once a person exists (added by the command), and on for good', async () => {
    open({});
    await services.store.ready;
    await services.admin!.people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, new Date());
    // A fresh admin over the same database asks at once; this one asked no question yet either.
    await expect(services.admin!.isOn()).resolves.toBe(true);
  });

  test('ADMIN_PASSWORD_HASH removed: its first owner turns nothing on; another person or an invitation does', async () => {
    open({ ADMIN_PASSWORD_HASH: HASH });
    await services.admin!.ready;
    await expect(services.admin!.people.envOwner()).resolves.toMatchObject({ origin: 'env' });
    await services.close();
    open({});
    await expect(services.admin!.isOn()).resolves.toBe(false);
    await services.close();
    open({});
    await services.store.ready;
    await services.admin!.people.create({ email: 'ada@example.org', role: 'reader', origin: 'cli' }, new Date());
    await expect(services.admin!.isOn()).resolves.toBe(true);
  });

  test('with ADMIN_PASSWORD_HASH: the first owner is made once the store is ready, with CONTACT_TO as email', async () => {
    open({ ADMIN_PASSWORD_HASH: HASH, SMTP_URL: 'smtp://127.0.0.1:2525', CONTACT_TO: 'Owner@Example.org', CONTACT_FROM: 'forms@example.org' });
    await services.admin!.ready;
    await expect(services.admin!.people.list()).resolves.toEqual([
      expect.objectContaining({ origin: 'env', role: 'owner', email: 'owner@example.org', passwordHash: null }),
    ]);
    await expect(services.admin!.isOn()).resolves.toBe(true);
  });
});

/** A session of the first owner, or of a person of this role added by the command. */
async function sessionOf(role: 'owner' | 'editor' | 'reader' = 'owner') {
  const admin = services.admin!;
  await admin.ready;
  let userId = (await admin.people.envOwner())!.id;
  if (role !== 'owner') {
    const added = await admin.people.create({ email: `${role}@example.org`, role, forms: ['contact'], origin: 'cli' }, new Date());
    if (!added.ok) throw new Error(added.reason);
    userId = added.person.id;
  }
  return admin.sessions.start({ userId, stage: 'full', method: 'password' });
}

describe('a page only the owner may see', () => {
  test('while the admin is off: the not-found page in its place, never cached nor indexed', async () => {
    open({});
    const page = pageFor(get('/admin/messages'));
    const owner = await requirePerson(page, 'owner');
    expect(owner.ok).toBe(false);
    const answer = await (owner as { answer: Response | Promise<Response> }).answer;
    expect([answer.status, await answer.text()]).toEqual([404, 'the page of /admin/not-found']);
    expect(Object.fromEntries(page.response.headers)).toEqual(ADMIN_HEADERS);
  });

  test.each([
    ['no session cookie', {}],
    ['a session the server does not know', { cookie: `admin_session=${'A'.repeat(43)}` }],
  ])('signed out (%s): back to sign-in, told the session ended', async (_, headers) => {
    open();
    const owner = await requirePerson(pageFor(get('/admin/messages', headers)), 'owner');
    expect(owner.ok).toBe(false);
    const answer = await (owner as { answer: Response | Promise<Response> }).answer;
    expect([answer.status, answer.headers.get('location')]).toEqual([303, '/admin?ended=expired']);
  });

  test('signed in: the admin, the live session and its person', async () => {
    open();
    const session = await sessionOf();
    const page = pageFor(get('/admin/messages', { cookie: `theme=dark; admin_session=${session.token}` }));
    const owner = (await services.admin!.people.envOwner())!;
    const actor = { kind: 'person', id: owner.id, name: 'Owner', email: null, stage: 'full', role: 'owner', scope: { all: true } };
    await expect(requirePerson(page, 'owner')).resolves.toEqual({ ok: true, admin: services.admin, session: { ...session, actor, method: 'password' }, actor });
    expect(Object.fromEntries(page.response.headers)).toEqual(ADMIN_HEADERS);
  });

  test('an enrolment session (ADMIN_REQUIRE_PASSKEY) is sent to its account page from every other page, which it may open', async () => {
    open({ ADMIN_PASSWORD_HASH: HASH, ADMIN_REQUIRE_PASSKEY: 'true', PUBLIC_URL: 'http://site.test' });
    const admin = services.admin!;
    await admin.ready;
    const session = await admin.sessions.start({ userId: (await admin.people.envOwner())!.id, stage: 'enroll', method: 'password' });
    for (const need of ['owner', 'messages.read', 'audit.read'] as const) {
      const sent = await requirePerson(pageFor(get('/admin/messages', { cookie: `admin_session=${session.token}` })), need);
      expect(sent.ok).toBe(false);
      const answer = await (sent as { answer: Response | Promise<Response> }).answer;
      expect([answer.status, answer.headers.get('location')]).toEqual([303, '/admin/account?enroll=1']);
    }
    await expect(requirePerson(pageFor(get('/admin/account', { cookie: `admin_session=${session.token}` })), 'self.manage')).resolves.toMatchObject({
      ok: true,
      actor: { stage: 'enroll' },
    });
  });

  test('on https the cookie is the __Host- one', async () => {
    open({ ADMIN_PASSWORD_HASH: HASH, PUBLIC_URL: 'https://forms.example' });
    const session = await sessionOf();
    await expect(requirePerson(pageFor(get('/admin', { cookie: `__Host-admin_session=${session.token}` })), 'owner')).resolves.toMatchObject({
      ok: true,
      session: { token: session.token },
    });
  });

  test.each(['editor', 'reader'] as const)('an %s’s session: the refused page (403) on an owner’s page, never cached', async (role) => {
    open();
    const session = await sessionOf(role);
    const page = { ...pageFor(get('/admin/messages', { cookie: `admin_session=${session.token}` })), locals: { services } as App.Locals };
    const refused = await requirePerson(page, 'owner');
    expect(refused.ok).toBe(false);
    const answer = await (refused as { answer: Response | Promise<Response> }).answer;
    expect(await answer.text()).toBe('the page of /admin/refused');
    expect(page.locals.adminRefusal).toEqual({ kind: 'admin-refusal', status: 403, message: ROLE_REFUSED, headers: ADMIN_HEADERS });
    expect(Object.fromEntries(page.response.headers)).toEqual(ADMIN_HEADERS);
    // What the role has is open to it: messages.read for both, self.manage for both.
    await expect(requirePerson(page, 'messages.read')).resolves.toMatchObject({ ok: true, actor: { role } });
  });
});

describe("the admin's form posts through the pipeline", () => {
  /** Runs a request to an admin action's address, from 203.0.113.5. */
  function run(request: Request): Promise<Reply> {
    const target = findTarget(new URL(request.url).pathname);
    if (target.kind !== 'route') throw new Error('not a route');
    return runPipeline({ request, target, socketAddress: '203.0.113.5', services });
  }
  const post = (path: string, form: Record<string, string>, cookie?: string) =>
    new Request(`http://site.test${path}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { host: 'site.test', origin: 'http://site.test', ...(cookie && { cookie }) },
    });

  test('signing out: 303 to sign-in with the cookie cleared, and one line naming the action and status', async () => {
    open();
    const session = await sessionOf();
    await expect(run(post('/admin/actions/sign-out', { csrf: session.csrfToken }, `admin_session=${session.token}`))).resolves.toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...ADMIN_HEADERS, location: '/admin?ended=signed-out', 'set-cookie': 'admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict' },
      body: null,
    });
    expect(events('admin.request')).toEqual([
      { time: expect.any(String), level: 'info', event: 'admin.request', action: 'sign-out', status: 303, client: expect.stringMatching(/^[0-9a-f]{12}$/) },
    ]);
  });

  test.each(['editor', 'reader'] as const)('an %s’s post of an owner’s action is refused (403) before it runs; signing out is theirs', async (role) => {
    open();
    const session = await sessionOf(role);
    const cookie = `admin_session=${session.token}`;
    // Replaying a webhook delivery is the owner's alone (issue 42 step S4: retry is an editor's now).
    await expect(run(post('/admin/actions/replay-delivery', { csrf: session.csrfToken, id: '1' }, cookie))).resolves.toEqual({
      kind: 'admin-refusal',
      status: 403,
      message: 'Your role cannot do this.',
      headers: ADMIN_HEADERS,
    });
    await expect(run(post('/admin/actions/sign-out', { csrf: session.csrfToken }, cookie))).resolves.toMatchObject({
      status: 303,
      headers: { location: '/admin?ended=signed-out' },
    });
  });

  test('a GET of an action (a reload) goes to the admin, and is no post to log', async () => {
    open();
    await expect(run(get('/admin/actions/retry'))).resolves.toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...ADMIN_HEADERS, location: '/admin' },
      body: null,
    });
    expect(events('admin.request')).toEqual([]);
  });

  test('an action that throws (the database gone): a 500 page that tells what to do, the error logged, never shown', async () => {
    open();
    const session = await sessionOf();
    await services.store.close();
    await expect(run(post('/admin/actions/sign-out', { csrf: session.csrfToken }, `admin_session=${session.token}`))).resolves.toEqual({
      kind: 'admin-refusal',
      status: 500,
      message: 'Something went wrong on the server. Reload the page to see what was done, then try again.',
      headers: ADMIN_HEADERS,
    });
    expect(events('admin.unexpected_error')).toEqual([
      { time: expect.any(String), level: 'error', event: 'admin.unexpected_error', action: 'sign-out', error: 'Error: database is not open' },
    ]);
    expect(events('admin.request')).toEqual([expect.objectContaining({ action: 'sign-out', status: 500 })]);
  });
});
