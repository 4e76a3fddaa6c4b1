import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';
import { createServices, type Services } from '../../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../../packages/site-forms/src/lib/log.ts';
import { type Reply, runPipeline } from '../../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import { findTarget } from '../../../../packages/site-forms/src/lib/pipeline/routes.ts';
import type { TestEngine } from '../../../support/stores.ts';

// The /api/v1 tests' common parts: the services as a server builds them on one engine (SQLite in
// a folder of its own, or a fresh PostgreSQL database), requests through the pipeline with the
// app's own route table, keys made with the store, and messages received at a moment of the test's.

export const T0 = new Date('2030-01-01T10:00:00.000Z');
export const at = (ms: number) => new Date(T0.getTime() + ms);

export type V1 = {
  services: Services;
  /** What the services logged, each line parsed. */
  logs: Array<Record<string, unknown>>;
  call(method: string, path: string, options?: { key?: string; body?: string; type?: string; ip?: string }): Promise<Reply>;
  makeKey(name: string, scope: 'read' | 'write', forms?: string[] | null): Promise<{ key: string; id: number }>;
  /** Stores a message of `form` received at `when`; answers its id. */
  receive(form: string, when: Date, more?: { name?: string; message?: string; held?: string[] }): Promise<number>;
};

/** The services for each test on `engine`, with the test's clock (only `Date` is faked, decision 0215). */
export function useV1(engine: TestEngine): V1 {
  const v1 = {} as V1;
  let dataDir: string;
  beforeEach(async () => {
    if (!engine.available) return;
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    dataDir = mkdtempSync(join(tmpdir(), 'api-v1-'));
    // PostgreSQL: a fresh database of the engine's; SQLite: the services' own file in the folder.
    const url = engine.name === 'PostgreSQL' ? (await engine.open()).url : undefined;
    const config = requireConfig({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', ...(url && { DATABASE_URL: url }) });
    const logs: Array<Record<string, unknown>> = [];
    const services = createServices(config, createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }));
    await services.store.ready;
    Object.assign(v1, {
      services,
      logs,
      async call(method, path, { key, body, type, ip = '192.0.2.1' } = {}) {
        const headers: Record<string, string> = { host: 'site.test' };
        if (key !== undefined) headers.authorization = `Bearer ${key}`;
        if (type !== undefined) headers['content-type'] = type;
        const request = new Request(`http://site.test${path}`, { method, headers, ...(body !== undefined && { body }) });
        const target = findTarget(path);
        if (target.kind !== 'route') throw new Error(`${path} is no route (${target.kind})`);
        return runPipeline({ request, target, socketAddress: ip, services });
      },
      async makeKey(name, scope, forms = null) {
        const made = await services.api.keys.create({ name, scope, forms, createdBy: 'cli' }, new Date());
        if (!made.ok) throw new Error('not made');
        return { key: made.key, id: made.record.id };
      },
      async receive(form, when, more = {}) {
        vi.setSystemTime(when);
        const { id } = await services.store.messages.receive({
          name: more.name ?? 'Ada Lovelace',
          email: 'ada@example.com',
          message: more.message ?? `A message of the ${form} form.`,
          held: more.held,
          form,
        });
        vi.setSystemTime(T0);
        return id;
      },
    } satisfies V1);
  });
  afterEach(async () => {
    if (!engine.available) return;
    vi.useRealTimers();
    await v1.services.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return v1;
}

/** What the tests read of an answer's JSON (the OpenAPI test checks its whole shape). */
export type V1Body = {
  success: boolean;
  code?: string;
  next: string | null;
  messages: Array<{ id: number; excerpt: string }>;
  message: { files: Array<{ url: string; expiresAt: string }> };
  subscribers: Array<{ email: string }>;
  forms: Array<{ name: string }>;
  [name: string]: unknown;
};

/** An answer's JSON. */
export const bodyOf = (reply: Reply) => ('body' in reply && typeof reply.body === 'string' ? (JSON.parse(reply.body) as V1Body) : undefined);
