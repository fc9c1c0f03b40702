/**
 * The checkout's real tap, run from a test as a user runs it from a shell (test/house/test-data.test.ts,
 * test/security/rotating-seed.test.ts). Not a test file itself.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, ROOT } from './e2e.ts';

const TAP = join(ROOT, 'node_modules/.bin/tap');

/** What a nested tap run gave: its exit code (null when a signal ended it), the signal, stdout then stderr. */
export interface NestedTapRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  /** Why it could not run at all (spawnSync's error message), else undefined. */
  error: string | undefined;
}

/**
 * Whether an environment variable belongs to the tap run this test runs in, so that a nested run must not see
 * it: tap's settings (`TAP*`), its process tracking (`_TAPJS_*`) and `NODE_OPTIONS`, where that tracking adds
 * its `--import` (a user's shell has none of them).
 */
export function setByRunningTap(name: string): boolean {
  return name.startsWith('TAP') || name.startsWith('_TAPJS_') || name === 'NODE_OPTIONS';
}

/**
 * Whether a nested run ended before tap ran any test file: it failed and printed no `# Subtest:` line (tap's
 * `before` script or tap itself failed, or a signal ended it first).
 */
export function endedBeforeAnyFile(r: NestedTapRun): boolean {
  return r.status !== 0 && !/^# Subtest: /m.test(r.out);
}

/**
 * A project root of its own for a nested run, in a temporary folder: a symbolic link to each entry of the checkout
 * but `.tap`, tap's state folder, which the nested run then makes there (`.tap/plugins`, where `tap plugin add`
 * installs, is linked too).
 *
 * Why: tap keeps its state in `.tap/` under the project root, and a run deletes `.tap/processinfo` as it starts.
 * Every test process of the running suite, and every node process those start, writes its record there as it
 * exits. A nested tap sharing the checkout's root deletes that folder while they write into it. Its delete then
 * fails (`ENOTEMPTY`), and tap ends before running any file, which fits how the CI runs of 3f8adce and 151350c
 * failed. Or an exiting test process finds the folder gone (`ENOENT`), and its file fails.
 *
 * tap finds the root from its working folder. The test files, `before` script and `--import`s are named relative to
 * that root, and through the links node loads them from the checkout, under their real paths.
 */
export function ownProjectRoot(): { dir: string; cleanup: () => void } {
  const root = makeTempDir('nested-tap');
  for (const name of readdirSync(ROOT)) if (name !== '.tap') symlinkSync(join(ROOT, name), join(root.dir, name));
  const plugins = join(ROOT, '.tap', 'plugins');
  if (existsSync(plugins)) {
    mkdirSync(join(root.dir, '.tap'));
    symlinkSync(plugins, join(root.dir, '.tap', 'plugins'));
  }
  return root;
}

/**
 * Runs `tap --reporter=tap ...files` on the checkout's files, from a project root of its own ({@link ownProjectRoot}),
 * in this process's environment less what the running tap set ({@link setByRunningTap}) and less `clear`, plus
 * `env`. Synchronous; output up to 64 MiB. A run that ended before any test file ran ({@link endedBeforeAnyFile}) is
 * run once more, and `onRetry` is given its report ({@link nestedTapReport}; by default printed as a comment of the
 * running test): what such a run failed on is no assertion of the files, and the second run's verdict stands. `root`: the project root to run from (a test of the
 * isolation itself); by default a fresh one, removed after.
 */
export function runNestedTap(
  files: readonly string[],
  env: Readonly<Record<string, string>>,
  clear: readonly string[] = [],
  onRetry: (report: string) => void = (report) =>
    t.comment(`tap ended before running a file, run again; the first run: ${report}`),
  root?: string,
): NestedTapRun {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!setByRunningTap(k) && !clear.includes(k)) base[k] = v;
  const own = root === undefined ? ownProjectRoot() : undefined;
  const cwd = own?.dir ?? root;
  const once = (): NestedTapRun => {
    const r = spawnSync(TAP, ['--reporter=tap', ...files], {
      cwd,
      env: { ...base, ...env },
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    return { status: r.status, signal: r.signal, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, error: r.error?.message };
  };
  try {
    const first = once();
    if (!endedBeforeAnyFile(first)) return first;
    onRetry(nestedTapReport(first, 3000));
    return once();
  } finally {
    own?.cleanup();
  }
}

/**
 * A failure message for a nested run, at most `limit` characters: how it ended, then its failed assertions with
 * the 30 lines after each (at most half the room), then the end of its output in the room left. The end is always
 * there: what ended a run early (a `before` script's error, a crash) is printed last, on stderr, after tap's own
 * "test unfinished" and its `after` script's output.
 */
export function nestedTapReport(r: NestedTapRun, limit = 8000): string {
  const ended = r.error ? `could not run: ${r.error}` : r.signal ? `ended by ${r.signal}` : `exit ${r.status}`;
  const lines = r.out.split('\n');
  const failures = lines.flatMap((l, i) => (/^\s*not ok /.test(l) ? lines.slice(i, i + 30) : [])).join('\n');
  const head = failures ? `${ended}\n${failures.slice(0, limit >> 1)}\n--- end of output:\n` : `${ended}\n`;
  const room = Math.max(0, limit - head.length);
  return room > 0 ? `${head}${r.out.slice(-room)}` : head.slice(0, limit);
}
