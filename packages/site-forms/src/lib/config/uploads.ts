import * as v from 'valibot';
import type { ClamdAddress } from '../files/clamd.ts';
import type { UploadSettings } from '../files/uploads.ts';
import { type ConfigConcern, integer, optionalText, optionalUrl, readVariables } from './variables.ts';

/** Files with a message (issue 31): the limits of a post, the storage, the virus scan. */
export type UploadsConfig = { uploads: UploadSettings & { timeoutMs: number } };

const MB = 1024 * 1024;

const VARIABLES = {
  UPLOAD_MAX_TOTAL_BYTES: v.optional(integer(1, 10 * 1024 * MB), String(25 * MB)),
  UPLOAD_DISK_MIN_FREE_BYTES: v.optional(integer(0, Number.MAX_SAFE_INTEGER), String(512 * MB)),
  // 25 MB over a 1 Mbit/s uplink takes about 210 s: five minutes carry it (decision 0185).
  UPLOAD_TIMEOUT_SECONDS: v.optional(integer(1, 86_400), '300'),
  S3_ENDPOINT: optionalUrl,
  S3_BUCKET: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^$|^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name of 3 to 63 characters: a-z, 0-9, . and -')),
    '',
  ),
  S3_REGION: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[a-z0-9-]{0,40}$/, 'must be a region name such as us-east-1')), ''),
  // A write to the store that takes longer fails with a 503 and keeps nothing (issue 39 item 18, decision 0202).
  S3_TIMEOUT_SECONDS: v.optional(integer(1, 3_600), '30'),
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  CLAMD_SOCKET: optionalText,
  CLAMD_HOST: optionalText,
  CLAMD_PORT: v.optional(v.union([v.literal(''), integer(1, 65535)]), ''),
};

/** UPLOAD_MAX_TOTAL_BYTES, UPLOAD_DISK_MIN_FREE_BYTES, UPLOAD_TIMEOUT_SECONDS, S3_* (S3_TIMEOUT_SECONDS among them) and CLAMD_*: each half-set pair fails at start, naming what is missing. */
export const uploads: ConfigConcern<UploadsConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    if (e.S3_ENDPOINT && !e.S3_BUCKET) problems.push('S3_BUCKET is required with S3_ENDPOINT');
    if (e.S3_BUCKET && !e.S3_ENDPOINT) problems.push('S3_ENDPOINT is required with S3_BUCKET');
    if (Boolean(e.S3_ACCESS_KEY_ID) !== Boolean(e.S3_SECRET_ACCESS_KEY))
      problems.push(e.S3_ACCESS_KEY_ID ? 'S3_SECRET_ACCESS_KEY is required with S3_ACCESS_KEY_ID' : 'S3_ACCESS_KEY_ID is required with S3_SECRET_ACCESS_KEY');
    if (e.S3_ACCESS_KEY_ID && !e.S3_ENDPOINT) problems.push('S3_ACCESS_KEY_ID is set without S3_ENDPOINT');
    if (e.CLAMD_PORT !== '' && !e.CLAMD_HOST) problems.push('CLAMD_HOST is required with CLAMD_PORT');
    if (e.CLAMD_HOST && e.CLAMD_PORT === '') problems.push('CLAMD_PORT is required with CLAMD_HOST');
    if (e.CLAMD_SOCKET && e.CLAMD_HOST) problems.push('CLAMD_SOCKET is set beside CLAMD_HOST: choose one');
    const s3 =
      e.S3_ENDPOINT && e.S3_BUCKET
        ? {
            endpoint: e.S3_ENDPOINT,
            bucket: e.S3_BUCKET,
            region: e.S3_REGION || 'us-east-1',
            accessKeyId: e.S3_ACCESS_KEY_ID,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY,
            timeoutMs: e.S3_TIMEOUT_SECONDS * 1000,
          }
        : undefined;
    const clamd: ClamdAddress | undefined = e.CLAMD_SOCKET
      ? { socket: e.CLAMD_SOCKET }
      : e.CLAMD_HOST && e.CLAMD_PORT !== ''
        ? { host: e.CLAMD_HOST, port: e.CLAMD_PORT }
        : undefined;
    const timeoutMs = e.UPLOAD_TIMEOUT_SECONDS * 1000;
    return { config: { uploads: { maxTotalBytes: e.UPLOAD_MAX_TOTAL_BYTES, diskMinFreeBytes: e.UPLOAD_DISK_MIN_FREE_BYTES, timeoutMs, s3, clamd } }, problems };
  },
  describe: ({ uploads: { maxTotalBytes, diskMinFreeBytes, timeoutMs, s3, clamd } }) => ({
    uploads: {
      maxTotalBytes,
      diskMinFreeBytes,
      timeoutMs,
      storage: s3 ? { s3: s3.endpoint.replace(/\/\/[^@/]*@/, '//'), bucket: s3.bucket, region: s3.region } : 'files in DATA_DIR',
      virusScan: clamd ? ('socket' in clamd ? { clamd: clamd.socket } : { clamd: `${clamd.host}:${clamd.port}` }) : 'off',
    },
  }),
};
