#!/usr/bin/env node
// `npm run test:fast`: the quick loop. Runs every test file that spawns no process (found by a scan of its
// text for the ways this suite starts one), with MESHINJECT_TEST_FAST=1: tests that read a third-party corpus
// are skipped (test/helpers/data.ts), test/setup/fast-guard.mjs makes any process a test still starts an
// error, and property tests that read PROPERTY_RUNS run 20 generated cases each unless it is set. `npm test`
// runs everything, with every property test's full count. Extra arguments go to tap (e.g. `npm run test:fast -- --reporter=terse`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** How the suite starts a process: the helpers (runCli, runTool, runWith), child_process, the bundle check, the bench's measure. */
export const SPAWNS =
  /\b(runCli|runTool|runWith|spawnSync|spawn|execFileSync|execFile|execSync|exec|fork|ensureFreshBundle|gitSnapshot|gitDiff|measure|hasGnuTime|runNestedTap)\(/;

/** Every test file under test/ (relative to the repository), sorted. */
export function testFiles(dir = join(ROOT, 'test')) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => relative(ROOT, join(dir, f)))
    .sort();
}

/** The test files of the quick loop: those whose text starts no process. */
export function fastFiles() {
  return testFiles().filter((f) => !SPAWNS.test(readFileSync(join(ROOT, f), 'utf8')));
}

/**
 * Splits `files` into `n` groups of about equal text size (largest first, each to the lightest group), in
 * order within a group. Returns `n` arrays of the same paths; empty groups are dropped.
 */
export function groups(files, n, sizeOf = (f) => statSync(join(ROOT, f)).size) {
  const bins = Array.from({ length: n }, () => ({ weight: 0, files: [] }));
  for (const f of [...files].sort((a, b) => sizeOf(b) - sizeOf(a))) {
    const lightest = bins.reduce((a, b) => (b.weight < a.weight ? b : a));
    lightest.weight += sizeOf(f);
    lightest.files.push(f);
  }
  return bins.filter((b) => b.files.length > 0).map((b) => b.files.sort());
}

/**
 * The text of one group's entry file: it imports each test file in turn, so their tests run in one process
 * (one TypeScript load instead of one per file). Tests register on tap's root, in file order.
 */
export function entryText(files) {
  const lines = files.map((f) => `await import(${JSON.stringify(pathToFileURL(join(ROOT, f)).href)});`);
  return `// Written by scripts/test-fast.mjs: one process for these test files.\n${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const perFile = args.includes('--per-file');
  const tapArgs = args.filter((a) => a !== '--per-file');
  const files = fastFiles();
  const taprc = readFileSync(join(ROOT, '.taprc'), 'utf8');
  const jobs = Number(/^jobs: (\d+)$/m.exec(taprc)?.[1] ?? 2);
  let targets = files;
  if (!perFile) {
    // One process per tap job, each importing its share of the files: loading TypeScript and the sources once
    // per process, not once per file, is most of the time saved. `--per-file` runs each file on its own (to
    // see which file a failure belongs to in tap's summary, or to rule out one file's state reaching another).
    const dir = join(ROOT, '.tap', 'fast');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    // Run state is a value (src/render/run-state.ts): no file's runs reach another's, so every file is grouped.
    targets = groups(files, jobs).map((g, i) => {
      const entry = join(dir, `group-${i + 1}.test.mjs`);
      writeFileSync(entry, entryText(g));
      return relative(ROOT, entry);
    });
  }
  process.stdout.write(
    `test:fast: ${files.length} of ${testFiles().length} test files (those that spawn no process; corpus tests skipped)` +
      `${perFile ? ', one process each' : `, in ${targets.length} processes`}\n`,
  );
  const tap = join(ROOT, 'node_modules/.bin/tap');
  // tap's --node-arg on the command line replaces the .taprc list: keep its preloads and add the guard.
  const preloads = [...taprc.matchAll(/^\s*- "(--import=[^"]+)"$/gm)].map((m) => m[1]);
  const nodeArgs = [...preloads, '--import=./test/setup/fast-guard.mjs'].map((a) => `--node-arg=${a}`);
  const r = spawnSync(tap, [...nodeArgs, ...tapArgs, ...targets], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { PROPERTY_RUNS: '20', ...process.env, MESHINJECT_TEST_FAST: '1' },
  });
  process.exitCode = r.status ?? 1;
}
