/**
 * The `diff` class of `npm run bench` (issue #20 §4): `meshinject diff` and `meshinject diff -i` against injecting
 * the same file, back to back. The input is the `mixed` class as a plain YAML stream (bench/generate.ts
 * `generateResources`, every workload injected) with the bench functionConfig as `--config`; default size 3 000
 * workloads (`--sizes` changes it). `diff -i` rewrites a fresh copy of the input on every run. Target: both at most
 * 1.5 × the time of injecting. Figures, not tests: nothing fails.
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BENCH_CONFIG, generateResources, toStream } from './generate.ts';
import { measure, median, type Measurement } from './measure.ts';

/** One size of the diff class: the three commands on the same input. */
export interface DiffRow {
  size: number;
  inputMB: number;
  inject: Measurement;
  diff: Measurement;
  diffInPlace: Measurement;
  /** The diff's size in MB, and whether `diff -i` left the file equal to the injected output. */
  diffMB: number;
  inPlaceMatches: boolean;
}

/** Median of `reps` runs of `run` (each given its run index), as one measurement. */
async function medianOf(reps: number, run: (i: number) => Promise<Measurement>): Promise<Measurement> {
  const ms: Measurement[] = [];
  for (let i = 0; i < reps; i++) ms.push(await run(i));
  const med = median(ms.map((m) => m.seconds));
  const pick = ms.reduce((a, b) => (Math.abs(b.seconds - med) < Math.abs(a.seconds - med) ? b : a));
  return { ...pick, seconds: med };
}

/**
 * Measures inject, `diff` and `diff -i` on `mixed` streams of each size.
 *
 * @param out the bench's scratch folder
 * @param cli bin/meshinject.js
 * @param sizes workload counts (default [3000])
 */
export async function benchDiff(out: string, cli: string, sizes: readonly number[] = [3000]): Promise<DiffRow[]> {
  const config = `${out}/diff-config.yaml`;
  writeFileSync(config, BENCH_CONFIG);
  const rows: DiffRow[] = [];
  for (const n of sizes) {
    const file = `${out}/diff-${n}.yaml`;
    const copy = `${out}/diff-${n}-in-place.yaml`;
    writeFileSync(file, toStream(generateResources(n)));
    const reps = n <= 1000 ? 3 : 1;
    const opts = { timeoutSeconds: 900 };
    const inject = await medianOf(reps, () => measure('node', [cli, '-c', config, file], { ...opts, stdoutFile: `${out}/diff-injected.yaml` }));
    const diff = await medianOf(reps, () => measure('node', [cli, 'diff', '-c', config, file], { ...opts, stdoutFile: `${out}/diff-out.patch` }));
    const diffInPlace = await medianOf(reps, () => {
      copyFileSync(file, copy);
      return measure('node', [cli, 'diff', '-i', '-c', config, copy], opts);
    });
    const inPlaceMatches = readFileSync(copy).equals(readFileSync(`${out}/diff-injected.yaml`));
    rows.push({ size: n, inputMB: readFileSync(file).length / 1e6, inject, diff, diffInPlace, diffMB: readFileSync(`${out}/diff-out.patch`).length / 1e6, inPlaceMatches });
    process.stderr.write(`  diff ${n} workloads: inject ${inject.seconds.toFixed(2)} s, diff ${diff.seconds.toFixed(2)} s (exit ${diff.exitCode}), diff -i ${diffInPlace.seconds.toFixed(2)} s\n`);
    for (const f of [file, copy, `${out}/diff-out.patch`, `${out}/diff-injected.yaml`]) rmSync(f, { force: true });
  }
  return rows;
}

/** The diff table: seconds and RSS of each command, and the ratios to injecting. */
export function diffTable(rows: readonly DiffRow[]): string[] {
  const lines = ['| N workloads | input MB | inject s | diff s | diff ÷ inject | diff -i s | diff -i ÷ inject | diff MB | RSS MB (inject / diff / diff -i) | diff exit (1 = changes) | diff -i file = injected |', '|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const q = (m: Measurement) => (m.seconds / r.inject.seconds).toFixed(2);
    lines.push(`| ${r.size} | ${r.inputMB.toFixed(1)} | ${r.inject.seconds.toFixed(2)} | ${r.diff.seconds.toFixed(2)} | ${q(r.diff)} | ${r.diffInPlace.seconds.toFixed(2)} | ${q(r.diffInPlace)} | ${r.diffMB.toFixed(1)} | ${[r.inject, r.diff, r.diffInPlace].map((m) => m.maxRssMB.toFixed(0)).join(' / ')} | ${r.diff.exitCode} | ${r.inPlaceMatches ? 'yes' : 'NO'} |`);
  }
  return lines;
}

/** The targets of issue #20 §4 at the largest size measured: `diff` and `diff -i` at most 1.5 × inject. */
export function diffTargets(rows: readonly DiffRow[]): Array<{ name: string; value: string; met: boolean | undefined }> {
  const r = rows[rows.length - 1];
  if (!r) return [];
  const ok = r.inject.exitCode === 0 && r.diff.exitCode === 1 && r.diffInPlace.exitCode === 0 && r.inPlaceMatches;
  return [
    { name: `diff ${r.size}: time ≤ 1.5 × inject`, value: (r.diff.seconds / r.inject.seconds).toFixed(2), met: ok && r.diff.seconds <= 1.5 * r.inject.seconds },
    { name: `diff -i ${r.size}: time ≤ 1.5 × inject`, value: (r.diffInPlace.seconds / r.inject.seconds).toFixed(2), met: ok && r.diffInPlace.seconds <= 1.5 * r.inject.seconds },
  ];
}
