/**
 * Issue #35, item 1: the project's own rules in biome.json. The core is pure (CONTRIBUTING.md): outside the CLI
 * edge (src/cli.ts, src/cli/) no code reaches `process` (directly or through `globalThis`) and none imports the
 * file system, child processes, threads, the machine or the network. Generated sources that break a rule are
 * linted with the repository's own biome.json, placed in every core folder and in the CLI edge: the first are
 * errors, the second pass, so the rules can neither miss a route nor stop the edge from doing its job.
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIOME = join(ROOT, 'node_modules/.bin/biome');

/** The modules the core may not import (biome.json, `noRestrictedImports`). */
const DENIED_MODULES = [
  'node:fs',
  'node:fs/promises',
  'fs',
  'fs/promises',
  'node:child_process',
  'child_process',
  'node:worker_threads',
  'node:process',
  'process',
  'node:os',
  'node:http',
  'node:https',
  'node:dgram',
  'node:dns',
];

/** Ways a module is reached: each a source text that imports `m`. */
const IMPORT_FORMS: ReadonlyArray<(m: string) => string> = [
  (m) => `import { x } from '${m}';\n\nexport const y = x;\n`,
  (m) => `import * as m from '${m}';\n\nexport const y = m;\n`,
  (m) => `import type { X } from '${m}';\n\nexport type Y = X;\n`,
  (m) => `export { x } from '${m}';\n`,
  (m) => `export const y = async () => import('${m}');\n`,
];

/** Ways `process` is reached without an import. */
const GLOBAL_FORMS = [
  'export const y = process.env;\n',
  'export const y = () => {\n  const { env } = process;\n  return env;\n};\n',
  'export const y = globalThis.process;\n',
  "export const y = (globalThis as Record<string, unknown>)['process'];\n",
];

/** The core's folders and its top level, where the rules hold: every folder of src/ but the CLI edge. */
const CORE_DIRS = [
  'src',
  ...readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'cli')
    .map((d) => `src/${d.name}`),
];

interface Route {
  /** Where the file is, relative to the repository (`src/render/probe-3.ts`). */
  path: string;
  text: string;
  /** The rule that must flag it, or undefined at the CLI edge, where nothing may. */
  rule: 'lint/style/noRestrictedImports' | 'lint/style/noRestrictedGlobals' | undefined;
}

const source = fc.oneof(
  fc
    .tuple(fc.constantFrom(...DENIED_MODULES), fc.constantFrom(...IMPORT_FORMS))
    .map(([m, form]) => ({ text: form(m), rule: 'lint/style/noRestrictedImports' as const })),
  fc.constantFrom(...GLOBAL_FORMS).map((text) => ({ text, rule: 'lint/style/noRestrictedGlobals' as const })),
);

const routes = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...CORE_DIRS), fc.constant('src/cli'), fc.constant('edge')), source),
  { minLength: 1, maxLength: 30 },
);

/** The generated files as routes: `edge` is src/cli.ts itself; files are numbered so none overwrites another. */
function placed(batch: ReadonlyArray<[string, { text: string; rule: Route['rule'] }]>): Route[] {
  const out: Route[] = [];
  let edgeUsed = false;
  batch.forEach(([dir, s], i) => {
    if (dir === 'edge' && edgeUsed) return;
    const edge = dir === 'edge' || dir === 'src/cli';
    if (dir === 'edge') edgeUsed = true;
    const path = dir === 'edge' ? 'src/cli.ts' : `${dir}/probe-${i}.ts`;
    out.push({ path, text: s.text, rule: edge ? undefined : s.rule });
  });
  return out;
}

/** Lints `routes` with the repository's biome.json in a fresh tree: each file's rule categories at error level. */
function lint(dir: string, routes: readonly Route[]): Map<string, string[]> {
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete config.$schema;
  config.vcs = { enabled: false };
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
  for (const r of routes) {
    mkdirSync(dirname(join(dir, r.path)), { recursive: true });
    writeFileSync(join(dir, r.path), r.text);
  }
  const run = spawnSync(BIOME, ['lint', '--reporter=json', '--max-diagnostics=none', '.'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const report = JSON.parse(run.stdout) as {
    diagnostics: Array<{ severity: string; category: string; location: { path: string } }>;
  };
  const found = new Map<string, string[]>();
  for (const d of report.diagnostics) {
    if (d.severity !== 'error') continue;
    found.set(d.location.path, [...(found.get(d.location.path) ?? []), d.category]);
  }
  return found;
}

t.test('the core reaches no process, file system, child process or network; the CLI edge may (property)', async (t) => {
  t.ok(CORE_DIRS.includes('src/render') && CORE_DIRS.includes('src/drivers'), 'the core folders are read');
  let checked = 0;
  fc.assert(
    fc.property(routes, (batch) => {
      const dir = t.testdir({});
      const rs = placed(batch);
      const found = lint(dir, rs);
      for (const r of rs) {
        const got = found.get(r.path) ?? [];
        const want = r.rule === undefined ? [] : [r.rule];
        if (JSON.stringify(got) !== JSON.stringify(want))
          throw new Error(`${r.path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}\n${r.text}`);
        checked++;
      }
    }),
    { numRuns: 4 },
  );
  t.ok(checked >= 4, `${checked} generated files linted`);
});
