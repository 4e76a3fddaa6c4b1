import { resolve } from 'node:path';
import { type Config, readConfig, storeOptionsOf } from '../config/config.ts';
import { withoutCredentials } from '../config/secrets.ts';
import { verifySmtp } from '../mail/mailer.ts';
import { requireWhenNeeded } from '../lazy.ts';
import { createLogger, describeError } from '../log.ts';
import { checkProviderKeys } from '../newsletter/key-check.ts';
import { DATABASE_FILE } from '../sql/sqlite.ts';
import { openStore, type Store } from '../database/database.ts';
import { pingClamd } from '../files/clamd.ts';
import { createFileStorage } from '../files/storage.ts';

/** What one check found: fine, worth a look, or something that stops the site working as configured. */
export type Finding = { part: string; result: 'ok' | 'warning' | 'error' | 'off'; detail: string };

/** How long the Redis check may wait. */
const REDIS_TIMEOUT_MS = 3_000;

/**
 * Checks everything the server talks to with the configuration it would start with: the
 * variables, the database, the mail server, Redis, the newsletter provider, the files' storage
 * and clamd, each with a call that changes nothing (the storage's probe is removed again); and
 * which sites may post the forms (`ALLOWED_ORIGINS`), the first thing to look at when an owner's
 * site elsewhere says "Something went wrong" (decision 0212).
 * Answers one finding per part, in that order.
 */
export async function diagnose(env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const read = readConfig(env);
  if (!read.ok) return read.problems.map((problem) => ({ part: 'configuration', result: 'error', detail: problem }));
  const { config } = read;
  return [
    { part: 'configuration', result: 'ok', detail: 'every variable is valid' },
    describeOrigins(config),
    await checkDatabase(config),
    await checkSmtp(config),
    await checkRedis(config),
    await checkNewsletter(config),
    await checkFiles(config),
    await checkClamd(config),
  ];
}

function describeOrigins({ allowedOrigins, publicUrl }: Config): Finding {
  if (allowedOrigins.length === 0) {
    return {
      part: 'origins',
      result: 'off',
      detail: 'ALLOWED_ORIGINS is not set: only this site’s own pages may post the forms; a post from any other site is refused',
    };
  }
  const listed = allowedOrigins.length === 1 ? allowedOrigins[0] : `${allowedOrigins.slice(0, -1).join(', ')} and ${allowedOrigins.at(-1)}`;
  const own = publicUrl ? `this site’s own pages at ${publicUrl}` : 'this site’s own pages';
  return {
    part: 'origins',
    result: 'ok',
    detail: `posts are taken from ${listed} (ALLOWED_ORIGINS) and from ${own}; a post from any other site is refused and logged as form.origin_refused`,
  };
}

async function checkFiles(config: Config): Promise<Finding> {
  const storage = createFileStorage({ dataDir: resolve(config.dataDir), s3: config.uploads.s3 });
  try {
    await storage.check();
    return { part: 'files', result: 'ok', detail: `${storage.describe}: a probe was written, read back and removed` };
  } catch (error) {
    return { part: 'files', result: 'error', detail: `${storage.describe}: ${(error as Error).message}` };
  }
}

async function checkClamd(config: Config): Promise<Finding> {
  const clamd = config.uploads.clamd;
  if (!clamd) return { part: 'virus scan', result: 'off', detail: 'CLAMD_SOCKET and CLAMD_HOST are not set: files are not scanned' };
  const where = `clamd at ${'socket' in clamd ? clamd.socket : `${clamd.host}:${clamd.port}`}`;
  try {
    await pingClamd(clamd);
    return { part: 'virus scan', result: 'ok', detail: `${where}: answered PING` };
  } catch (error) {
    return { part: 'virus scan', result: 'error', detail: `${where}: ${(error as Error).message}` };
  }
}

async function checkDatabase(config: Config): Promise<Finding> {
  const where = config.database.url ? `PostgreSQL at ${withoutCredentials(config.database.url)}` : `SQLite at ${resolve(config.dataDir, DATABASE_FILE)}`;
  // Opened inside the try: a DATA_DIR that is a file, or a file that is not SQLite, throws here, and is a finding too.
  let store: Store | undefined;
  try {
    store = openStore(storeOptionsOf(config), createLogger({ level: 'silent' }));
    await store.ready;
    const health = await store.health();
    if (health.problem) return { part: 'database', result: 'error', detail: `${where}: ${health.problem}` };
    return {
      part: 'database',
      result: 'ok',
      detail: `${where}: writable, integrity ${health.integrity}, ${health.pendingMessages} waiting to be sent, ${health.failedMessages} failed`,
    };
  } catch (error) {
    return { part: 'database', result: 'error', detail: `${where}: ${describeError(error)}` };
  } finally {
    await store?.close().catch(() => {});
  }
}

async function checkSmtp(config: Config): Promise<Finding> {
  if (!config.smtp) return { part: 'mail', result: 'off', detail: 'SMTP_URL is not set: contact messages are stored, not emailed' };
  const where = withoutCredentials(config.smtp.url);
  const answer = await verifySmtp(config.smtp);
  if (answer.ok) return { part: 'mail', result: 'ok', detail: `${where}: connected and signed in; messages go to ${config.smtp.to}` };
  return { part: 'mail', result: answer.permanent ? 'error' : 'warning', detail: `${where}: ${answer.reason}${answer.fix ? ` (${answer.fix})` : ''}` };
}

async function checkRedis(config: Config): Promise<Finding> {
  if (!config.redisUrl) return { part: 'redis', result: 'off', detail: 'REDIS_URL is not set: each instance counts its own rate limits' };
  const where = withoutCredentials(config.redisUrl);
  const { Redis } = requireWhenNeeded('ioredis') as typeof import('ioredis');
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: REDIS_TIMEOUT_MS,
    commandTimeout: REDIS_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The connection's own error (ECONNREFUSED, a refused password) says more than the failed command's.
  let cause: unknown;
  redis.on('error', (error) => {
    cause ??= error;
  });
  try {
    await redis.connect();
    await redis.ping();
    return { part: 'redis', result: 'ok', detail: `${where}: answered` };
  } catch (error) {
    return { part: 'redis', result: 'error', detail: `${where}: ${describeError(cause ?? error)}` };
  } finally {
    redis.disconnect();
  }
}

async function checkNewsletter(config: Config): Promise<Finding> {
  const { provider } = config.newsletter;
  const check = await checkProviderKeys(config.newsletter);
  switch (check.result) {
    case 'not needed':
      return { part: 'newsletter', result: 'ok', detail: `local list: ${check.detail}` };
    case 'ok':
      return { part: 'newsletter', result: 'ok', detail: `${provider}: the key and its list, form or segment were accepted` };
    case 'refused':
      return { part: 'newsletter', result: 'error', detail: `${provider}: ${check.variable} was refused (${check.detail})` };
    case 'unreachable':
      return { part: 'newsletter', result: 'warning', detail: `${provider}: could not be reached (${check.detail})` };
  }
}

const MARKS: Record<Finding['result'], string> = { ok: 'ok     ', warning: 'warning', error: 'ERROR  ', off: 'off    ' };

/** The findings as lines for a terminal: one per part, its mark first. */
export function formatFindings(findings: readonly Finding[]): string {
  return findings.map((f) => `${MARKS[f.result]}  ${f.part.padEnd(13)}  ${f.detail}\n`).join('');
}
