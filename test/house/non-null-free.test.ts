/**
 * Issue #35, item 1: the folders cleared of non-null assertions stay clear until biome.json makes
 * `style/noNonNullAssertion` an error everywhere: Biome's own rule is run on them (a `!` that asserted a lookup is a
 * checked read, src/checked.ts, or a narrowing). The scan is also tried on generated files holding a `!` in each of
 * its forms, placed in each of those folders, so that it cannot pass by finding nothing. Each `as unknown as` in
 * src/ says why on its line or the line before.
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from '../../scripts/long-functions.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIOME = join(ROOT, 'node_modules/.bin/biome');
const RULE = 'lint/style/noNonNullAssertion';

/** The folders and files of src/, every one of them with no `!` (issue #35), new ones included. */
const CLEAN = readdirSync(join(ROOT, 'src'))
  .sort()
  .map((name) => `src/${name}`);

/** Paths (relative to `cwd`) of the files where Biome reports a non-null assertion, one entry per finding. */
function findings(cwd: string, paths: readonly string[]): string[] {
  const run = spawnSync(
    BIOME,
    ['lint', '--reporter=json', '--max-diagnostics=none', `--only=${RULE.slice('lint/'.length)}`, ...paths],
    { cwd, encoding: 'utf8' },
  );
  const report = JSON.parse(run.stdout) as { diagnostics: Array<{ category: string; location: { path: string } }> };
  return report.diagnostics.filter((d) => d.category === RULE).map((d) => d.location.path);
}

t.test('no non-null assertion in the folders cleared of them', async (t) => {
  t.ok(CLEAN.includes('src/krm') && CLEAN.includes('src/render'), 'the list is read from src/');
  t.same(findings(ROOT, CLEAN), []);
});

/** Forms of a non-null assertion, each a source file that holds one. */
const FORMS = [
  'export const f = (a: string[]) => a[0]!.length;\n',
  'export const f = (m: Map<string, number>) => m.get("k")!;\n',
  'export const f = (o: { x?: { y: number } }) => o.x!.y;\n',
  'export const f = (s: string) => /(a)/.exec(s)![1];\n',
  'export const f = (o: { x?: number[] }) => {\n  const [v] = o.x!;\n  return v;\n};\n',
];

t.test('the scan finds a non-null assertion in each form, in each cleared folder (property)', async (t) => {
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete config.$schema;
  config.vcs = { enabled: false };
  const dirs = CLEAN.map((p) => (p.endsWith('.ts') ? dirname(p) : p));
  let checked = 0;
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom(...dirs), fc.constantFrom(...FORMS)), { minLength: 1, maxLength: 8 }),
      (batch) => {
        const dir = t.testdir({ 'biome.json': JSON.stringify(config) });
        const paths = batch.map(([folder, text], i) => {
          const path = `${folder}/probe-${i}.ts`;
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), text);
          return path;
        });
        const found = findings(dir, ['src']);
        for (const p of paths) if (!found.includes(p)) throw new Error(`${p}: its non-null assertion was not found`);
        checked += paths.length;
      },
    ),
    { numRuns: 4 },
  );
  t.ok(checked >= 4, `${checked} generated files scanned`);
});

t.test('each `as unknown as` in src/ says why', async (t) => {
  const files = sourceFiles(join(ROOT, 'src'));
  t.ok(files.length > 150, `the scan reads the sources (${files.length} files)`);
  const bare: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!line.includes(' as unknown as ')) return;
      const said = line.includes('//') || (lines[i - 1] ?? '').trim().startsWith('//');
      if (!said) bare.push(`${file.slice(ROOT.length)}:${i + 1}`);
    });
  }
  t.same(bare, []);
});
