#!/usr/bin/env node
/**
 * `npx site-forms <tool> ...`: the command-line tools of an owner's project (inbox, subscribers,
 * db, admin, doctor), the same as `npm run <tool> --` in the starter, over the same `.env` and
 * database as the owner's server. The tools are this package's compiled JavaScript (dist/); the
 * owner's site.config.ts and forms.config.ts are read by Node itself, through the resolve hook of
 * dist/integration/node-hooks.js (decision 0220).
 */
const TOOLS = ['inbox', 'subscribers', 'db', 'admin', 'doctor'];
const USAGE = `Usage: npx site-forms <${TOOLS.join('|')}> [arguments]\n  npx site-forms inbox list\n  npx site-forms doctor\n`;

const [tool, ...rest] = process.argv.slice(2);
if (tool === undefined || tool === 'help' || tool === '--help') {
  process.stdout.write(USAGE);
} else if (!TOOLS.includes(tool)) {
  process.stderr.write(`Unknown tool "${tool}".\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  await import('../dist/integration/node-hooks.js');
  // Each tool reads its own arguments from process.argv.slice(2), as under `npm run`.
  process.argv = [process.argv[0], process.argv[1], ...rest];
  await import(`../dist/cli/${tool}.js`);
}
