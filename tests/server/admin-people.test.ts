import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { type Site, startSite } from '../support/site.ts';

/**
 * The people of issue 42 on the built server: a person whose role a page refuses still reads it
 * in the admin's frame, with the form that signs them out (review S4 of step S3a).
 */
const PASSWORD = 'correct horse battery staple';
const READER_PASSWORD = 'a reader reads and reads';

let site: Site;

beforeAll(async () => {
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) });
  const at = new Date().toISOString();
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'));
  try {
    db.prepare(
      `INSERT INTO admin_users (email, name, role, forms, password_hash, origin, user_handle, digest, created_at, updated_at)
       VALUES ('reader@example.org', 'Rea', 'reader', '["contact"]', ?, 'cli', 'handle-of-rea', 0, ?, ?)`,
    ).run(await hashPassword(READER_PASSWORD), at, at);
  } finally {
    db.close();
  }
});
afterAll(async () => {
  await site.stop();
  rmSync(site.dataDir, { recursive: true, force: true });
});

test('a reader refused a page reads the refusal with the sign-out form, and it signs them out', async () => {
  const signIn = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'reader@example.org', password: READER_PASSWORD }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
    redirect: 'manual',
  });
  expect([signIn.status, signIn.headers.get('location')]).toEqual([303, '/admin']);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;

  // The overview is every person's since issue 42 step S5 (tests/server/admin-roles.test.ts); the audit log is an owner's.
  expect((await fetch(`${site.url}/admin`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
  for (const path of ['/admin/audit']) {
    const refused = await fetch(`${site.url}${path}`, { headers: { cookie }, redirect: 'manual' });
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(html).toContain('Your role cannot see this page.');
    expect(html).toMatch(/<form method="post" action="\/admin\/actions\/sign-out"/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const signOut = await fetch(`${site.url}/admin/actions/sign-out`, {
      method: 'POST',
      body: new URLSearchParams({ csrf: csrf! }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie },
      redirect: 'manual',
    });
    expect([signOut.status, signOut.headers.get('location')]).toEqual([303, '/admin?ended=signed-out']);
  }
  expect((await fetch(`${site.url}/admin/messages`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
});
