/**
 * `npm run bench:uploads`: UPLOAD_COUNT (20) concurrent uploads of UPLOAD_MB (20) MB each to a
 * form with a file field of the built server on 127.0.0.1, once with the local folder and once
 * with an S3-compatible server (s3rver), sampling every 100 ms the server's RSS and the time
 * /api/health takes to answer. Beside each, the reference: the same number of `curl` uploads of
 * the same file straight to the same store (a `file://` copy into the folder, a PUT to s3rver).
 * Prints per store: the server's peak RSS, health's median and worst, the uploads' MB/s and the
 * reference's MB/s, and the ratio of the two (ours / curl; the goal is 0.6 × or more); the server's
 * CPU time a MB; for the folder, the same uploads to a bare node:http server that writes each body
 * to a file (bench/bare-upload-server.ts), the floor of any Node server, and ours against it.
 * Not a timed test: run it on a quiet machine (docs/performance.md). UPLOAD_PROFILE=<folder>
 * writes the server's CPU profiles there (`--cpu-prof`).
 * Hint: the server runs with the flags of `npm run serve` (package.json); the uploads are `curl`
 * processes too, so the bench's own process holds no file in memory.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOwnerSite, freshPackage } from '../tests/support/build-site.ts';
import { startS3 } from '../tests/support/s3.ts';
import { median, rssMb, startServer, stopServer } from './serve.ts';

const COUNT = Number(process.env.UPLOAD_COUNT ?? 20);
const MEGABYTES = Number(process.env.UPLOAD_MB ?? 20);
const SIZE = MEGABYTES * 1_000_000;
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'site-forms-uploads-'));

// A form that takes one PDF up to 25 MB, on a page of its own, in a build of its own.
freshPackage();
const built = buildOwnerSite(`bench-uploads-${process.pid}`, {
  'src/forms/apply.form.ts': `import { defineForm } from 'site-forms/config';
export default defineForm({
  name: 'apply',
  title: 'Apply',
  fields: [
    { name: 'name', type: 'text', label: 'Name', required: true },
    { name: 'email', type: 'email', label: 'Email address', required: true },
    { name: 'cv', type: 'file', label: 'CV', accept: ['application/pdf'], maxSize: 25_000_000 },
  ],
});
`,
  'src/pages/apply.astro': `---
import { FormPage } from 'site-forms/pages';
---
<FormPage form="apply" path="/apply" description="Apply." />
`,
  'forms.config.ts': `import apply from './src/forms/apply.form.ts';
import { defineForms } from 'site-forms/config';
export default defineForms({ contactFields: [], forms: [apply] });
`,
});

// One PDF (its signature says so) of SIZE bytes, read by every upload from the disk.
const file = join(work, 'cv.pdf');
const head = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1');
writeFileSync(file, Buffer.concat([head, Buffer.alloc(SIZE - head.length - 6, 0x20), Buffer.from('\n%%EOF')]));
const small = join(work, 'small.pdf');
writeFileSync(small, Buffer.concat([head, Buffer.alloc(1000, 0x20), Buffer.from('\n%%EOF')]));

/** The arguments of `npm run serve` (package.json), with the built entry of this bench's site. */
function serveArgs(): string[] {
  const script: string = JSON.parse(readFileSync('package.json', 'utf8')).scripts.serve;
  const [node, ...args] = script.split(' ');
  if (node !== 'node') throw new Error('npm run serve does not start with node');
  // UPLOAD_PROFILE=<folder>: the server writes a CPU profile there when it stops (`--cpu-prof`).
  const profile = process.env.UPLOAD_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.UPLOAD_PROFILE}`] : [];
  return [...profile, ...args.map((arg) => (arg === 'dist/server/start.mjs' ? built.start : arg))];
}

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return startServer(serveArgs(), { DATA_DIR: mkdtempSync(join(work, 'data-')), SPAM_FILTER: 'off', ...env });
}

/**
 * COUNT `curl` processes at once, each given its own arguments; answers the seconds until the last
 * ended, failing on a status other than `ok` (a `file://` copy has none: `000`).
 */
