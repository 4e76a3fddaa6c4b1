import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { readForm } from '../../../packages/site-forms/src/lib/http/form.ts';
import { accepted } from '../../../packages/site-forms/src/lib/http/outcome.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { bodyLimitOf, refuseDeclared } from '../../../packages/site-forms/src/lib/pipeline/body-limit.ts';
import { runPipeline } from '../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import type { Route } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

/**
 * Issue 30 item 3: the body limit is one rule. A route's limit is decided by `bodyLimitOf`
 * (64 KiB, plus the files' total for a route that takes files), a declared length is compared
 * with it by `refuseDeclared` before a byte is read, and the streaming read holds the same
 * number for a body that says less than it sends or says nothing (chunked).
 */
let services: Services;
let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'body-limit-'));
  services = createServices(requireConfig({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', UPLOAD_MAX_TOTAL_BYTES: '4096' }), createLogger({ level: 'silent' }));
});

afterEach(async () => {
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const TOO_LARGE = '{"success":false,"error":"The form is too large; the limit is 64 KB"}';
const FILES_TOO_LARGE = '{"success":false,"error":"The files are too large together; the limit is 4.1 kB"}';

/** A post whose body is `bytes` bytes, sent as a stream, with `declared` as its Content-Length (none when undefined). */
function post(bytes: number, declared?: number): Request {
  const text = `a=${'x'.repeat(bytes - 2)}`;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text.slice(0, 1000)));
      controller.enqueue(new TextEncoder().encode(text.slice(1000)));
      controller.close();
    },
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', host: 'site.test' };
  if (declared !== undefined) headers['content-length'] = String(declared);
  return new Request('http://site.test/api/test', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

/** A route of the test's own whose handler reads the form as every handler does, and counts its calls. */
function route(files: boolean): { route: Route; calls: () => number } {
  let calls = 0;
  const route: Route = {
    path: '/api/test',
    kind: 'form',
    files,
    methods: {
      POST: async (request) => {
        calls++;
        const form = await readForm(request, bodyLimitOf({ files }, services.config.uploads).bytes);
        return form.ok ? accepted() : form.failure;
      },
    },
  };
  return { route, calls: () => calls };
}

async function answer(request: Request, files = false): Promise<{ status: number; body: string | null; handled: number }> {
  const { route: own, calls } = route(files);
  const reply = await runPipeline({ request, target: { kind: 'route', route: own }, socketAddress: '192.0.2.1', services });
  if (reply.kind !== 'answer') throw new Error(`not an answer: ${reply.kind}`);
  return { status: reply.status, body: reply.body, handled: calls() };
}

describe('the one body limit', () => {
  test('a route without files: 64 KiB, and the 413 of the spec past it', () => {
    expect(bodyLimitOf({}, { maxTotalBytes: 4096 })).toEqual({
      bytes: 65_536,
      refusal: { kind: 'failure', status: 413, error: 'The form is too large; the limit is 64 KB' },
    });
  });

  test('a route that takes files: the files’ total on top of the fields’ 64 KiB, and the 413 names the total', () => {
    expect(bodyLimitOf({ files: true }, { maxTotalBytes: 4096 })).toEqual({
      bytes: 69_632,
      refusal: { kind: 'failure', status: 413, error: 'The files are too large together; the limit is 4.1 kB' },
    });
  });

  test.each([
    ['65536', undefined],
    ['65537', 413],
    [null, undefined],
    ['not a number', undefined],
  ])('a declared length of %s: %s', (declared, status) => {
    expect(refuseDeclared(declared, bodyLimitOf({}, { maxTotalBytes: 4096 }))?.status).toBe(status);
  });
});

describe('the limit on the road', () => {
  test('declared over: 413 from the header, the handler never called', async () => {
    await expect(answer(post(10, 65_537))).resolves.toEqual({ status: 413, body: TOO_LARGE, handled: 0 });
  });

  test('declared under, but the body is over: 413 from the read', async () => {
    await expect(answer(post(65_537, 100))).resolves.toEqual({ status: 413, body: TOO_LARGE, handled: 1 });
  });

  test('chunked, no length, over: 413 from the read; exactly the limit is read', async () => {
    await expect(answer(post(65_537))).resolves.toEqual({ status: 413, body: TOO_LARGE, handled: 1 });
    await expect(answer(post(65_536))).resolves.toEqual({ status: 200, body: '{"success":true}', handled: 1 });
  });

  test('a files route: its own limit, declared past it is the upload message, within it reaches the handler', async () => {
    await expect(answer(post(10, 69_633), true)).resolves.toEqual({ status: 413, body: FILES_TOO_LARGE, handled: 0 });
    await expect(answer(post(10, 69_632), true)).resolves.toMatchObject({ handled: 1 });
  });
});
