import { describe, expect, test } from 'vitest';
import { readConfig, requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';

const problemsOf = (env: Record<string, string>) => {
  const result = readConfig(env);
  return result.ok ? [] : result.problems;
};

describe('the configuration of files with a message', () => {
  test('by default: 25 MB a post, five minutes for it to arrive, the local folder, no scan', () => {
    expect(requireConfig({}).uploads).toEqual({
      maxTotalBytes: 26_214_400,
      diskMinFreeBytes: 536_870_912,
      timeoutMs: 300_000,
      s3: undefined,
      clamd: undefined,
    });
  });

  test('UPLOAD_TIMEOUT_SECONDS and REQUEST_TIMEOUT_SECONDS as set, in ms', () => {
    const config = requireConfig({ UPLOAD_TIMEOUT_SECONDS: '900', REQUEST_TIMEOUT_SECONDS: '20' });
    expect([config.uploads.timeoutMs, config.requestTimeoutMs]).toEqual([900_000, 20_000]);
    expect(requireConfig({}).requestTimeoutMs).toBe(30_000);
  });

  test('the object store and clamd as set', () => {
    const { uploads } = requireConfig({
      UPLOAD_MAX_TOTAL_BYTES: '1000000',
      UPLOAD_DISK_MIN_FREE_BYTES: '0',
      UPLOAD_TIMEOUT_SECONDS: '60',
      S3_ENDPOINT: 'http://127.0.0.1:9000/',
      S3_BUCKET: 'forms',
      S3_REGION: 'eu-central-1',
      S3_ACCESS_KEY_ID: 'key',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_TIMEOUT_SECONDS: '5',
      CLAMD_HOST: '127.0.0.1',
      CLAMD_PORT: '3310',
    });
    expect(uploads).toEqual({
      maxTotalBytes: 1_000_000,
      diskMinFreeBytes: 0,
      timeoutMs: 60_000,
      s3: { endpoint: 'http://127.0.0.1:9000', bucket: 'forms', region: 'eu-central-1', accessKeyId: 'key', secretAccessKey: 'secret', timeoutMs: 5_000 },
      clamd: { host: '127.0.0.1', port: 3310 },
    });
    expect(requireConfig({ CLAMD_SOCKET: '/run/clamav/clamd.ctl' }).uploads.clamd).toEqual({ socket: '/run/clamav/clamd.ctl' });
    // A write to the store waits 30 s at most unless S3_TIMEOUT_SECONDS says otherwise (issue 39 item 18).
    expect(requireConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'forms' }).uploads.s3?.timeoutMs).toBe(30_000);
  });

  test.each([
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET is required with S3_ENDPOINT'],
    [{ S3_BUCKET: 'forms' }, 'S3_ENDPOINT is required with S3_BUCKET'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'forms', S3_ACCESS_KEY_ID: 'key' }, 'S3_SECRET_ACCESS_KEY is required with S3_ACCESS_KEY_ID'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'f' }, 'S3_BUCKET must be a bucket name of 3 to 63 characters: a-z, 0-9, . and -'],
    [{ CLAMD_PORT: '3310' }, 'CLAMD_HOST is required with CLAMD_PORT'],
    [{ CLAMD_HOST: 'clamd' }, 'CLAMD_PORT is required with CLAMD_HOST'],
    [{ CLAMD_SOCKET: '/run/clamd.ctl', CLAMD_HOST: 'clamd', CLAMD_PORT: '3310' }, 'CLAMD_SOCKET is set beside CLAMD_HOST: choose one'],
    [{ UPLOAD_MAX_TOTAL_BYTES: 'lots' }, 'UPLOAD_MAX_TOTAL_BYTES must be a whole number'],
    [{ UPLOAD_TIMEOUT_SECONDS: '0' }, 'UPLOAD_TIMEOUT_SECONDS must be at least 1'],
    [{ UPLOAD_TIMEOUT_SECONDS: '86401' }, 'UPLOAD_TIMEOUT_SECONDS must be at most 86400'],
    [{ UPLOAD_TIMEOUT_SECONDS: '5m' }, 'UPLOAD_TIMEOUT_SECONDS must be a whole number'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'forms', S3_TIMEOUT_SECONDS: '0' }, 'S3_TIMEOUT_SECONDS must be at least 1'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'forms', S3_TIMEOUT_SECONDS: '3601' }, 'S3_TIMEOUT_SECONDS must be at most 3600'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'forms', S3_TIMEOUT_SECONDS: '30s' }, 'S3_TIMEOUT_SECONDS must be a whole number'],
    [{ REQUEST_TIMEOUT_SECONDS: '0' }, 'REQUEST_TIMEOUT_SECONDS must be at least 1'],
    [{ REQUEST_TIMEOUT_SECONDS: '301' }, 'REQUEST_TIMEOUT_SECONDS must be at most 300'],
  ])('a half-set or malformed setting fails at start naming the variable: %o', (env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });
});