async function concurrently(argsOf: (n: number) => string[], ok = ['200']): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: COUNT }, async (_, n) => {
      const { stdout } = await run('curl', ['-sS', '-w', '\n%{http_code}', ...argsOf(n)], { maxBuffer: 1024 * 1024 });
      const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
      if (!ok.includes(status)) throw new Error(`curl answered ${status}: ${stdout.slice(0, 300)}`);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** The arguments of the `curl` of upload `n`: the form's post as a browser sends it, to `url`. */
const uploadTo =
  (url: string) =>
  (n: number): string[] => [
    '-H',
    'Accept: application/json',
    '-F',
    `name=Bench ${n}`,
    '-F',
    `email=bench${n}@example.org`,
    '-F',
    `cv=@${file};type=application/pdf`,
    url,
  ];

/**
 * The same uploads to a bare node:http server that writes each body to a file (bench/bare-upload-server.ts,
 * none of our code), started with the same flags: what a Node server pays at least for them.
 */
async function bare(): Promise<{ seconds: number; cpu: number }> {
  const serve = serveArgs().filter((arg) => arg !== built.start && !arg.startsWith('--cpu-prof'));
  const { child, url } = await startServer([...serve, 'bench/bare-upload-server.ts'], { DATA_DIR: mkdtempSync(join(work, 'bare-')) });
  try {
    const before = cpuSeconds(child.pid!);
    const seconds = await concurrently(uploadTo(url));
    const after = cpuSeconds(child.pid!);
    return { seconds, cpu: after.user + after.system - before.user - before.system };
  } finally {
    await stopServer(child);
  }
}

/** The uploads through the server to `store`, with the samples taken meanwhile (and the server's CPU time), and the reference beside them. */
async function measure(store: string, env: Record<string, string>, reference: (n: number) => string[], withBare = false): Promise<string> {
  const { child, url } = await start(env);
  // A first request of each kind is a cold one (the multipart reader and the type check loaded and
  // compiled, the store opened): one of each before the uploads, so the figures are the uploads'.
  for (let i = 0; i < 3; i++) await fetch(`${url}/api/health`).then((r) => r.arrayBuffer());
  await run('curl', [
    '-sS',
    '-o',
    '/dev/null',
    '-F',
    'name=Warm',
    '-F',
    'email=warm@example.org',
    '-F',
    `cv=@${small};type=application/pdf`,
    `${url}/api/forms/apply`,
  ]);
  const rest = rssMb(child.pid!);
  const cpuBefore = cpuSeconds(child.pid!);
  let cpu = { user: 0, system: 0 };
  let peak = rest;
  const health: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, rssMb(child.pid!));
      // Timed by curl, a process of its own: the bench's event loop, busy starting the uploads, must not count.
      const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{time_total}', `${url}/api/health`]);
      health.push(Number(stdout) * 1000);
      if (process.env.UPLOAD_DEBUG)
        console.error(`${store} ${(performance.now() / 1000).toFixed(2)} s: health ${health.at(-1)!.toFixed(0)} ms, rss ${rssMb(child.pid!).toFixed(0)} MB`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  let seconds: number;
  try {
    seconds = await concurrently(uploadTo(`${url}/api/forms/apply`));
    const cpuAfter = cpuSeconds(child.pid!);
    cpu = { user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system };
  } finally {
    sampling = false;
    await sampler;
    await stopServer(child);
  }
  const referenceSeconds = await concurrently(reference, ['200', '000']);
  const floor = withBare ? await bare() : undefined;
  const total = (COUNT * SIZE) / 1e6;
  const perMb = (cpuSeconds: number) => ((cpuSeconds * 1000) / total).toFixed(1);
  return [
    `${store}: ${COUNT} × ${MEGABYTES} MB in ${seconds.toFixed(1)} s = ${(total / seconds).toFixed(0)} MB/s (curl straight to the store: ${(total / referenceSeconds).toFixed(0)} MB/s): ${(referenceSeconds / seconds).toFixed(2)} × curl`,
    `  server CPU for the uploads ${(cpu.user + cpu.system).toFixed(1)} s (user ${cpu.user.toFixed(1)}, system ${cpu.system.toFixed(1)}): ${perMb(cpu.user + cpu.system)} ms a MB, the figure the machine's load moves least`,
    ...(floor
      ? [
          `  a bare node:http server writing each body to a file: ${(total / floor.seconds).toFixed(0)} MB/s, CPU ${perMb(floor.cpu)} ms a MB: ours ${(floor.seconds / seconds).toFixed(2)} × bare, ${((cpu.user + cpu.system) / floor.cpu).toFixed(2)} × its CPU`,
        ]
      : []),
    `  server RSS at rest ${rest.toFixed(0)} MB, at most ${peak.toFixed(0)} MB; /api/health median ${median(health).toFixed(1)} ms, worst ${Math.max(...health).toFixed(1)} ms (${health.length} answers)`,
  ].join('\n');
}

/** The CPU time a process has used, in seconds, in user space and in the kernel (/proc, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

const lines: string[] = [];
try {
  const folder = join(work, 'reference');
  mkdirSync(folder);
  lines.push(await measure('local folder', {}, (n) => ['-T', file, `file://${folder}/copy-${n}.pdf`], true));
  const s3 = await startS3();
  try {
    const { endpoint, bucket, accessKeyId, secretAccessKey, region } = s3.settings;
    lines.push(
      await measure(
        's3rver',
        { S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: region, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey },
        (n) => [
          '-T',
          file,
          '-H',
          'x-amz-content-sha256: UNSIGNED-PAYLOAD',
          '--aws-sigv4',
          `aws:amz:${region}:s3`,
          '--user',
          `${accessKeyId}:${secretAccessKey}`,
          `${endpoint}/${bucket}/reference-${n}.pdf`,
        ],
      ),
    );
  } finally {
    await s3.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  built.remove();
}
for (const line of lines) console.log(line);
