import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root.ts';

/** The owner's command-line tools: `npm run <tool>` in the starter, `npx site-forms <tool>` in an owner's site. */
export const TOOLS = ['inbox', 'subscribers', 'db', 'admin', 'doctor'] as const;

/** One of the owner's command-line tools. */
export type Tool = (typeof TOOLS)[number];

/**
 * How the owner runs a tool where this code runs: `npm-run` in the starter's checkout (its
 * package.json has a script per tool), `npx` in an owner's site (the package installed, the
 * integration's server, `npx site-forms`), decision 0205.
 */
export type CommandStyle = 'npm-run' | 'npx';

/**
 * The style of the project at `root`: `npm-run` when its package.json has a script named after
 * every tool (the starter and an owner's copy of it), `npx` otherwise.
 * Hint: decided by what works, not by where the code lies: an owner's server is bundled into
 * their dist/, and an owner who adds the scripts to their own package.json gets them named.
 */
export function commandStyleOf(root: string): CommandStyle {
  try {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> }).scripts ?? {};
    return TOOLS.every((tool) => typeof scripts[tool] === 'string') ? 'npm-run' : 'npx';
  } catch {
    return 'npx';
  }
}

/** The style of the project this process runs in, decided once: every hint a tool, a log or a mail gives uses it. */
export const COMMAND_STYLE: CommandStyle = commandStyleOf(PROJECT_ROOT);

/**
 * The command line that runs `tool` with `args` (`inbox`, `list --status spam`) in the owner's
 * project: `npm run inbox -- list --status spam` or `npx site-forms inbox list --status spam`.
 * Hint: `silent` is for a command whose output is redirected to a file: npm's banner would land in it.
 */
export function toolCommand(tool: Tool, args = '', { style = COMMAND_STYLE, silent = false }: { style?: CommandStyle; silent?: boolean } = {}): string {
  if (style === 'npx') return args ? `npx site-forms ${tool} ${args}` : `npx site-forms ${tool}`;
  const run = silent ? 'npm run --silent' : 'npm run';
  return args ? `${run} ${tool} -- ${args}` : `${run} ${tool}`;
}
