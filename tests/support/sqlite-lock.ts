import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Another process holding SQLite's write lock on the file, as a backup or the sqlite3 shell does.
 * Hint: with `releaseAfterMs` it lets go by itself after that long, so a test can wait for the lock
 * while this process is blocked inside SQLite (the store waits there only while it opens).
 */
export async function holdWriteLock(file: string, { releaseAfterMs }: { releaseAfterMs?: number } = {}): Promise<ChildProcess> {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    db.exec("INSERT INTO subscribers (email, created_at) VALUES ('lock@example.com', 'now')");
    process.stdout.write('locked\\n');
    const release = Number(process.argv[2]);
    if (release > 0) setTimeout(() => db.exec('ROLLBACK'), release);
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script, file, String(releaseAfterMs ?? 0)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code}`)));
  });
  return child;
}
