import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { type ConfigResult, readConfig } from '../../packages/site-forms/src/lib/config/config.ts';

// The docs are checked against the code, so that the next developer can trust them: the
// configuration as the README, the guide and .env.example describe it; the folder map and its
// import rules; the links between the docs; the paths the comments name (docs/decisions/0162-docs-checked-against-the-code.md);
// the index of the decision records, each record's row and the status a superseded one states.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The forms package: its `src/…` paths are the ones the library's comments and the folder map name. */
const PACKAGE = join(ROOT, 'packages/site-forms');
/** A path as the docs and comments write it: from the repository's root, or `src/…` of the package. */
const located = (path: string) => (existsSync(join(ROOT, path)) ? join(ROOT, path) : join(PACKAGE, path));
const read = (path: string) => readFileSync(located(path), 'utf8');
const VARIABLE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{2,}$/;

/**
 * Every variable the configuration modules read, as the environment sees them asked for:
 * `readConfig` over an environment that notes each name. Several environments, so that a
 * variable read only once a provider or the mail is chosen is asked for too.
 */
function variablesRead(): string[] {
  const names = new Set<string>();
  const environments: Record<string, string>[] = [
    {},
    { NEWSLETTER_PROVIDER: 'mailchimp', MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l' },
    { NEWSLETTER_PROVIDER: 'kit', KIT_API_KEY: 'k', KIT_FORM_ID: '1' },
    { NEWSLETTER_PROVIDER: 'resend', RESEND_API_KEY: 'r', RESEND_SEGMENT_ID: 's' },
    { SMTP_URL: 'smtp://127.0.0.1:25', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com', AUTO_REPLY: 'true' },
    { SPAM_FILTER: 'off', WEBHOOK_URL: 'https://hooks.example.com/in' },
  ];
  for (const base of environments) {
    const noted = (name: string | symbol) => {
      if (typeof name === 'string' && VARIABLE.test(name)) names.add(name);
    };
    readConfig(
      new Proxy(base, {
        get(target, name) {
          noted(name);
          return Reflect.get(target, name);
        },
        has(target, name) {
          noted(name);
          return Reflect.has(target, name);
        },
      }),
    );
  }
  return [...names].sort();
}

/** The rows of the README's configuration table: the variables of each, and its default as written. */
function readmeRows(): { names: string[]; defaults: string }[] {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Configuration\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [, names = '', defaults = ''] = line.split('|');
      return { names: [...names.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!), defaults: defaults.trim() };
    });
}

/** The variables `.env.example` sets, or shows commented out. */
const exampleNames = () => [...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

/** Every name in code type that looks like a variable (`SMTP_URL`, `NEWSLETTER_PROVIDER=local`). */
const namedIn = (text: string) => [...text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g)].map((m) => m[1]!);

const sortedUnique = (names: string[]) => [...new Set(names)].sort();

