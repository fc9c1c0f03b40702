/**
 * The `memory` class of `npm run bench` (issue #40 §3): peak RSS and time of the all-workloads package (bench/package.ts,
 * N workloads of five kinds plus N/5 Services, every workload injected with Istio) at 10 000 and 100 000 workloads,
 * meshinject alone, one run per size, with Node's default heap (what a user runs it with; the other classes give
 * Node a larger heap from 50 000 workloads on). The output of 100 000 workloads (some 770 MB) is longer than a
 * JavaScript string may be, so the injected workloads are counted line by line from the output file.
 */
import { createReadStream, readFileSync, rmSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { measure, type Measurement } from './measure.ts';
import { packageResources, PROXY_CONTAINER, writePackage } from './package.ts';

/** The sizes measured (÷ the `--quick` scale). */
export const MEMORY_SIZES = [10000, 100000] as const;

/** One size of the memory class. */
export interface MemoryRow {
  /** Workloads in the package. */
  size: number;
  /** Resources in resources.yaml (workloads and Services). */
  resources: number;
  inputMB: number;
  /** Bytes meshinject wrote, in MB (10^6). */
  outputMB: number;
  m: Measurement;
  injected: number;
}

/**
 * Workloads injected in an output file, as `countInjected` of ./package.ts counts them (annotations marked
 * `injected`, at most the number of `name: istio-proxy` lines), line by line.
 */
export async function countInjectedLines(file: string): Promise<number> {
  const marked = /meshinject\.dev\/injection"?: ?"?injected\b/g;
  const proxy = new RegExp(`^\\s*(?:- )?name: ${PROXY_CONTAINER.istio}\\s*$`);
  let annotations = 0;
  let proxies = 0;
  const lines = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) {
    annotations += (line.match(marked) ?? []).length;
    if (proxy.test(line)) proxies++;
  }
  return Math.min(annotations, proxies);
}

/**
 * Measures the memory class: per size, the package is written, `meshinject -q -c CONFIG DIR` runs once (stdout to
 * a file), the injected workloads are counted, and the files are removed.
 */
export async function benchMemory(
  out: string,
  cli: string,
  config: string,
  sizes: readonly number[],
): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const n of sizes) {
    const resources = packageResources('all-workloads', n);
    const dir = `${out}/memory-${n}`;
    const file = writePackage(dir, resources);
    const inputMB = readFileSync(file).length / 1e6;
    const outFile = `${out}/memory-out.txt`;
    const m = await measure('node', [cli, '-q', '-c', config, dir], { stdoutFile: outFile, timeoutSeconds: 1800 });
    const injected = await countInjectedLines(outFile);
    rows.push({ size: n, resources: resources.length, inputMB, outputMB: statSync(outFile).size / 1e6, m, injected });
    process.stderr.write(
      `  memory ${n}: ${m.seconds.toFixed(1)} s, ${m.cpuSeconds.toFixed(2)} s CPU, ${m.maxRssMB.toFixed(0)} MB peak, exit ${m.exitCode}, injected ${injected}/${n}\n`,
    );
    if (m.exitCode !== 0) process.stderr.write(`    meshinject stderr: ${m.stderr.slice(0, 500)}\n`);
    rmSync(dir, { recursive: true, force: true });
    rmSync(outFile, { force: true });
  }
  return rows;
}

/** Peak RSS of `b` ÷ that of `a` ÷ the size ratio (1.0 = linear; below 1 while Node's own baseline weighs). */
export function rssGrowth(a: MemoryRow, b: MemoryRow): number {
  return b.m.maxRssMB / a.m.maxRssMB / (b.size / a.size);
}

/** Peak RSS added per 1 000 workloads from `a` to `b`, in MB: what the input costs beyond Node and the engine. */
export function marginalMB(a: MemoryRow, b: MemoryRow): number {
  return ((b.m.maxRssMB - a.m.maxRssMB) / (b.size - a.size)) * 1000;
}

/** CPU of `b` ÷ that of `a` ÷ the size ratio. */
export function cpuGrowth(a: MemoryRow, b: MemoryRow): number {
  return b.m.cpuSeconds / a.m.cpuSeconds / (b.size / a.size);
}

/** The memory table: one line per size, with the growth from the previous size. */
export function memoryTable(rows: readonly MemoryRow[]): string[] {
  const lines = [
    '| workloads | resources | input MB | output MB | wall s | CPU s | peak RSS MB | RSS ÷ size growth | MB per 1 000 more workloads | CPU ÷ size growth | injected | exit |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  rows.forEach((r, i) => {
    const prev = rows[i - 1];
    const g = (f: (a: MemoryRow, b: MemoryRow) => number) =>
      prev ? `${f(prev, r).toFixed(2)} (×${(r.size / prev.size).toFixed(0)} size)` : '';
    lines.push(
      `| ${r.size} | ${r.resources} | ${r.inputMB.toFixed(1)} | ${r.outputMB.toFixed(1)} | ${r.m.seconds.toFixed(1)} | ${r.m.cpuSeconds.toFixed(2)} | ${r.m.maxRssMB.toFixed(0)} | ${g(rssGrowth)} | ${prev ? marginalMB(prev, r).toFixed(1) : ''} | ${g(cpuGrowth)} | ${r.injected}/${r.size} | ${r.m.exitCode} |`,
    );
  });
  return lines;
}
