// What the suite's `before` script records and its `after` script compares (test/setup/test-data-before.mjs,
// test/setup/test-data-notice.mjs): the files of this checkout that test files run or load but no test file may
// write: the build (dist/), the bin, the generated sources and tap's built plugin set. A test that builds or
// installs in the checkout itself (`npm install -g .` runs `prepare`, which rebuilds dist/ and tap) changes
// them under the test files running beside it: a run of the bin then reads a bundle half written. Such tests
// work in a copy (test/helpers/e2e.ts `copyCheckout`).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WATCHED_DIRS = ['dist', 'bin', 'src'];
const WATCHED_FILES = ['node_modules/@tapjs/test/test-built/dist/esm/index.js'];

/** Files under `dir` (recursively) that are watched: all of dist/ and bin/, the generated files of src/. */
function watchedUnder(dir) {
  let names;
  try {
    names = readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names.map((n) => join(dir, n)).filter((f) => (dir !== 'src' || /\.gen\.[a-z.]+$/.test(f)) && isFile(f));
}

/** Whether `f` (relative to the checkout) is a file now; false when it is gone since the listing. */
function isFile(f) {
  try {
    return statSync(join(ROOT, f)).isFile();
  } catch {
    return false;
  }
}

/** `{ path: "<size> <mtime ms> <sha256>" }` for every watched file that exists, paths relative to the checkout. */
export function fingerprint() {
  const out = {};
  for (const f of [...WATCHED_DIRS.flatMap(watchedUnder), ...WATCHED_FILES]) {
    let st;
    let bytes;
    try {
      st = statSync(join(ROOT, f));
      bytes = readFileSync(join(ROOT, f));
    } catch {
      continue; // gone since the listing: recorded as absent
    }
    const sha = createHash('sha256').update(bytes).digest('hex');
    out[relative(ROOT, join(ROOT, f))] = `${st.size} ${st.mtimeMs} ${sha}`;
  }
  return out;
}

/** The watched files whose fingerprint differs between `before` and `after` (added, removed or changed). */
export function changedFiles(before, after) {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((n) => before[n] !== after[n]).sort();
}