describe('the configuration as the docs describe it', () => {
  test("the README's configuration table has a row for every variable the configuration reads, and no other", () => {
    const asked = variablesRead();
    // The spy itself: were it blind, both lists would be empty and equal.
    expect(asked).toEqual(expect.arrayContaining(['SMTP_URL', 'DATA_DIR', 'WEBHOOK_URL', 'KIT_API_VERSION']));
    const documented = readmeRows().flatMap((row) => row.names);
    expect(
      documented.filter((name, i) => documented.indexOf(name) !== i),
      'named in two rows',
    ).toEqual([]);
    expect({
      'read, not in the README': asked.filter((name) => !documented.includes(name)),
      'in the README, never read': documented.filter((name) => !asked.includes(name)),
    }).toEqual({
      'read, not in the README': [],
      'in the README, never read': [],
    });
  });

  test('.env.example names every variable the configuration reads, and no other', () => {
    const asked = variablesRead();
    const example = sortedUnique(exampleNames());
    expect({
      'read, not in .env.example': asked.filter((name) => !example.includes(name)),
      'in .env.example, never read': example.filter((name) => !asked.includes(name)),
    }).toEqual({
      'read, not in .env.example': [],
      'in .env.example, never read': [],
    });
  });

  test('each default the README writes as a value is the one the code takes: setting it changes nothing', () => {
    // Only a default written as values alone (`5`, `600`), one a variable; "from the key" or "in memory" say what no value can.
    const comparable = readmeRows().filter(({ names, defaults }) => {
      const values = defaults.split(', ');
      return values.length === names.length && values.every((value) => /^`[^`]*`$/.test(value));
    });
    expect(comparable.length).toBeGreaterThan(20);
    const unset = readConfig({});
    const differing: { variable: string; documented: string; answer: ConfigResult }[] = [];
    for (const { names, defaults } of comparable) {
      const values = defaults.split(', ').map((value) => value.slice(1, -1));
      names.forEach((variable, i) => {
        const answer = readConfig({ [variable]: values[i]! });
        if (JSON.stringify(answer) !== JSON.stringify(unset)) differing.push({ variable, documented: values[i]!, answer });
      });
    }
    expect(differing).toEqual([]);
  });

  test('every variable the README and the guide name is one the code reads', () => {
    // Read before the configuration (which .env file) or by the build (which settings), not by the configuration modules.
    const outside: Record<string, string> = {
      ENV_FILE: 'src/lib/config/config.ts',
      SITE_CONFIG: 'src/integration/integration.ts',
      FORMS_CONFIG: 'src/integration/integration.ts',
    };
    for (const [name, file] of Object.entries(outside)) expect(read(file), `${file} reads ${name}`).toContain(`process.env.${name}`);
    const known = [...variablesRead(), ...Object.keys(outside)];
    for (const doc of ['README.md', 'docs/guide.md']) {
      expect(
        sortedUnique(namedIn(read(doc))).filter((name) => !known.includes(name)),
        `${doc} names a variable no code reads`,
      ).toEqual([]);
    }
  });
});

const LIB = join(PACKAGE, 'src/lib/');
const IMPORT = /(?:^|[\s;}])(?:import|export)\s[^'";]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sources(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path, pattern) : pattern.test(entry.name) ? [path] : [];
  });
}

/** A file's folder of src/lib as the map writes it: `admin/`, or `*.ts` for the files at the top. */
const folderOf = (path: string) => {
  const parts = relative(LIB, path).split(sep);
  return parts.length > 1 ? `${parts[0]}/` : '*.ts';
};

/** Every import from one folder of src/lib into another: `from → to`, with one file that makes it. */
function importsBetweenFolders(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sources(LIB, /\.ts$/)) {
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), match[1] ?? match[2]!));
      if (!target.startsWith(LIB) || folderOf(file) === folderOf(target)) continue;
      found.set(`${folderOf(file)} → ${folderOf(target)}`, `${relative(LIB, file)} imports ${relative(LIB, target)}`);
    }
  }
  return found;
}

/** The folder map of docs/development.md: each row's folder (`src/lib/admin/`), and what it may import. */
function folderMap(): Map<string, string[]> {
  const doc = read('docs/development.md');
  const start = doc.indexOf('\n## Folder map\n');
  expect(start, 'docs/development.md has a "Folder map" section').toBeGreaterThan(-1);
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const map = new Map<string, string[]>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [, folder = '', , mayImport = ''] = line.split('|');
    map.set(
      folder.trim().replaceAll('`', ''),
      [...mayImport.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
    );
  }
  return map;
}

describe("docs/development.md's folder map", () => {
  test('has a row for every folder of src/lib, and names no folder that is gone', () => {
    const map = folderMap();
    const folders = (dir: string) =>
      readdirSync(join(PACKAGE, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${dir}/${entry.name}/`);
    // src/lib itself is its folders' rows and the row of its own files. The folders beside it in
    // src/ are asked of only one way (each row's folder exists): an owner adds folders of their
    // own there (src/forms/ in the README's quote example), which the map need not know.
    expect(folders('src')).toEqual(expect.arrayContaining(['src/server/', 'src/lib/']));
    const expected = [...folders('src/lib'), 'src/lib/*.ts'];
    expect(expected).toEqual(expect.arrayContaining(['src/lib/sql/', 'src/lib/*.ts']));
    expect(expected.filter((folder) => !map.has(folder))).toEqual([]);
    expect([...map.keys()].filter((folder) => !(folder.endsWith('*.ts') ? existsSync(located(dirname(folder))) : existsSync(located(folder))))).toEqual([]);
  });

  test('each folder of src/lib may import only folders above it in the map, so the map itself has no cycle', () => {
    const rows = [...folderMap()].filter(([folder]) => folder.startsWith('src/lib/'));
    expect(rows.length).toBeGreaterThan(10);
    const later = rows.flatMap(([folder, mayImport], i) => {
      const above = rows.slice(0, i).map(([earlier]) => earlier.slice('src/lib/'.length));
      return mayImport.filter((to) => !above.includes(to)).map((to) => `${folder} → ${to}`);
    });
    expect(later).toEqual([]);
  });

  test('every import between two folders of src/lib is one the map allows', () => {
    const map = folderMap();
    const imports = importsBetweenFolders();
    // The scan sees what it must: the contact handlers store through the message machine.
    expect(imports.has('contact/ → submissions/')).toBe(true);
    const refused = [...imports].filter(([edge]) => {
      const [from, to] = edge.split(' → ') as [string, string];
      return !(map.get(`src/lib/${from === '*.ts' ? '*.ts' : from}`) ?? []).includes(to);
    });
    expect(refused.map(([edge, why]) => `${edge} (${why})`)).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

describe('links between the docs', () => {
  test.each([
    'README.md',
    'docs/development.md',
    'docs/mutation-score.md',
    'docs/testing.md',
    'docs/guide.md',
    'docs/performance.md',
    'docs/decisions/README.md',
  ])('every relative link of %s reaches a file and its heading', (doc) => {
    const text = read(doc);
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path = '', anchor] = target!.split('#');
      const file = path === '' ? doc : normalize(join(dirname(doc), path));
      if (!existsSync(join(ROOT, file))) {
        broken.push(target!);
        continue;
      }
      if (anchor === undefined || !file.endsWith('.md')) continue;
      const headings = [...read(file).matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
      if (!headings.includes(anchor)) broken.push(target!);
    }
    expect(broken).toEqual([]);
  });

  test('the mutation report has its own file, linked from docs/development.md', () => {
    const development = read('docs/development.md');
    expect(development).not.toMatch(/\| folder \| score \|/);
    expect(development).toContain('](mutation-score.md)');
    expect(read('docs/mutation-score.md')).toMatch(/\| folder \| score \|/);
  });
});

/** docs/decisions/: the records (`NNNN-name.md`) and their index (`README.md`, decision 0162's checks extended to it). */
const DECISIONS = 'docs/decisions';
const LINK = /\[(\d{4})\]\(([^)\s]+)\)/g;
const STATUS = /^(?:accepted|superseded by \[\d{4}\]\([^)\s]+\)|amended by \[\d{4}\]\([^)\s]+\)(?:, \[\d{4}\]\([^)\s]+\))*)$/;
/** The line a superseded record carries under its title: `Status: superseded by [NNNN](NNNN-….md) — why`. */
const SUPERSEDED_LINE = /^Status: superseded by \[(\d{4})\]\(([^)\s]+)\) — \S/;

/** Every file of docs/decisions but the index: each one a record. */
const recordFiles = () =>
  readdirSync(join(ROOT, DECISIONS))
    .filter((name) => name.endsWith('.md') && name !== 'README.md')
    .sort();

/** The index's table, one row a record: its number and file (the linked number), its status as written. */
function indexRows(): { line: string; number: string; file: string; status: string }[] {
  const index = read(`${DECISIONS}/README.md`);
  return index
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*(?:number\s*\||-)/.test(line))
    .map((line) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const [, number = '', file = ''] = /^\[(\d{4})\]\(([^)\s]+)\)$/.exec(cells[0] ?? '') ?? [];
      return { line, number, file, status: cells.length === 4 ? cells[2]! : '' };
    });
}

/** What a record says of its own status: the `Status: superseded by` line, and where it stands. */
function supersededLineOf(file: string): { line?: string; problems: string[] } {
  const lines = read(`${DECISIONS}/${file}`).split('\n');
  const claims = lines.filter((line) => /^[*_\s]*(?:status:\s*)?superseded by\b/i.test(line));
  if (claims.length === 0) return { problems: [] };
  const problems: string[] = [];
  if (claims.length > 1) problems.push(`${file}: ${claims.length} lines say it is superseded`);
  const [claim] = claims as [string];
  if (!SUPERSEDED_LINE.test(claim)) problems.push(`${file}: write "${claim}" as "Status: superseded by [NNNN](NNNN-….md) — why"`);
  const title = lines.findIndex((line) => line.startsWith('# '));
  const underTitle = lines.slice(title + 1).find((line) => line.trim() !== '');
  if (title === -1 || underTitle !== claim) problems.push(`${file}: its status line is not the first line under its title`);
  return { line: claim, problems };
}

describe("the decision records' index", () => {
  test('every record has one row, in number order, and every row names a record', () => {
    const files = recordFiles();
    const rows = indexRows();
    // The reading sees what it must: the first record and its row.
    expect(files).toContain('0001-serve-through-our-own-server.md');
    expect(rows.map((row) => row.file)).toContain('0001-serve-through-our-own-server.md');
    const numbers = files.map((file) => /^(\d{4})-[a-z0-9-]+\.md$/.exec(file)?.[1]);
    const listed = rows.map((row) => row.file);
    expect({
      'records without a row in docs/decisions/README.md': files.filter((file) => !listed.includes(file)),
      'rows naming no record': rows.filter((row) => !files.includes(row.file)).map((row) => row.line),
      "rows whose number is not their file's": rows.filter((row) => !row.file.startsWith(`${row.number}-`)).map((row) => row.line),
      'rows listed twice or out of number order': rows.filter((row, i) => i > 0 && row.number <= rows[i - 1]!.number).map((row) => row.line),
      'files not named NNNN-name.md': files.filter((_, i) => numbers[i] === undefined),
      'numbers held by two records': files.filter((_, i) => numbers[i] !== undefined && numbers.indexOf(numbers[i]) !== i),
    }).toEqual({
      'records without a row in docs/decisions/README.md': [],
      'rows naming no record': [],
      "rows whose number is not their file's": [],
      'rows listed twice or out of number order': [],
      'files not named NNNN-name.md': [],
      'numbers held by two records': [],
    });
  });

  test('each status is accepted, or superseded or amended by later records that exist', () => {
    const files = recordFiles();
    const rows = indexRows();
    expect(rows.length).toBeGreaterThan(80);
    const wrong: string[] = [];
    for (const row of rows) {
      if (!STATUS.test(row.status)) wrong.push(`${row.number}: status "${row.status}" is not accepted, superseded by [NNNN](…) or amended by [NNNN](…)`);
      for (const [, number, file] of row.status.matchAll(LINK)) {
        if (!files.includes(file!) || !file!.startsWith(`${number}-`)) wrong.push(`${row.number}: ${number} links ${file}, which is not that record`);
        else if (number! <= row.number) wrong.push(`${row.number}: ${number} is not a later record`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test('a superseded record says so under its title, and its row says the same', () => {
    const rows = indexRows();
    const disagreeing: string[] = [];
    for (const file of recordFiles()) {
      const { line, problems } = supersededLineOf(file);
      disagreeing.push(...problems);
      const row = rows.find((r) => r.file === file);
      if (row === undefined) continue;
      const [, byNumber, byFile] = line === undefined ? [] : (SUPERSEDED_LINE.exec(line) ?? []);
      const inRecord = byNumber === undefined ? 'not superseded' : `superseded by [${byNumber}](${byFile})`;
      const inIndex = row.status.startsWith('superseded by') ? row.status : 'not superseded';
      if (inRecord !== inIndex) disagreeing.push(`${file}: the record says ${inRecord}, the index ${inIndex}`);
    }
    expect(disagreeing).toEqual([]);
  });
});

describe('paths the comments name', () => {
  test('every src/, docs/, tests/ or scripts/ path in the code, its build files, the README and the docs exists', () => {
    const files = [
      ...sources(join(ROOT, 'src'), /\.(ts|astro|mjs)$/),
      ...sources(join(PACKAGE, 'src'), /\.(ts|astro|mjs)$/),
      ...sources(join(ROOT, 'scripts'), /\.(ts|mjs)$/),
      join(ROOT, 'astro.config.mjs'),
    ];
    // The README and the docs too, but not the decision records: they are history, and name deleted files on purpose.
    const docs = [
      join(ROOT, 'README.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(ROOT, 'docs', name)),
    ];
    expect(files.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const file of [...files, ...docs]) {
      // A path from the project's root: not the tail of a relative one (`../scripts/forms.ts`) or of a package's.
      for (const [, path] of readFileSync(file, 'utf8').matchAll(/(?<![\w./@-])((?:src|docs|tests|scripts)\/[\w./-]*\w)/g)) {
        if (!existsSync(located(path!))) missing.push(`${relative(ROOT, file)}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the components as the docs place them', () => {
  /** The props `site-forms/components` exports each component with (src/integration/components.ts), read from its `Props`. */
  function exportedProps(): Map<string, Set<string>> {
    const props = new Map<string, Set<string>>();
    for (const [, name, file] of read('src/integration/components.ts').matchAll(/export \{ default as (\w+) \} from '\.\.\/components\/(\w+\.astro)'/g)) {
      const declared = /type Props = (?:[^{]*&\s*)?\{([\s\S]*?)\n\};/.exec(read(`src/components/${file}`))?.[1] ?? '';
      props.set(name!, new Set([...declared.matchAll(/^\s+(\w+)\??:/gm)].map((match) => match[1]!)));
    }
    return props;
  }

  test.each(['README.md', 'docs/guide.md'])('%s places each exported component only with the props it takes', (doc) => {
    const props = exportedProps();
    expect(props.get('Form')).toEqual(new Set(['name']));
    const placed = [...read(doc).matchAll(/<(ContactForm|NewsletterForm|Form)\b([^>]*)\/>/g)];
    expect(placed.length).toBeGreaterThan(0);
    for (const [tag, component, attributes] of placed) {
      const used = [...attributes!.matchAll(/(\w+)=/g)].map((match) => match[1]!);
      for (const prop of used) expect(props.get(component!)?.has(prop), `${doc}: ${tag}`).toBe(true);
    }
  });
});
