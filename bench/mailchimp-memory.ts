/**
 * What bounds the Mailchimp client's memory: runs bench/mailchimp-client.ts once per variant
 * (V8 flags, agent), interleaved over rounds against one fake Mailchimp on 127.0.0.1, and
 * prints the median calls per second and peak RSS of each, with ratios to the default.
 * `npx node bench/mailchimp-memory.ts` (MC_ROUNDS, MC_CALLS, MC_CONCURRENCY, MC_VARIANTS=a,b).
 */
import { spawn, spawnSync } from 'node:child_process';

const ROUNDS = Number(process.env.MC_ROUNDS ?? 3);

type Variant = { name: string; flags: string[]; env?: Record<string, string> };
const VARIANTS: Variant[] = [
  { name: 'agent per request (as shipped by the client)', flags: [], env: { MC_AGENT: 'per-request' } },
  { name: 'default', flags: [] },
  { name: 'semi 2 MB', flags: ['--max-semi-space-size=2'] },
  { name: 'semi 4 MB', flags: ['--max-semi-space-size=4'] },
  { name: 'semi 8 MB', flags: ['--max-semi-space-size=8'] },
  { name: 'semi 16 MB', flags: ['--max-semi-space-size=16'] },
  { name: 'optimize-for-size', flags: ['--optimize-for-size'] },
  { name: 'old space 64 MB', flags: ['--max-old-space-size=64'] },
];
const only = process.env.MC_VARIANTS?.split(',');
const chosen = only ? VARIANTS.filter((v) => only.some((o) => v.name.includes(o))) : VARIANTS;

const provider = spawn(process.execPath, [new URL('./fake-provider.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => {
  provider.stdout.on('data', (chunk: Buffer) => {
    const match = /"port":(\d+)/.exec(String(chunk));
    if (match) resolve(Number(match[1]));
  });
});

type Row = { rps: number; peakMb: number; newSpaceMb: number; oldSpaceMb: number; heapAfterGcMb: number; failed: number };
const results = new Map<string, Row[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 ? [...chosen].reverse() : chosen) {
      const child = spawnSync(process.execPath, ['--expose-gc', ...variant.flags, new URL('./mailchimp-client.ts', import.meta.url).pathname], {
        env: { ...process.env, MC_BASE_URL: `http://127.0.0.1:${port}/3.0`, ...variant.env },
        encoding: 'utf8',
        timeout: 300_000,
      });
      const row = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as Row;
      results.set(variant.name, [...(results.get(variant.name) ?? []), row]);
      process.stderr.write(
        `  ${variant.name.padEnd(46)} ${row.rps.toFixed(0)} calls/s, peak ${row.peakMb.toFixed(0)} MB (young ${row.newSpaceMb.toFixed(0)}, old ${row.oldSpaceMb.toFixed(0)}), heap after GC ${row.heapAfterGcMb.toFixed(1)} MB${row.failed ? `, ${row.failed} failed` : ''}\n`,
      );
    }
  }
} finally {
  provider.kill('SIGTERM');
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const base = results.get('default');
const baseRps = base ? median(base.map((r) => r.rps)) : undefined;
console.log('| variant | calls/s (median) | × default | peak RSS MB (median) | max | young gen MB (median) |');
console.log('|---|---|---|---|---|---|');
for (const variant of chosen) {
  const rows = results.get(variant.name) ?? [];
  const rps = median(rows.map((r) => r.rps));
  console.log(
    `| ${variant.name} | ${rps.toFixed(0)} | ${baseRps ? (rps / baseRps).toFixed(2) : ''} | ${median(rows.map((r) => r.peakMb)).toFixed(0)} | ${Math.max(...rows.map((r) => r.peakMb)).toFixed(0)} | ${median(rows.map((r) => r.newSpaceMb)).toFixed(0)} |`,
  );
}
