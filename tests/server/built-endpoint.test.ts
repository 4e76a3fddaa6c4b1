/**
 * The contact endpoint built into the pages and the CSP agree, whatever the run-time
 * environment says: a copy of the built site whose build used CONTACT_FORM_ENDPOINT, served
 * without it (or with another one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'site-forms-built-endpoint-'));
const project = join(temp, 'project');

beforeAll(() => {
  mkdirSync(project);
  cpSync(join(ROOT, 'package.json'), join(project, 'package.json'));
  cpSync(join(ROOT, 'dist'), join(project, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'));
  // As `CONTACT_FORM_ENDPOINT=https://forms.example.com/api/contact npm run build` leaves it.
  writeFileSync(join(project, 'dist/build-settings.json'), '{ "contactFormEndpoint": "https://forms.example.com/api/contact" }\n');
});
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Serves the copy with only `env`; answers the page's CSP and every log line. */
async function serve(env: Record<string, string>): Promise<{ csp: string; logs: string }> {
  const child: ChildProcess = spawn(process.execPath, [join(project, 'dist/server/start.mjs')], {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: join(temp, `data-${Date.now()}`), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      logs += chunk;
      const found = /"event":"server.listening".*?"port":(\d+)/.exec(logs);
      if (found) resolve(Number(found[1]));
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (logs += chunk));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${logs}`)));
  });
  const csp = (await fetch(`http://127.0.0.1:${port}/`)).headers.get('content-security-policy') ?? '';
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('close', resolve));
  return { csp, logs };
}

describe('the built contact endpoint and the Content-Security-Policy', () => {
  test('the real build records the endpoint it inlined (none here)', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'dist/build-settings.json'), 'utf8'))).toEqual({ contactFormEndpoint: null });
  });

  test('served without CONTACT_FORM_ENDPOINT: the CSP still lets the page post to the built endpoint, and a warning says they differ', async () => {
    const { csp, logs } = await serve({});
    expect(csp).toMatch(/connect-src 'self' https:\/\/forms\.example\.com(;|$)/);
    expect(logs).toContain('"event":"contact.endpoint_differs"');
  });

  test('served with another endpoint: the CSP allows the built one, not the run-time one', async () => {
    const { csp } = await serve({ CONTACT_FORM_ENDPOINT: 'https://other.example.net/api/contact' });
    expect(csp).toContain('https://forms.example.com');
    expect(csp).not.toContain('other.example.net');
  });

  test('served with the same endpoint: no warning', async () => {
    const { csp, logs } = await serve({ CONTACT_FORM_ENDPOINT: 'https://forms.example.com/api/contact' });
    expect(csp).toContain('https://forms.example.com');
    expect(logs).not.toContain('contact.endpoint_differs');
  });
});
