import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FormDefinition, FormErrors } from '../forms/definition.ts';
import type { IncomingRequest } from '../http/form.ts';
import { type Failure, failure } from '../http/outcome.ts';
import { texts } from '../i18n/texts.ts';
import { describeError, type Logger } from '../log.ts';
import { DAY_MS, HOUR_MS, type HousekeepingJob } from '../housekeeping.ts';
import { type ClamdAddress, ClamdUnavailable, pingClamd, scanFile } from './clamd.ts';
import { type FileRecords, type NewFile, newFileId } from './files.ts';
import { discard, type ReceivedFile, readUpload, type UploadRead } from './multipart.ts';
import { createFileStorage, type FileStorage, freeBytes, incomingFolder, newStorageKey, type S3Settings } from './storage.ts';

/** The settings of files with a message, as src/lib/config/uploads.ts reads them. */
export type UploadSettings = {
  /** The most bytes of files one post may carry (UPLOAD_MAX_TOTAL_BYTES). */
  maxTotalBytes: number;
  /** Below this many free bytes on the disk of DATA_DIR/files, a post's first file is refused with a 503 (UPLOAD_DISK_MIN_FREE_BYTES); posts without files go on. */
  diskMinFreeBytes: number;
  /** How long a post with files may take to arrive whole, in ms (UPLOAD_TIMEOUT_SECONDS); past it, a 408 and nothing kept. */
  timeoutMs?: number;
  /** The object store, or `undefined` for the local folder DATA_DIR/files. */
  s3: S3Settings | undefined;
  /** clamd, or `undefined` when files are not scanned. */
  clamd: ClamdAddress | undefined;
};

/** What keeping a post's files gave: their rows to write with the message, or the refusal to answer with (nothing kept). */
export type Kept = { ok: true; records: NewFile[] } | { ok: false; failure: Failure } | { ok: false; errors: FormErrors };

/** Files with a message, from the post to the storage: the one service the handlers, the housekeeping and the doctor use. */
export type Uploads = {
  readonly storage: FileStorage;
  /** Reads a post of a form with files; its first file is refused with a 503 when the disk is below UPLOAD_DISK_MIN_FREE_BYTES (a post without files is read as ever). */
  read(request: IncomingRequest, form: FormDefinition): Promise<UploadRead>;
  /** Scans each file (with clamd configured) and puts it into the storage; on any refusal nothing stays stored. */
  keep(files: readonly ReceivedFile[], form: FormDefinition, client?: string): Promise<Kept>;
  /** Removes stored objects whose message could not be written (the caller's transaction failed). */
  unstore(records: readonly NewFile[]): Promise<void>;
  /** Removes a post's temp files; called once the post is answered, whatever the answer. */
  discard(files: readonly ReceivedFile[]): Promise<void>;
  /** The housekeeping's jobs: temp files left by a killed process, the stored files of deleted messages, and stored objects no row names. */
  jobs(files: FileRecords): HousekeepingJob[];
  /** clamd's PING, for the doctor; `undefined` when no scan is configured. */
  pingScanner(): Promise<void> | undefined;
};

/** How old a temp file must be before the housekeeping takes it for a killed process's. */
export const INCOMING_MAX_AGE_MS = 60 * 60 * 1000;

/** How old a stored object must be before the housekeeping takes it for an orphan when no row names it (decision 0183). */
export const ORPHAN_MIN_AGE_MS = HOUR_MS;

/** A 503 that says when to come back, as a database outage's does. */
function unavailable(): Failure {
  return failure(503, texts.refusals.uploadsUnavailable, { headers: { 'retry-after': '60' } });
}

