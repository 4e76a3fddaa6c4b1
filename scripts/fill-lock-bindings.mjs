// The npm registry mirror of these machines lacks some platform builds of
// @astrojs/compiler-binding (optional dependencies, one per OS and CPU). `npm install`
// then leaves them out of package-lock.json and `npm ci` refuses the lock file. This
// adds the missing entries with their os/cpu so npm skips them here as it would anyway.
// Run it after `npm install` changes the lock file: `npx node scripts/fill-lock-bindings.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORMS = {
  'android-arm64': { cpu: ['arm64'], os: ['android'] },
  'darwin-arm64': { cpu: ['arm64'], os: ['darwin'] },
  'darwin-x64': { cpu: ['x64'], os: ['darwin'] },
  'linux-arm64-gnu': { cpu: ['arm64'], os: ['linux'], libc: ['glibc'] },
  'linux-arm64-musl': { cpu: ['arm64'], os: ['linux'], libc: ['musl'] },
  'linux-x64-gnu': { cpu: ['x64'], os: ['linux'], libc: ['glibc'] },
  'linux-x64-musl': { cpu: ['x64'], os: ['linux'], libc: ['musl'] },
  'wasm32-wasi': { cpu: ['wasm32'] },
  'win32-arm64-msvc': { cpu: ['arm64'], os: ['win32'] },
  'win32-x64-msvc': { cpu: ['x64'], os: ['win32'] },
};

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const platform = name.split('compiler-binding-')[1];
    const path = `node_modules/${name}`;
    if (!name.startsWith('@astrojs/compiler-binding-') || lock.packages[path] || !PLATFORMS[platform]) continue;
    lock.packages[path] = { version, license: 'MIT', optional: true, ...PLATFORMS[platform] };
    added.push(path);
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `added ${added.join(', ')}` : 'nothing to add');
