/**
 * `npm run bench:export`: exports of many long held messages, from the admin and the command line,
 * against the built server on 127.0.0.1. Seeds EXPORT_MESSAGES messages (default 120,000) of
 * EXPORT_CHARACTERS characters (5,000) straight into a fresh SQLite file, then, while an admin CSV
 * export is downloaded (read and thrown away) and `npm run inbox -- export` writes to /dev/null,
 * samples the server's RSS and the time /api/health takes to answer every 100 ms.
 * Prints the peak RSS, health's median and worst answer, and how long each export took.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { hashPassword } from '../src/lib/admin/password.ts';

const COUNT = Number(process.env.EXPORT_MESSAGES ?? 120_000);
const CHARACTERS = Number(process.env.EXPORT_CHARACTERS ?? 5_000);
const PASSWORD = 'bench export password';
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-export-'));

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  // As `npm run serve` runs it (package.json): the same memory flags.
  const child = spawn(process.execPath, ['--max-semi-space-size=4', '--heap-growing-percent=20', '--no-maglev', 'dist/server/start.mjs'], {
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const match = /"event":"server.listening".*?"port":(\d+)/.exec(buffer);
      if (match) resolve({ child, url: `http://127.0.0.1:${match[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

// A first start creates and migrates the database; the messages go in directly, held as spam,
// received over the last hours (older ones would be deleted at start by the spam retention).
const hash = await hashPassword(PASSWORD);
const first = await start({ ADMIN_PASSWORD_HASH: hash });
await stop(first.child);
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

const rss: number[] = [];
const health: number[] = [];
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    rss.push(rssMb(child.pid!));
    const asked = performance.now();
    await fetch(`${url}/api/health`).then((r) => r.arrayBuffer());
    health.push(performance.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();

const adminStart = performance.now();
const response = await form({ path: '/admin/actions/export', csrf, what: 'messages', format: 'csv' }, cookie);
let bytes = 0;
for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
const adminSeconds = (performance.now() - adminStart) / 1000;

const cliStart = performance.now();
await new Promise<void>((resolve, reject) => {
  const cli = spawn(process.execPath, ['src/cli/inbox.ts', 'export', '--format', 'csv'], {
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cli.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`inbox export exited with ${code}`))));
});
const cliSeconds = (performance.now() - cliStart) / 1000;
sampling = false;
await sampler;
await stop(child);
rmSync(dataDir, { recursive: true, force: true });

console.log(`admin export: ${response.status}, ${(bytes / 1e6).toFixed(0)} MB in ${adminSeconds.toFixed(1)} s; inbox export: ${cliSeconds.toFixed(1)} s`);
console.log(`server RSS: ${idleRss.toFixed(0)} MB at rest, ${Math.max(...rss).toFixed(0)} MB at most (${rss.length} samples)`);
console.log(`/api/health during the exports: median ${median(health).toFixed(1)} ms, worst ${Math.max(...health).toFixed(1)} ms (${health.length} answers)`);
