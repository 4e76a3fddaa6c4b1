import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

/**
 * The built server as systemd or a shell starts it: from any working directory, and when
 * something at start is wrong (issue 11, items 2 and 3).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START = join(ROOT, 'dist/server/start.mjs');

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs the server until it exits, or until it logs that it listens (then stops it); answers what it printed. */
function run(entry: string, options: { cwd: string; env: Record<string, string>; uid?: number }): Promise<Run> {
  const child = spawn(process.execPath, [entry], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.includes('"event":"server.listening"')) child.kill('SIGTERM');
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** The JSON log line of `event`, parsed. */
function logged(stdout: string, event: string): Record<string, unknown> | undefined {
  const line = stdout.split('\n').find((l) => l.includes(`"event":"${event}"`));
  return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
}

const temp = mkdtempSync(join(tmpdir(), 'site-forms-start-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
const base = { ENV_FILE: '', HOST: '127.0.0.1', PORT: '0' };

describe('.env and DATA_DIR belong to the project, not to the working directory', () => {
  // A copy of the built project (package.json, dist/, node_modules linked) with its own .env.
  const project = join(temp, 'project');
  const elsewhere = join(temp, 'elsewhere');
  beforeAll(() => {
    mkdirSync(elsewhere, { recursive: true });
    mkdirSync(project);
    cpSync(join(ROOT, 'package.json'), join(project, 'package.json'));
    cpSync(join(ROOT, 'dist'), join(project, 'dist'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'));
    writeFileSync(join(project, '.env'), 'HOST=127.0.0.1\nPORT=0\nDATA_DIR=var/forms\nLOG_LEVEL=info\n');
  });

  test('started from another folder (a systemd unit without WorkingDirectory): .env beside package.json, data under the project, its absolute path logged', async () => {
    const result = await run(join(project, 'dist/server/start.mjs'), { cwd: elsewhere, env: {} });
    expect(result.stderr).toBe('');
    expect(logged(result.stdout, 'server.config')).toMatchObject({ dataDir: join(project, 'var/forms') });
    expect(existsSync(join(project, 'var/forms/forms.db'))).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test('ENV_FILE names a file of the project the same way', async () => {
    writeFileSync(join(project, 'other.env'), 'HOST=127.0.0.1\nPORT=0\nDATA_DIR=var/other\n');
    const result = await run(join(project, 'dist/server/start.mjs'), { cwd: elsewhere, env: { ENV_FILE: 'other.env' } });
    expect(logged(result.stdout, 'server.config')).toMatchObject({ dataDir: join(project, 'var/other') });
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('a start-up that cannot work stops with one line and exit code 1', () => {
  let occupied: Server;
  let port: number;
  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    port = (occupied.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => occupied.close(() => resolve())));

  function expectOneLine(result: Run, line: string): void {
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: `${line}\n` });
    expect(result.stdout).not.toMatch(/\n\s+at /);
  }

  test('the port is taken', async () => {
    const dataDir = join(temp, 'port');
    const result = await run(START, { cwd: ROOT, env: { ...base, PORT: String(port), DATA_DIR: dataDir } });
    expectOneLine(result, `PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set PORT to another port.`);
  });

  test('DATA_DIR holds a file that is not a database', async () => {
    const dataDir = join(temp, 'not-a-database');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'forms.db'), 'These are my notes, not a database.\n'.repeat(200));
    const result = await run(START, { cwd: ROOT, env: { ...base, DATA_DIR: dataDir } });
    expectOneLine(result, `DATA_DIR ${dataDir} holds a forms.db that is not a readable SQLite database: restore it from a backup, or move it away.`);
  });

  test('DATA_DIR is a file', async () => {
    const dataDir = join(temp, 'a-file');
    writeFileSync(dataDir, 'x');
    const result = await run(START, { cwd: ROOT, env: { ...base, DATA_DIR: dataDir } });
    expectOneLine(result, `DATA_DIR ${dataDir} is not a folder: set DATA_DIR to a folder.`);
  });

  // root may write anywhere: the server then runs as nobody, as a service user would. That
  // needs nobody to reach Node and the project; a clone inside a private folder (mktemp -d is
  // 0700) cannot be reached, and there the test says so instead of failing on EACCES.
  const asRoot = process.getuid?.() === 0;
  const nobodyCanRun =
    !asRoot ||
    spawnSync(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(START)})`], { uid: 65534, stdio: 'ignore', timeout: 10_000 }).status ===
      0;
  test.skipIf(!nobodyCanRun).each([
    ['DATA_DIR exists but may not be written', 'read-only', ''],
    ['DATA_DIR cannot be created', 'read-only-parent', 'data'],
  ])('%s', async (_, folder, below) => {
    const readOnly = join(temp, folder);
    mkdirSync(readOnly);
    chmodSync(temp, 0o755);
    chmodSync(readOnly, 0o555);
    const dataDir = below ? join(readOnly, below) : readOnly;
    const result = await run(START, { cwd: ROOT, env: { ...base, DATA_DIR: dataDir }, ...(asRoot ? { uid: 65534 } : {}) });
    expectOneLine(result, `DATA_DIR ${dataDir} cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.`);
  });
});
