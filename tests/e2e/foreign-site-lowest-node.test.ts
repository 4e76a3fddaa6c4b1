import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ForeignServer, type ForeignSite, makeForeignSite } from '../support/foreign-site.ts';
import { postForm } from '../support/site.ts';
import { freePort } from '../support/smtp.ts';

/**
 * `engines` is the truth (issue 40 item 2, decision 0221): the coffee roaster's shop
 * (tests/support/foreign-site.ts) runs on the lowest Node the package's `engines` names, as the
 * `node` npm package of that version: it installs site-forms from `npm pack`, `astro build`s,
 * serves a contact post into its SQLite store, and `npx site-forms` reads its forms.config.ts.
 * Hint: the version comes from packages/site-forms/package.json, so lowering `engines` below what
 * the package needs fails here (22.12: no `registerHooks`, no node:sqlite; 22.17: Node does not
 * strip the owner's forms.config.ts by default).
 */

const ENGINES = JSON.parse(readFileSync(new URL('../../packages/site-forms/package.json', import.meta.url), 'utf8')).engines.node as string;
const LOWEST = /^>=(\d+\.\d+\.\d+)$/.exec(ENGINES)?.[1];

let shop: ForeignSite;
let server: ForeignServer;

beforeAll(async () => {
  if (!LOWEST) throw new Error(`engines.node is "${ENGINES}", not ">=x.y.z": this test cannot tell the lowest Node`);
  shop = makeForeignSite(['standalone'], {}, { node: LOWEST });
  const port = await freePort();
  server = await shop.start({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_MAX: '0' });
}, 900_000);

afterAll(async () => {
  await server?.stop();
  shop?.remove();
});

test('the shop’s Node is the lowest that engines names', () => {
  const version = spawnSync(join(shop.root, 'node_modules/node/bin/node'), ['--version'], { encoding: 'utf8' });
  expect(version.stdout.trim()).toBe(`v${LOWEST}`);
});

test('on it, the built shop stores a contact post in SQLite and answers 200', async () => {
  const answer = await postForm(`${server.url}/api/contact`, {
    name: 'Lowest Node',
    email: 'lowest@example.org',
    message: 'A kilo of the Kiel blend, whole beans, please.',
    honeypot: '',
  });
  expect(answer.status).toBe(200);
  await expect(answer.json()).resolves.toEqual({ success: true });
  const db = new DatabaseSync(join(server.dataDir, 'forms.db'), { readOnly: true });
  try {
    expect(db.prepare('SELECT name FROM submissions').all()).toEqual([{ name: 'Lowest Node' }]);
  } finally {
    db.close();
  }
});

test('on it, npx site-forms reads the shop’s own forms.config.ts: its callback form’s fields are columns of the export', () => {
  const run = shop.cli(['inbox', 'export', '--format', 'csv'], { DATA_DIR: server.dataDir, ENV_FILE: '' });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain('Lowest Node');
  expect(run.stdout.split('\r\n')[0]?.split(',')).toEqual(expect.arrayContaining(['form', 'phone', 'slot']));
});
