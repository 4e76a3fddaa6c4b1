import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { createServices, type Services } from '../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { runInbox } from '../contact/run-inbox.ts';

/**
 * The owner's "not spam" made on the command line (`npm run inbox -- release`) and by the
 * server (the admin's button goes through the same repository) over one database record the
 * same news: the tool opens the store with the server's settings (issue 30, item 2).
 */
const HELD = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Held by the filter, then released.', honeypot: '' };
const WEBHOOK = { WEBHOOK_URL: 'https://hooks.example.com/in', WEBHOOK_SECRET: 'whsec_dGVzdC1zZWNyZXQtZm9yLXRoZS1ldmVudHM=' };

let dataDir: string | undefined;
let services: Services | undefined;
afterEach(async () => {
  await services?.close();
  services = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** How many `contact.received` events name the message `id`. */
async function receivedEvents(s: Services, id: number): Promise<number> {
  const rows = await s.store.sql.all<{ data: string }>("SELECT data FROM events WHERE type = 'contact.received'", []);
  return rows.filter((row) => (JSON.parse(row.data) as { id: number }).id === id).length;
}

describe.each([
  ['without a webhook, alert or automatic reply: neither records the news', {}, 0],
  ['with a webhook: each records the news once', WEBHOOK, 1],
])('release on the command line and in the server, %s', (_, env: Record<string, string>, expected) => {
  test('the same events for the same action', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'site-forms-inbox-events-'));
    services = createServices(requireConfig({ DATA_DIR: dataDir, ...env }), createLogger({ level: 'silent' }));
    await services.store.ready;
    const byServer = await services.spam.store.hold(HELD, { reasons: ['honeypot'] });
    const byTool = await services.spam.store.hold(HELD, { reasons: ['honeypot'] });

    expect(await services.spam.store.release(byServer)).toMatchObject({ found: true, changed: true });
    const run = await runInbox(['release', String(byTool)], { DATA_DIR: dataDir, ...env });
    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining(`#${byTool}`) });

    expect({ server: await receivedEvents(services, byServer), tool: await receivedEvents(services, byTool) }).toEqual({
      server: expected,
      tool: expected,
    });
  });
});
