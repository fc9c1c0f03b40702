/**
 * The `diff` class of `npm run bench` (issue #20 §4, issue #24 target 5): `meshinject diff`, `diff -i` and `check`
 * beside injecting the same file and beside `kpt fn source` of the same package, back to back. The input is the
 * `mixed` class as a kpt package of plain YAML (bench/package.ts; every workload injected) with the Istio bench
 * functionConfig as `--config`; default sizes 300 and 3 000 workloads (`--sizes` changes them). `diff -i` rewrites a fresh
 * copy of the input on every run; `check` runs on the input (every workload lacks its sidecar: exit 1) and on the
 * injected output (exit 0). Target: `diff` and `diff -i` at most 1.5 × the CPU of injecting. Figures, not tests.
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BENCH_CONFIG } from './generate.ts';
import { measure, median, type Measurement, type MeasureOptions } from './measure.ts';
import { countInjected, packageResources, writePackage } from './package.ts';

/** The commands of one diff row, in the order they are measured. */
export const DIFF_COMMANDS = [
  'kpt fn source',
  'inject',
  'diff',
  'diff -i',
  'check (input)',
  'check (injected)',
] as const;
export type DiffCommand = (typeof DIFF_COMMANDS)[number];

/** The exit code each command must give on this input (diff: 1 = changes, as kubectl diff; check: 1 = a workload lacks its sidecar). */
const EXPECTED_EXIT: Readonly<Record<DiffCommand, number>> = {
  'kpt fn source': 0,
  inject: 0,
  diff: 1,
  'diff -i': 0,
  'check (input)': 1,
  'check (injected)': 0,
};

/** One size of the diff class: every command on the same input. */
export interface DiffRow {
  size: number;
  inputMB: number;
  /** Absent commands were not run (kpt not on PATH). */
  runs: Partial<Record<DiffCommand, Measurement>>;
  /** The diff's size in MB, and whether `diff -i` left the file equal to the injected output. */
  diffMB: number;
  inPlaceMatches: boolean;
  /** Workloads injected in the output of inject, and workloads in the input. */
  injected: number;
  workloads: number;
}

/** Median of `reps` runs of `run` (each given its run index), as one measurement. */
async function medianOf(reps: number, run: (i: number) => Promise<Measurement>): Promise<Measurement> {
  const ms: Measurement[] = [];
  for (let i = 0; i < reps; i++) ms.push(await run(i));
  const med = median(ms.map((m) => m.seconds));
  const pick = ms.reduce((a, b) => (Math.abs(b.seconds - med) < Math.abs(a.seconds - med) ? b : a));
  return { ...pick, seconds: med, cpuSeconds: median(ms.map((m) => m.cpuSeconds)) };
}

/**
 * Measures kpt fn source, inject, `diff`, `diff -i` and `check` on `mixed` packages of each size.
 *
 * @param out the bench's scratch folder
 * @param cli bin/meshinject.js
 * @param withKpt whether kpt is on PATH
 * @param sizes workload counts (default [300, 3000])
 */
export async function benchDiff(
  out: string,
  cli: string,
  withKpt: boolean,
  sizes: readonly number[] = [300, 3000],
): Promise<DiffRow[]> {
  const config = `${out}/diff-config.yaml`;
  writeFileSync(config, BENCH_CONFIG);
  const rows: DiffRow[] = [];
  for (const n of sizes) {
    const pkg = `${out}/diff-package-${n}`;
    const resources = packageResources('mixed', n);
    const file = writePackage(pkg, resources);
    const copy = `${out}/diff-${n}-in-place.yaml`;
    const injected = `${out}/diff-injected.yaml`;
    const reps = n <= 1000 ? 3 : 1;
    const opts: MeasureOptions = { timeoutSeconds: 900 };
    const runs: DiffRow['runs'] = {};
    if (withKpt)
      runs['kpt fn source'] = await medianOf(reps, () =>
        measure('kpt', ['fn', 'source', pkg], { ...opts, stdoutFile: `${out}/diff-kpt.yaml` }),
      );
    runs.inject = await medianOf(reps, () =>
      measure('node', [cli, '-q', '-c', config, file], { ...opts, stdoutFile: injected }),
    );
    runs.diff = await medianOf(reps, () =>
      measure('node', [cli, 'diff', '-q', '-c', config, file], { ...opts, stdoutFile: `${out}/diff-out.patch` }),
    );
    runs['diff -i'] = await medianOf(reps, () => {
      copyFileSync(file, copy);
      return measure('node', [cli, 'diff', '-i', '-q', '-c', config, copy], opts);
    });
    runs['check (input)'] = await medianOf(reps, () => measure('node', [cli, 'check', '-q', '-c', config, file], opts));
    runs['check (injected)'] = await medianOf(reps, () =>
      measure('node', [cli, 'check', '-q', '-c', config, injected], opts),
    );
    const inPlaceMatches = readFileSync(copy).equals(readFileSync(injected));
    rows.push({
      size: n,
      inputMB: readFileSync(file).length / 1e6,
      runs,
      diffMB: readFileSync(`${out}/diff-out.patch`).length / 1e6,
      inPlaceMatches,
      injected: countInjected(injected, 'istio'),
      workloads: resources.filter((r) => r.workload).length,
    });
    process.stderr.write(
      `  diff ${n} workloads: ${DIFF_COMMANDS.filter((c) => runs[c])
        .map((c) => `${c} ${runs[c]!.cpuSeconds.toFixed(2)} s CPU (exit ${runs[c]!.exitCode})`)
        .join(', ')}\n`,
    );
    rmSync(pkg, { recursive: true, force: true });
    for (const f of [copy, `${out}/diff-out.patch`, injected, `${out}/diff-kpt.yaml`]) rmSync(f, { force: true });
  }
  return rows;
}

