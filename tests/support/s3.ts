import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** A real S3-compatible server (s3rver) of our own on 127.0.0.1, with one bucket, and the settings that reach it. */
export type S3Server = {
  endpoint: string;
  bucket: string;
  /** The S3_* settings of the storage (path-style, as with MinIO). */
  settings: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
  /** The folder where s3rver keeps the objects, to see what is stored without the SDK. */
  directory: string;
  stop(): Promise<void>;
};

/** Starts s3rver on a free port with the bucket `bucket` (3 characters at least); `stop` removes its folder. */
export async function startS3(bucket = 'forms-files'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'site-forms-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  return served(port, bucket, directory, () => server.close());
}

/** An s3rver on `port` as the tests use it; `stop` ends it (`close`) and removes its folder. */
function served(port: number, bucket: string, directory: string, close: () => Promise<unknown>): S3Server {
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    // s3rver's own fixed pair (S3RVER/S3RVER); any other is refused as a real S3 would.
    settings: { endpoint, bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async stop() {
      await close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * s3rver as `startS3` starts it, in a process of its own with OpenSSL's legacy provider: the only
 * way it answers a listing longer than a page, since it writes its continuation tokens with DES,
 * which Node 24's OpenSSL refuses (its page answers a 500 in-process).
 */
export async function startS3Process(bucket = 'forms-files'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'site-forms-s3-'));
  const script = `const S3rver = require(${JSON.stringify(createRequire(import.meta.url).resolve('s3rver'))});
new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: process.argv[1], configureBuckets: [{ name: process.argv[2], configs: [] }] })
  .run().then(({ port }) => process.stdout.write(port + '\\n'));`;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
    child.stdout.setEncoding('utf8').once('data', (line: string) => resolve(Number.parseInt(line, 10)));
  });
  return served(port, bucket, directory, async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  });
}
