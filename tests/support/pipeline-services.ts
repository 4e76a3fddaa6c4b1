import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createServices, type Services } from '../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';

/** What an in-process pipeline test works with; a test may replace `services` (closed after it all the same). */
export type PipelineServices = { services: Services; logs: Array<Record<string, unknown>>; dataDir: string };

/**
 * The services as a server builds them, for each test on a SQLite folder of its own, with two
 * accepted posts per client and route and https://partner.example allowed; their log lines
 * collected. Each test's services and folder go with it: hundreds of runs left as many
 * databases behind.
 */
export function usePipelineServices(prefix: string): PipelineServices {
  const site = { logs: [] } as unknown as PipelineServices;
  beforeEach(() => {
    const logs: Array<Record<string, unknown>> = [];
    const dataDir = mkdtempSync(join(tmpdir(), prefix));
    const config = requireConfig({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '2', ALLOWED_ORIGINS: 'https://partner.example' });
    Object.assign(site, {
      logs,
      dataDir,
      services: createServices(config, createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) })),
    });
  });
  afterEach(async () => {
    await site.services.close();
    rmSync(site.dataDir, { recursive: true, force: true });
  });
  return site;
}

/** A contact post the contact form's schema takes. */
export const VALID_CONTACT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

/** The headers with which a browser navigates (a form posted without JavaScript). */
export const NAVIGATION = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