/** True when every command of the row gave its expected exit code. */
function exitsOk(r: DiffRow): boolean {
  return DIFF_COMMANDS.every((c) => r.runs[c] === undefined || r.runs[c]!.exitCode === EXPECTED_EXIT[c]);
}

/** The diff table: one line per command and size, CPU beside kpt's and beside injecting. */
export function diffTable(rows: readonly DiffRow[]): string[] {
  const lines = [
    '| N workloads | input MB | command | wall s | CPU s | RSS MB | CPU ÷ kpt | CPU ÷ inject | exit (expected) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const kpt = r.runs['kpt fn source'];
    const inject = r.runs.inject!;
    for (const c of DIFF_COMMANDS) {
      const m = r.runs[c];
      if (!m) continue;
      const q = (base: Measurement | undefined) =>
        base && Number.isFinite(base.cpuSeconds) ? (m.cpuSeconds / base.cpuSeconds).toFixed(2) : 'n/a';
      lines.push(
        `| ${r.size} | ${r.inputMB.toFixed(1)} | ${c} | ${m.seconds.toFixed(2)} | ${m.cpuSeconds.toFixed(2)} | ${m.maxRssMB.toFixed(0)} | ${q(kpt)} | ${q(inject)} | ${m.exitCode} (${EXPECTED_EXIT[c]}) |`,
      );
    }
    lines.push(
      `| ${r.size} | | (sanity) | | | | | | diff ${r.diffMB.toFixed(1)} MB; \`diff -i\` file = injected output: ${r.inPlaceMatches ? 'yes' : '**NO**'}; injected ${r.injected}/${r.workloads} |`,
    );
  }
  return lines;
}

/**
 * The targets of issue #20 §4 at the largest size measured: `diff` and `diff -i` at most 1.5 × inject (CPU); and
 * linear growth of each command between the two largest sizes (CPU ratio ÷ size ratio ≤ `growthBound`).
 */
export function diffTargets(
  rows: readonly DiffRow[],
  growthBound: number,
): Array<{ name: string; value: string; kpt?: string; met: boolean | undefined }> {
  const r = rows[rows.length - 1];
  if (!r) return [];
  const ok = exitsOk(r) && r.inPlaceMatches && r.injected === r.workloads;
  const inject = r.runs.inject!.cpuSeconds;
  const q = (c: DiffCommand) => r.runs[c]!.cpuSeconds / inject;
  const cpu = (c: DiffCommand) => `${r.runs[c]!.cpuSeconds.toFixed(2)} s`;
  const kpt = r.runs['kpt fn source'] ? { kpt: cpu('kpt fn source') } : {};
  const growth: Array<{ name: string; value: string; kpt?: string; met: boolean | undefined }> = [];
  const prev = rows[rows.length - 2];
  if (prev && exitsOk(prev)) {
    for (const c of DIFF_COMMANDS.filter((c) => c !== 'kpt fn source' && r.runs[c] && prev.runs[c])) {
      const g = r.runs[c]!.cpuSeconds / prev.runs[c]!.cpuSeconds / (r.size / prev.size);
      growth.push({
        name: `diff class, ${c}: CPU(${r.size}) ÷ CPU(${prev.size}) ÷ ${(r.size / prev.size).toFixed(0)} ≤ ${growthBound}`,
        value: g.toFixed(2),
        met: g <= growthBound,
      });
    }
  }
  return [
    ...growth,
    {
      name: `diff ${r.size}: CPU ≤ 1.5 × inject`,
      value: `${cpu('diff')} (${q('diff').toFixed(2)} × inject's ${inject.toFixed(2)} s)`,
      ...kpt,
      met: ok && q('diff') <= 1.5,
    },
    {
      name: `diff -i ${r.size}: CPU ≤ 1.5 × inject`,
      value: `${cpu('diff -i')} (${q('diff -i').toFixed(2)} × inject)`,
      ...kpt,
      met: ok && q('diff -i') <= 1.5,
    },
    {
      name: `diff and check ${r.size}: every exit code as expected, \`diff -i\` = inject, every workload injected`,
      value: ok ? 'yes' : 'no',
      met: ok,
    },
  ];
}
