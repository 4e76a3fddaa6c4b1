import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, test } from 'vitest';
import { handleHealth } from '../../src/lib/health.ts';
import { openDatabase } from '../../src/lib/store/database.ts';

describe('GET /api/health', () => {
  test('200 with the provider, a writable database and the messages waiting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'health-'));
    const db = openDatabase(dir);
    db.prepare("INSERT INTO submissions (created_at, name, email, message) VALUES ('t', 'n', 'e@x.co', 'm')").run();
    expect(handleHealth({ db, providerName: 'local' })).toEqual({
      kind: 'data',
      status: 200,
      body: { success: true, provider: 'local', databaseWritable: true, pendingMessages: 1 },
    });
    // The probe leaves nothing behind.
    expect(db.prepare('SELECT count(*) AS n FROM subscribers').get()).toEqual({ n: 0 });
  });

  test('503 when the database does not take writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'health-'));
    openDatabase(dir).close();
    const readOnly = new DatabaseSync(join(dir, 'forms.db'), { readOnly: true });
    expect(handleHealth({ db: readOnly, providerName: 'mailchimp' })).toMatchObject({
      status: 503,
      body: { success: false, databaseWritable: false, provider: 'mailchimp' },
    });
  });
});
