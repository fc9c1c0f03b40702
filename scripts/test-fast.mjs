#!/usr/bin/env node
// `npm run test:fast`: the quick loop. Runs every test file that spawns no process (found by a scan of its
// text for the ways this suite starts one), with MESHINJECT_TEST_FAST=1: tests that read a third-party corpus
// are skipped (test/helpers/data.ts), test/setup/fast-guard.mjs makes any process a test still starts an
// error, and property tests that read PROPERTY_RUNS run 20 generated cases each unless it is set. `npm test`
// runs everything, with every property test's full count. Extra arguments go to tap (e.g. `npm run test:fast -- --reporter=terse`).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** How the suite starts a process: the helpers (runCli, runTool, runWith), child_process, the bundle check. */
export const SPAWNS =
  /\b(runCli|runTool|runWith|spawnSync|spawn|execFileSync|execFile|execSync|exec|fork|ensureFreshBundle|gitSnapshot|gitDiff)\(/;

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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = fastFiles();
  process.stdout.write(
    `test:fast: ${files.length} of ${testFiles().length} test files (those that spawn no process; corpus tests skipped)\n`,
  );
  const tap = join(ROOT, 'node_modules/.bin/tap');
  // tap's --node-arg on the command line replaces the .taprc list: keep its preloads and add the guard.
  const preloads = [...readFileSync(join(ROOT, '.taprc'), 'utf8').matchAll(/^\s*- "(--import=[^"]+)"$/gm)].map(
    (m) => m[1],
  );
  const nodeArgs = [...preloads, '--import=./test/setup/fast-guard.mjs'].map((a) => `--node-arg=${a}`);
  const r = spawnSync(tap, [...nodeArgs, ...process.argv.slice(2), ...files], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { PROPERTY_RUNS: '20', ...process.env, MESHINJECT_TEST_FAST: '1' },
  });
  process.exitCode = r.status ?? 1;
}
