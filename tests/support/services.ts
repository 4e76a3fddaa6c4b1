import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The system programs the suites start for real, each found once here. A missing one fails the
 * run naming it and how to install it: a suite that quietly skips PostgreSQL or nginx proves
 * nothing about them, and CI installs them all (.ci/run). On a laptop, `ALLOW_SKIP=1` skips the
 * tests of what is missing instead, and the run's summary names what was skipped.
 */
export type ServiceName = 'postgresql' | 'redis' | 'nginx' | 'openssl' | 'clamd' | 'chromium' | 'script';

type Service = { label: string; present: () => boolean; install: string };

/** The folder of initdb and pg_ctl: PG_BIN, or the newest /usr/lib/postgresql/<version>/bin. */
export const POSTGRES_BIN = process.env.PG_BIN ?? newestPostgres();

/** Debian's nginx (`nginx-light`); another one through NGINX_BINARY. */
export const NGINX_BINARY = process.env.NGINX_BINARY ?? '/usr/sbin/nginx';

/** Debian's redis-server; another one through REDIS_SERVER. */
export const REDIS_BINARY = process.env.REDIS_SERVER ?? 'redis-server';

/** Debian's clamd (clamav-daemon), or CLAMD_BIN. */
export const CLAMD_BIN = process.env.CLAMD_BIN ?? '/usr/sbin/clamd';

/** The Chromium to drive: Debian's package by default, another one through CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const runs = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

const SERVICES: Record<ServiceName, Service> = {
  postgresql: { label: 'PostgreSQL', present: () => POSTGRES_BIN !== undefined, install: 'apt-get install postgresql, or set PG_BIN' },
  redis: { label: 'Redis', present: () => runs(REDIS_BINARY, ['--version']), install: 'apt-get install redis-server, or set REDIS_SERVER' },
  nginx: { label: 'nginx', present: () => runs(NGINX_BINARY, ['-v']), install: 'apt-get install nginx-light, or set NGINX_BINARY' },
  openssl: { label: 'openssl', present: () => runs('openssl', ['version']), install: 'apt-get install openssl' },
  clamd: { label: 'clamd', present: () => existsSync(CLAMD_BIN), install: 'apt-get install clamav-daemon, or set CLAMD_BIN' },
  chromium: { label: 'Chromium', present: () => existsSync(CHROMIUM_PATH), install: 'apt-get install chromium, or set CHROMIUM_PATH' },
  script: { label: "util-linux's script", present: () => runs('script', ['--version']), install: 'apt-get install util-linux' },
};

/** Every service, for the run's check of what is there. */
export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

/** Whether a missing service skips its tests (a laptop) instead of failing the run (CI, the default). */
export const ALLOW_SKIP = process.env.ALLOW_SKIP === '1';

/** The sentence a missing service fails the run with. */
export function missingSentence(name: ServiceName): string {
  const { label, install } = SERVICES[name];
  return `${label} is missing (${install}); ALLOW_SKIP=1 skips its tests instead.`;
}

const found = new Map<ServiceName, boolean>();
function present(name: ServiceName): boolean {
  if (!found.has(name)) found.set(name, SERVICES[name].present());
  return found.get(name) as boolean;
}

/**
 * Whether the tests that need `name` run: true when it is here; when it is not, false under
 * ALLOW_SKIP=1, else the test file fails at once with the sentence naming it.
 */
export function needs(name: ServiceName): boolean {
  if (present(name)) return true;
  if (ALLOW_SKIP) return false;
  throw new Error(missingSentence(name));
}

/** The services of `names` that are not here. */
export function missingOf(names: readonly ServiceName[]): ServiceName[] {
  return names.filter((name) => !present(name));
}

function newestPostgres(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(root, versions[0], 'bin');
}

/**
 * A suite's global setup over the services its tests start: fails the run before any test when
 * one is missing (unless ALLOW_SKIP=1), and under ALLOW_SKIP=1 names what was skipped at the end,
 * after vitest's own summary.
 */
export function checkServices(names: readonly ServiceName[]): { setup: () => void; teardown: () => void } {
  const missing = () => missingOf(names);
  return {
    setup() {
      if (missing().length > 0 && !ALLOW_SKIP) throw new Error(missing().map(missingSentence).join('\n'));
    },
    teardown() {
      if (missing().length === 0) return;
      console.log(
        `ALLOW_SKIP=1: the tests of ${missing()
          .map((name) => SERVICES[name].label)
          .join(', ')} were skipped, for lack of them.`,
      );
    },
  };
}
