// Sums StrykerJS JSON reports (reports/mutation/*.json, or the files named) into the mutation
// score per directory and overall, as Stryker counts it: (killed + timed out) over
// (killed + timed out + survived + no coverage); errors and ignored mutants are left out.
// Where several reports hold the same file, the newest report's results count.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const folder = 'reports/mutation';
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(folder)
        .filter((name) => name.endsWith('.json'))
        .map((name) => join(folder, name));
const byFile = new Map();
for (const file of files.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)) {
  for (const [source, result] of Object.entries(JSON.parse(readFileSync(file, 'utf8')).files)) byFile.set(source, result.mutants);
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const tally = new Map();
const add = (key, status) => {
  const t = tally.get(key) ?? { detected: 0, undetected: 0 };
  if (DETECTED.has(status)) t.detected++;
  if (UNDETECTED.has(status)) t.undetected++;
  tally.set(key, t);
};
// Static mutants (run once, at import) cost a whole test file each; a run with --ignoreStatic
// leaves them out, so the last line compares runs with and without them.
for (const [source, mutants] of byFile) {
  for (const mutant of mutants) {
    add(dirname(source), mutant.status);
    add('all files', mutant.status);
    if (!mutant.static) add('all files, no static', mutant.status);
  }
}

const score = ({ detected, undetected }) => ((100 * detected) / (detected + undetected || 1)).toFixed(2);
const rows = [...tally].sort(([a], [b]) => (a.startsWith('all files') ? 1 : 0) - (b.startsWith('all files') ? 1 : 0) || a.localeCompare(b));
for (const [key, t] of rows)
  console.log(`${key.padEnd(24)} ${score(t).padStart(6)} %  ${String(t.detected).padStart(5)} detected  ${String(t.undetected).padStart(4)} undetected`);
