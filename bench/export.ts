/**
 * `npm run bench:export`: exports of many long held messages, from the admin and the command line,
 * against the built server on 127.0.0.1. Seeds EXPORT_MESSAGES messages (default 120,000) of
 * EXPORT_CHARACTERS characters (5,000) straight into a fresh SQLite file, then, one after the
 * other, downloads the admin's CSV, JSON and CSV for Excel (read and thrown away) and runs
 * `npm run inbox -- export` as JSON and as CSV into a pipe the bench reads, sampling every 100 ms
 * the RSS of the server and of the command, and the time /api/health takes to answer.
 * Prints, per export, its size, time and the peak RSS, then health's median and worst answer.
 * Hint: the server and the command run with the flags of their npm scripts (package.json).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { hashPassword } from '../packages/site-forms/src/lib/admin/password.ts';
import { median, rssMb, startServer, stopServer } from './serve.ts';

const COUNT = Number(process.env.EXPORT_MESSAGES ?? 120_000);
const CHARACTERS = Number(process.env.EXPORT_CHARACTERS ?? 5_000);
const PASSWORD = 'bench export password';
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-export-'));

/** The arguments of an npm script that runs `node …` (package.json), for spawning it as npm would, without npm between. */
function scriptArgs(name: string): string[] {
  const script: string = JSON.parse(readFileSync('package.json', 'utf8')).scripts[name];
  const [node, ...args] = script.split(' ');
  if (node !== 'node') throw new Error(`npm run ${name} does not start with node`);
  return args;
}

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  // As `npm run serve` runs it (package.json): the same memory flags.
  return startServer(scriptArgs('serve'), { DATA_DIR: dataDir, ...env });
}

// A first start creates and migrates the database; the messages go in directly, held as spam,
// received over the last hours (older ones would be deleted at start by the spam retention).
const hash = await hashPassword(PASSWORD);
const first = await start({ ADMIN_PASSWORD_HASH: hash });
await stopServer(first.child);
const db = new DatabaseSync(join(dataDir, 'forms.db'));
const seeded = Date.now();
const insert = db.prepare(`INSERT INTO submissions (created_at, name, email, message, status, spam_reasons) VALUES (?, ?, ?, ?, 'spam', '["too-many-links"]')`);
const body = 'Lorem ipsum dolor sit amet, https://a.test https://b.test https://c.test '.repeat(Math.ceil(CHARACTERS / 70)).slice(0, CHARACTERS);
for (let done = 0; done < COUNT; done += 10_000) {
  db.exec('BEGIN');
  for (let n = done; n < Math.min(COUNT, done + 10_000); n++)
    insert.run(new Date(Date.now() - (COUNT - n) * 100).toISOString(), `Bot ${n}`, `bot${n}@example.net`, body);
  db.exec('COMMIT');
}
db.close();
console.log(`seeded ${COUNT} messages of ${CHARACTERS} characters in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

const { child, url } = await start({ ADMIN_PASSWORD_HASH: hash });
const idleRss = rssMb(child.pid!);
const form = (fields: Record<string, string>, cookie = '') =>
  fetch(`${url}${fields.path}`, {
    method: 'POST',
    body: new URLSearchParams(Object.fromEntries(Object.entries(fields).filter(([k]) => k !== 'path'))),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, ...(cookie && { cookie }) },
    redirect: 'manual',
  });
const signedIn = await form({ path: '/admin/actions/sign-in', password: PASSWORD });
const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${url}/admin`, { headers: { cookie } })).text())![1]!;

/** What is being exported now: the samples are counted against it. */
let phase = 'rest';
let cli: ChildProcess | undefined;
const peaks = new Map<string, { server: number; cli: number }>();
const health: number[] = [];
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    const peak = peaks.get(phase) ?? { server: 0, cli: 0 };
    peak.server = Math.max(peak.server, rssMb(child.pid!));
    // The command may have ended between two samples.
    if (cli?.pid && cli.exitCode === null) peak.cli = Math.max(peak.cli, rssMb(cli.pid));
    peaks.set(phase, peak);
    const asked = performance.now();
    await fetch(`${url}/api/health`).then((r) => r.arrayBuffer());
    health.push(performance.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();

const results: string[] = [];
async function measured(name: string, run: () => Promise<number>): Promise<void> {
  phase = name;
  const started = performance.now();
  const bytes = await run();
  const seconds = (performance.now() - started) / 1000;
  phase = 'between';
  const peak = peaks.get(name) ?? { server: 0, cli: 0 };
  results.push(
    `${name}: ${(bytes / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s; server RSS at most ${peak.server.toFixed(0)} MB${peak.cli ? `, command RSS at most ${peak.cli.toFixed(0)} MB` : ''}`,
  );
}

async function download(fields: Record<string, string>): Promise<number> {
  const response = await form({ path: '/admin/actions/export', csrf, what: 'messages', ...fields }, cookie);
  if (response.status !== 200) throw new Error(`admin export answered ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
  return bytes;
}

/** `npm run inbox -- export --format <format>` into a pipe read here, as `… | gzip` would read it. */
function inboxExport(format: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    cli = spawn(process.execPath, [...scriptArgs('inbox'), 'export', '--format', format], {
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let bytes = 0;
    cli.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    cli.once('exit', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`inbox export exited with ${code}`))));
  });
}

await measured('admin CSV', () => download({ format: 'csv' }));
await measured('admin JSON', () => download({ format: 'json' }));
await measured('admin CSV for Excel', () => download({ format: 'csv', bom: '1' }));
await measured('inbox export JSON', () => inboxExport('json'));
await measured('inbox export CSV', () => inboxExport('csv'));
sampling = false;
await sampler;
await stopServer(child);
rmSync(dataDir, { recursive: true, force: true });

console.log(`server RSS at rest: ${idleRss.toFixed(0)} MB`);
for (const line of results) console.log(line);
console.log(`/api/health during the exports: median ${median(health).toFixed(1)} ms, worst ${Math.max(...health).toFixed(1)} ms (${health.length} answers)`);
