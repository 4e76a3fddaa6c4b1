// The npm registry mirror of these machines lacks some platform builds that packages list
// as optional dependencies, one per OS and CPU (@astrojs/compiler-binding-*, @biomejs/cli-*).
// `npm install` then leaves them out of package-lock.json and `npm ci` refuses the lock
// file. This adds each missing entry with the os/cpu/libc read from its name, so npm skips
// it here as it would anyway and installs it on the platform it is for.
// Run it after `npm install` changes the lock file: `npx node scripts/fill-lock-bindings.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

/** Packages whose optional dependencies are platform builds, named by platform. */
const PLATFORM_PACKAGES = [/^@astrojs\/compiler-binding-/, /^@biomejs\/cli-/];
const OS = ['android', 'darwin', 'freebsd', 'linux', 'win32'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'wasm32'];

/**
 * The entry npm itself would write for a platform build named like `cli-linux-x64-musl`
 * (its fields in npm's order, so a later `npm install` rewrites nothing); undefined when
 * the name names no platform.
 */
function entryFor(name, version, dev) {
  const words = name.split('/').pop().split('-');
  const os = words.find((w) => OS.includes(w));
  const cpu = words.find((w) => CPU.includes(w));
  if (!cpu) return undefined;
  const entry = { version, cpu: [cpu] };
  if (dev) entry.dev = true;
  if (os === 'linux') entry.libc = [words.includes('musl') ? 'musl' : 'glibc'];
  entry.optional = true;
  if (os) entry.os = [os];
  return entry;
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const path = `node_modules/${name}`;
    const missing = entryFor(name, version, entry.dev === true);
    if (!PLATFORM_PACKAGES.some((p) => p.test(name)) || lock.packages[path] || !missing) continue;
    lock.packages[path] = missing;
    added.push(path);
  }
}
if (added.length === 0) {
  // Rewriting an unchanged lock file could still reorder it; leave it exactly as npm wrote it.
  console.log('nothing to add');
} else {
  // The order npm itself writes (localeCompare, 'en'), so a later `npm install` moves nothing.
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`added ${added.join(', ')}`);
}
