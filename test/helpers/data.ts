/**
 * Third-party test data (docs/internals/test-data.md). The repository holds only what this project wrote: other
 * projects' goldens, charts and manifests live in one data root outside it, `MESHINJECT_TEST_DATA` if set,
 * else `../shared` beside the repository, each corpus with its SOURCE.md (upstream, commit, license):
 *
 * - `conformance/istio`, `conformance/istio-versions/<release>`, `conformance/linkerd`, `conformance/kuma`:
 *   golden cases from those projects' own tests;
 * - `real-world/<app>`: public application manifests; `krm-inputs/`: what kpt and kustomize send a function.
 *
 * A test that reads a corpus asks {@link corpus} for it. When the folder is missing the test is skipped with
 * a reason naming the folder, and the suite is recorded so that the run ends with one notice
 * (test/setup/corpus-notice.mjs); under `CI=true` a missing corpus is also a failing assertion, so CI never
 * silently stops checking conformance. Not a test file itself.
 */
import t from 'tap';
import { appendFileSync, existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The data root: an absolute path (it need not exist). */
export const DATA_ROOT = resolve(ROOT, process.env.MESHINJECT_TEST_DATA || join('..', 'shared'));

/** A corpus that is there (`path`, `url`: its folder, the URL ending in `/`) or not (`skip`: the reason). */
export type Corpus = { path: string; url: URL; skip: false } | { path: undefined; url: undefined; skip: string };

/**
 * The folder where the test-run records skipped suites and cases run (one per tap run: tap's own process
 * starts the before script, every test file and the after script). Undefined outside tap.
 */
export function runRecordDir(): string | undefined {
  return process.env.TAP === '1' ? join(tmpdir(), `meshinject-test-data-${process.ppid}`) : undefined;
}

function record(line: string): void {
  const dir = runRecordDir();
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'records.tsv'), `${line}\n`);
}

/**
 * The test file that is running, relative to the repository (for the notice). Its real path: a nested tap runs the
 * checkout's files through symbolic links from a project root of its own (test/helpers/nested-tap.ts).
 */
function suiteName(): string {
  const main = process.argv[1];
  if (!main) return 'unknown suite';
  try {
    return relative(ROOT, realpathSync(main));
  } catch {
    return relative(ROOT, main);
  }
}

/**
 * Looks up the corpus `sub` (a folder under the data root, e.g. `'conformance/istio'`, or a file such as
 * `'real-world/bookinfo/bookinfo.yaml'`). Missing: returns the skip reason `test data not found: <folder>`,
 * records the skip for the end-of-run notice, and under `CI=true` adds a failing assertion to the file's root
 * test.
 */
export function corpus(sub: string): Corpus {
  const path = join(DATA_ROOT, sub);
  // The quick loop (npm run test:fast, scripts/test-fast.mjs) reads no corpus: such tests are skipped there.
  if (process.env.MESHINJECT_TEST_FAST === '1')
    return { path: undefined, url: undefined, skip: `npm run test:fast reads no test data (${sub}); npm test does` };
  if (existsSync(path)) {
    const url = pathToFileURL(statSync(path).isDirectory() ? `${path}/` : path);
    return { path, url, skip: false };
  }
  const skip = `test data not found: ${path} (set MESHINJECT_TEST_DATA to the folder holding conformance/, real-world/, krm-inputs/)`;
  record(`skip\t${suiteName()}\t${sub}`);
  if (process.env.CI === 'true') t.fail(`CI=true: every corpus must be present; ${skip}`);
  return { path: undefined, url: undefined, skip };
}

/**
 * Records that `count` cases of the corpus `sub` ran in this suite; the end-of-run notice prints them, so a CI
 * log shows how much of each corpus was checked.
 */
export function recordCases(sub: string, count: number): void {
  record(`ran\t${suiteName()}\t${sub}\t${count}`);
}

/**
 * The options that skip a test when any of `corpora` is missing (`{ skip: false }` when all are there), to pass
 * as `t.test(name, needs(A, B), fn)`; `extra` adds another skip reason (`false` when it does not apply).
 */
export function needs(...corpora: Array<Corpus | string | false>): { skip: string | false } {
  for (const c of corpora) {
    if (typeof c === 'string') return { skip: c };
    if (c !== false && c.skip) return { skip: c.skip };
  }
  return { skip: false };
}