/** Builds the uploads of a process from its configuration; `scan` stands in for clamd only where a test says so. */
export function createUploads(
  settings: UploadSettings,
  { dataDir, logger, scan = scanFile }: { dataDir: string; logger: Logger; scan?: typeof scanFile },
): Uploads {
  const storage = createFileStorage({ dataDir, s3: settings.s3 });
  const incoming = incomingFolder(dataDir);
  const clamd: ClamdAddress | undefined = settings.clamd;
  // Logged once per outage of clamd, as the database's is (store/state.ts).
  let clamdDown = false;
  const uploads: Uploads = {
    storage,
    read(request, form) {
      // Asked as the first file arrives: a post without files is no use of the disk, and a low disk must not take the form down (issue 39 item 17).
      const beforeFirstFile = async () => {
        try {
          if ((await freeBytes(incoming)) >= settings.diskMinFreeBytes) return undefined;
          logger.warn('upload.disk_full', { freeBelow: settings.diskMinFreeBytes });
        } catch (error) {
          logger.error('upload.incoming_unusable', { error: describeError(error) });
        }
        return unavailable();
      };
      return readUpload(request, form, incoming, { maxTotalBytes: settings.maxTotalBytes, timeoutMs: settings.timeoutMs, beforeFirstFile });
    },
    async keep(files, form, client) {
      if (clamd) {
        for (const file of files) {
          try {
            const result = await scan(clamd, file.path);
            if (clamdDown) logger.info('upload.scanner_recovered', {});
            clamdDown = false;
            if (!result.clean) {
              // Once, with what clamd named: never the file's content or its name.
              logger.warn('upload.infected', { field: file.field, signature: result.signature, size: file.size, ...(client && { client }) });
              return {
                ok: false,
                errors: { [file.field]: [texts.validation.fileRefused(form.fields.find((field) => field.name === file.field)?.label ?? file.field)] },
              };
            }
          } catch (error) {
            if (!(error instanceof ClamdUnavailable)) throw error;
            if (!clamdDown) logger.error('upload.scanner_unavailable', { error: error.message });
            clamdDown = true;
            return { ok: false, failure: unavailable() };
          }
        }
      }
      const records: NewFile[] = [];
      try {
        for (const file of files) {
          const id = newFileId();
          const record: NewFile = { id, field: file.field, name: file.name, size: file.size, type: file.type, storageKey: newStorageKey(id) };
          await storage.put(record.storageKey, file.path, file.size, file.type);
          records.push(record);
        }
      } catch (error) {
        logger.error('upload.storage_failed', { storage: storage.describe, error: describeError(error) });
        // What was stored goes again; an object a failed put may have left (a store that stopped
        // answering) has no row, and the orphan sweep takes it (decision 0183), not this visitor's wait.
        await uploads.unstore(records);
        return { ok: false, failure: unavailable() };
      }
      return { ok: true, records };
    },
    async unstore(records) {
      for (const record of records) {
        // What cannot be removed now has no row: logged with its key for the owner to remove.
        await storage
          .remove(record.storageKey)
          .catch((error) => logger.error('upload.unstore_failed', { key: record.storageKey, error: describeError(error) }));
      }
    },
    discard: (files) => discard(files),
    jobs: (records) => [
      {
        name: 'files.incoming',
        everyMs: INCOMING_MAX_AGE_MS,
        run: async (now) => {
          const removed = await removeStaleIncoming(incoming, now);
          if (removed > 0) logger.info('upload.stale_removed', { files: removed });
        },
      },
      {
        name: 'files.deleted-messages',
        everyMs: 5 * 60 * 1000,
        run: async () => {
          let removed = 0;
          for (let batch = await records.sweep(storage); batch > 0; batch = await records.sweep(storage)) removed += batch;
          if (removed > 0) logger.info('upload.files_removed', { files: removed });
        },
      },
      {
        name: 'files.orphans',
        everyMs: DAY_MS,
        run: async (now) => {
          const removed = await removeOrphans(storage, records, now);
          // The count alone: a key is ours, but the log has no use for it.
          if (removed > 0) logger.info('upload.orphans_removed', { files: removed });
        },
      },
    ],
    pingScanner: () => (clamd ? pingClamd(clamd) : undefined),
  };
  return uploads;
}

/** Removes temp files older than an hour (a process killed during an upload); answers how many. */
export async function removeStaleIncoming(incoming: string, now: Date): Promise<number> {
  let names: string[];
  try {
    names = await readdir(incoming);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(incoming, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now.getTime() - info.mtimeMs > INCOMING_MAX_AGE_MS) {
      await rm(path, { force: true, recursive: true });
      removed++;
    }
  }
  return removed;
}

/** How many keys the orphan sweep asks the store about at once: one page of an S3 listing. */
const ORPHAN_BATCH = 1000;

/**
 * Removes stored objects older than ORPHAN_MIN_AGE_MS that no `files` row names (a process killed
 * between the put and its message's commit, an unstore that failed); answers how many went.
 * Hint: with no file recorded at all the database is taken for the wrong one (or one not yet
 * copied into) and nothing is removed (decision 0184); a row's object is never touched.
 */
export async function removeOrphans(
  storage: Pick<FileStorage, 'list' | 'remove'>,
  records: Pick<FileRecords, 'recordedKeys' | 'anyRecorded'>,
  now: Date,
): Promise<number> {
  if (!(await records.anyRecorded())) return 0;
  let removed = 0;
  let batch: string[] = [];
  const settle = async () => {
    const recorded = await records.recordedKeys(batch);
    for (const key of batch) {
      if (recorded.has(key)) continue;
      await storage.remove(key);
      removed++;
    }
    batch = [];
  };
  for await (const key of storage.list(new Date(now.getTime() - ORPHAN_MIN_AGE_MS))) {
    batch.push(key);
    if (batch.length === ORPHAN_BATCH) await settle();
  }
  if (batch.length > 0) await settle();
  return removed;
}
