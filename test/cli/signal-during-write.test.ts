/**
 * Issue #36 §5: a SIGTERM (or SIGINT, SIGHUP) at any moment of the write phase, including while the
 * temporaries are being renamed, leaves every file wholly old or wholly new with no temporary left, and the run
 * exits 128 + the signal's number. A slow file system stands in (a preload, written here, that pauses before or
 * after the Nth call of `fsyncSync` or `renameSync` and marks the moment with a file); the signal is sent while
 * the run is paused there. The generator picks the number of files, the signal and the moment: each temporary
 * flushed (writing), each rename (before it), after the last rename, the directory's fsync.
 */
import t from 'tap';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { BIN, makeTempDir } from '../helpers/e2e.ts';

const PAUSE = `const fs = require('node:fs');
const [fn, nth, when, marker, ms] = process.env.PAUSE_AT.split('|');
const real = fs[fn];
const { openSync, closeSync } = fs;
let calls = 0;
const pause = () => {
  closeSync(openSync(marker, 'w'));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));
};
fs[fn] = function (...args) {
  const hit = ++calls === Number(nth);
  if (hit && when === 'before') pause();
  const r = real.apply(fs, args);
  if (hit && when === 'after') pause();
  return r;
};
`;

const deployment = (i: number) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w${i}, namespace: s}\nspec:\n  template:\n    metadata: {labels: {app: w${i}}}\n    spec:\n      containers:\n      - {name: a, image: n}\n`;
const TEMP = /\.meshinject-\d+-\d+\.tmp$/;

const tmp = makeTempDir('signal-write');
t.teardown(tmp.cleanup);
const preload = join(tmp.dir, 'pause.cjs');
writeFileSync(preload, PAUSE);

/**
 * Runs `diff -i dir` paused at `at` (fn|nth|before/after), sends `signal` there; resolves to the exit status.
 * `heapMb` sets `--max-old-space-size` (a small heap sends a large run into its Worker: src/cli/contained.ts).
 */
function pausedRun(
  dir: string,
  at: string,
  signal: NodeJS.Signals,
  heapMb?: number,
): Promise<{ status: number | null; sig: string | null; paused: boolean; stderr: string }> {
  const marker = join(tmp.dir, `marker-${Math.random().toString(36).slice(2)}`);
  return new Promise((resolve) => {
    const heap = heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`];
    const child = spawn(process.execPath, [...heap, '-r', preload, BIN, 'diff', '-i', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PAUSE_AT: `${at}|${marker}|800` },
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    let paused = false;
    const poll = setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(poll);
      paused = true;
      child.kill(signal);
    }, 5);
    child.on('exit', (status, sig) => {
      clearInterval(poll);
      rmSync(marker, { force: true });
      resolve({ status, sig, paused, stderr });
    });
  });
}

t.test(
  'a signal at any moment of a multi-file diff -i: files old or new, no temporary, exit 128 + signal',
  async (t) => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 5 }),
        fc.constantFrom<NodeJS.Signals>('SIGTERM', 'SIGINT', 'SIGHUP'),
        fc.oneof(
          fc.record({ fn: fc.constant('fsyncSync'), k: fc.integer({ min: 1, max: 6 }), when: fc.constant('before') }),
          fc.record({
            fn: fc.constant('renameSync'),
            k: fc.integer({ min: 1, max: 5 }),
            when: fc.constantFrom('before', 'after'),
          }),
        ),
        async (n, signal, point) => {
          const k = Math.min(point.k, point.fn === 'fsyncSync' ? n + 1 : n);
          const at = `${point.fn}|${k}|${point.when}`;
          const dir = join(tmp.dir, `d-${Math.random().toString(36).slice(2)}`);
          const names = Array.from({ length: n }, (_, i) => `f${i}.yaml`);
          mkdirSync(dir);
          for (const [i, name] of names.entries()) writeFileSync(join(dir, name), deployment(i), { flag: 'w' });
          const r = await pausedRun(dir, at, signal);
          const what = `${n} files, ${signal} ${at}`;
          t.ok(r.paused, `${what}: the run reached the moment`);
          t.equal(r.status, 128 + (constants.signals[signal] ?? 0), `${what}: exit 128 + ${signal}`);
          const after = names.map((name) => readFileSync(join(dir, name), 'utf8'));
          const fresh = after.filter((text, i) => text !== deployment(i));
          t.ok(
            fresh.every((text) => /istio-proxy/.test(text) && text.startsWith('apiVersion: apps/v1')),
            `${what}: every changed file wholly new`,
          );
          t.same(
            readdirSync(dir).filter((e) => TEMP.test(e)),
            [],
            `${what}: no temporary left`,
          );
          // Renames run to the end once started; a signal while the temporaries are written changes no file.
          const renaming = point.fn === 'renameSync' || k > n;
          t.equal(fresh.length, renaming ? n : 0, `${what}: ${renaming ? 'all new' : 'all old'}`);
          const key = `${signal} ${renaming ? 'renaming' : 'writing'}`;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          return true;
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 10) },
    );
    t.comment([...outcomes].map(([k, v]) => `${k}: ${v}`).join(', '));
  },
);

t.test('without a signal, a paused run writes every file and exits 0', async (t) => {
  const dir = join(tmp.dir, 'plain');
  mkdirSync(dir);
  const names = ['a.yaml', 'b.yaml'];
  for (const [i, name] of names.entries()) writeFileSync(join(dir, name), deployment(i), { flag: 'w' });
  const r = await new Promise<number | null>((resolve) =>
    spawn(process.execPath, ['-r', preload, BIN, 'diff', '-i', dir], {
      stdio: 'ignore',
      env: { ...process.env, PAUSE_AT: `renameSync|1|before|${join(tmp.dir, 'plain-marker')}|10` },
    }).on('exit', resolve),
  );
  t.equal(r, 0);
  t.equal(names.filter((n) => /istio-proxy/.test(readFileSync(join(dir, n), 'utf8'))).length, 2);
});

t.test('a contained run (its Worker writes the files) handles signals as the main thread does', async (t) => {
  // 4 files of 45 000 args each (1.7 MB) need 27 MB of heap by the estimate, more than an eighth of 192 MB.
  const big = (i: number) =>
    deployment(i).replace(
      '{name: a, image: n}',
      `{name: a, image: n, args: ${JSON.stringify(Array.from({ length: 45_000 }, (_, j) => `a${j}`))}}`,
    );
  for (const [at, renaming] of [
    ['renameSync|2|before', true],
    ['fsyncSync|2|before', false],
  ] as const) {
    const dir = join(tmp.dir, `contained-${renaming}`);
    mkdirSync(dir);
    const names = ['f0.yaml', 'f1.yaml', 'f2.yaml', 'f3.yaml'];
    for (const [i, name] of names.entries()) writeFileSync(join(dir, name), big(i));
    const r = await pausedRun(dir, at, 'SIGTERM', 192);
    t.ok(r.paused, `${at}: the run reached the moment (${r.stderr.slice(0, 300)})`);
    t.equal(r.status, 143, `${at}: exit 143`);
    t.same(
      readdirSync(dir).filter((e) => TEMP.test(e)),
      [],
      `${at}: no temporary left`,
    );
    const fresh = names.filter((n, i) => readFileSync(join(dir, n), 'utf8') !== big(i));
    t.equal(fresh.length, renaming ? 4 : 0, `${at}: ${renaming ? 'all new' : 'all old'}`);
  }
});
