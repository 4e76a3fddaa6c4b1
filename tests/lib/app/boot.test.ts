import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { ready } from '../../../packages/site-forms/src/server/boot.ts';

/**
 * The start's last step before the server answers (server/boot.ts `ready`): the admin's first
 * owner is made or found first (review S5 of issue 42 step S3a), so an old cookie in the first
 * instant resumes and a look at admin_users right after the start finds them.
 */
let services: Services | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await services?.close().catch(() => {});
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('the start waits for the admin to be ready (the first owner made) before it answers', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'boot-'));
  const config = requireConfig({ DATA_DIR: dataDir });
  services = createServices(config, silentLogger);
  // The admin's `ready`, held open, telling when the start asks for it.
  let asked!: () => void;
  const askedFor = new Promise<void>((resolve) => (asked = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  services.admin!.ready = {
    // biome-ignore lint/suspicious/noThenProperty: a thenable is the point: it tells when the start awaits the admin's ready.
    then: (onReady: () => unknown, onFailure: (error: unknown) => unknown) => {
      asked();
      return held.then(onReady, onFailure);
    },
  } as unknown as Promise<void>;
  const booting = ready(services, config, silentLogger, {});
  await expect(Promise.race([askedFor.then(() => 'waits for the admin'), booting.then(() => 'answers first')])).resolves.toBe('waits for the admin');
  release();
  await expect(booting).resolves.toBe(services);
});
