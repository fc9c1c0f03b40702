/**
 * `npm run bench`: meshinject's CPU and memory against its peer, `kpt fn source` (kpt's reader and writer of the
 * same package, which every kpt pipeline already pays for), and against the `yaml` round trip, on identical
 * inputs, class by class; the targets of issue #24 with their status; outputs compared with fast paths on and off.
 *
 *   node --import tsx bench/run.ts [--quick] [--class NAME[,NAME…]] [--sizes 1000,10000] [--with-50k]
 *                                  [--kustomize-max N] [--kustomize-timeout S] [--no-write]
 *
 * Input classes (`--class`, default: all of them, about 20 minutes on 2 cores; `--quick` divides every size by 10):
 *   - `mixed`: N workloads (bench/generate.ts `generateResources`; ≈1.75 N resources with Services and
 *     ConfigMaps) at N = 100, 1 000, 10 000 with Istio, and at 1 000 and 10 000 also with the Linkerd (manual),
 *     OSM and Kuma drivers (bench/package.ts `MESH_CONFIGS`); `--with-50k` adds 50 000; plus kustomize (a
 *     strategic-merge patch adding istio-proxy + volumes to every Deployment) for N ≤ --kustomize-max (default
 *     1 000: its time grows much faster than linearly);
 *   - `all-workloads`: N workloads of five kinds, all injected, plus N/5 Services (1 000 and 10 000);
 *   - `every-shape-different`: the same with every pod template of its own shape (1 000 and 10 000);
 *     these three are kpt packages of plain multi-document YAML (bench/package.ts): per size, `kpt fn source DIR`,
 *     `meshinject -q -c CONFIG DIR` and the yaml round trip of DIR/resources.yaml, back to back;
 *   - `all-workloads-rl`: all-workloads as a kpt-style ResourceList on stdin (the form `kpt fn eval` sends: kpt
 *     annotations, comments), beside the round trip only (1 000 and 10 000);
 *   - `compact-json`, `wide-maps`, `huge-annotation`, `anchored-300k`: the shapes that once took super-linear
 *     time (issue #8 §3; `generateShape`), each at sizes n, 2n, 4n (up to 20 000 items, 40 000 keys, 4 MiB,
 *     300 000 documents; `anchored-300k` also 10 000 plain Deployments with one anchored ConfigMap, which once
 *     sent every document through the `yaml` package), beside the round trip;
 *   - `look-alikes`: n Deployments holding plain YAML 1.1 booleans (`on`, `no`) in string fields, n = 1 000,
 *     2 000, 4 000, beside the round trip;
 *   - `memory`: the all-workloads package at 10 000 and 100 000 workloads, meshinject alone with Node's default
 *     heap, one run each: wall, CPU, peak RSS and their growth (bench/memory.ts);
 *   - `diff`: `meshinject diff`, `diff -i` and `check` (on the input and on the injected output) beside injecting
 *     and `kpt fn source`, mixed 300 and 3 000 (bench/diff.ts);
 *   - `startup`: a 10-workload ResourceList through the CLI beside bare `node -e 0`, median of 15 alternating
 *     rounds, wall and CPU (bench/startup.ts);
 *   - `identity`: every class at 1 000 (shapes at n/10) with the fast paths on, off, and verified; the sha256 of
 *     the outputs must be equal (bench/identity.ts; the switches are `FAST_PATHS_OFF` there).
 * CPU is user + system seconds and peak RSS comes from GNU `/usr/bin/time`. The kpt-package classes (mixed,
 * all-workloads, every-shape-different) up to 10 000: medians of 3 rounds, each running kpt, every mesh and the
 * round trip back to back; other classes: N ≤ 1 000 median of 3 runs, larger one run.
 * A full run (no `--class`, no `--sizes`) writes bench/RESULTS.md (keeping its `## Notes (by hand` section)
 * unless --no-write; `--quick` writes bench/out/RESULTS.quick.md; a partial run prints its tables only.
 * Figures, not tests: nothing fails, except that an output mismatch in `identity` makes the exit code 1.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateShape, generateWorkloads, toResourceList, type Shape } from './generate.ts';
import { measure, measureMedian, medianOf, type Measurement } from './measure.ts';
import { KUSTOMIZE_PATCH, kustomization } from './kustomize.ts';
import { benchDiff, diffTable, diffTargets, type DiffRow } from './diff.ts';
import {
  countInjected,
  countKptItems,
  hasKpt,
  kptVersion,
  MESH_CONFIGS,
  MESHES,
  packageResources,
  writePackage,
  type Mesh,
  type PackageClass,
} from './package.ts';
import { benchStartup, startupTable, STARTUP_BUDGET_MS, STARTUP_STRETCH_MS, type Startup } from './startup.ts';
import { identityRow, identityTable, type IdentityRow } from './identity.ts';
import { notesSection } from './results.ts';
import { benchMemory, cpuGrowth, MEMORY_SIZES, memoryTable, rssGrowth, type MemoryRow } from './memory.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}bench/out`;
const CLI = `${ROOT}bin/meshinject.js`;
const FLOOR = `${ROOT}bench/yaml-roundtrip.mjs`;
/** From this N on, both node processes run with `--max-old-space-size=LARGE_HEAP_MB`. */
const LARGE_HEAP_FROM = 50000;
const LARGE_HEAP_MB = 12288;
/** Linear growth: CPU(larger) ÷ CPU(smaller) ÷ (size ratio) at most this, in every class. */
const GROWTH_BOUND = 1.2;

/** Every input class, in the order a full run measures them. */
export const CLASSES = [
  'mixed',
  'all-workloads',
  'every-shape-different',
  'all-workloads-rl',
  'compact-json',
  'wide-maps',
  'huge-annotation',
  'anchored-300k',
  'look-alikes',
  'memory',
  'diff',
  'startup',
  'identity',
] as const;
type ClassName = (typeof CLASSES)[number];
const PACKAGE_CLASSES: readonly ClassName[] = ['mixed', 'all-workloads', 'every-shape-different'];

interface Args {
  classes: ClassName[];
  sizes?: number[];
  /** Every default size ÷ `scale` (10 with --quick). */
  scale: number;
  with50k: boolean;
  kustomizeMax: number;
  kustomizeTimeout: number;
  write: boolean;
  partial: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    classes: [...CLASSES],
    scale: 1,
    with50k: false,
    kustomizeMax: 1000,
    kustomizeTimeout: 600,
    write: true,
    partial: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--with-50k') a.with50k = true;
    else if (x === '--quick') a.scale = 10;
    else if (x === '--sizes') {
      a.sizes = argv[++i]!.split(',').map(Number);
      a.partial = true;
    } else if (x === '--class') {
      const names = argv[++i]!.split(',');
      for (const n of names)
        if (!(CLASSES as readonly string[]).includes(n))
          throw new Error(`bench: unknown class ${n} (have ${CLASSES.join(', ')})`);
      a.classes = names as ClassName[];
      a.partial = true;
    } else if (x === '--kustomize-max') a.kustomizeMax = Number(argv[++i]);
    else if (x === '--kustomize-timeout') a.kustomizeTimeout = Number(argv[++i]);
    else if (x === '--no-write') a.write = false;
    else throw new Error(`bench: unknown argument ${x}`);
  }
  return a;
}

/** The default sizes of a class ÷ the scale (never below 10). */
function scaled(args: Args, sizes: readonly number[]): number[] {
  return sizes.map((n) => Math.max(10, Math.round(n / args.scale)));
}

/** One measured input: meshinject, kpt (package classes) and the round trip on the same resources, back to back. */
interface Row {
  cls: ClassName;
  label: string;
  /** The mesh of the functionConfig (package and ResourceList classes). */
  meshName?: Mesh;
  /** Size in `unit` (workloads, items, keys, KiB, documents). */
  size: number;
  unit: string;
  resources?: number;
  inputMB: number;
  mesh?: Measurement & { injected: number; expected: number };
  floor: Measurement;
  /** `kpt fn source` of the package: items it wrote and the resources of the package (Kptfile included). */
  kpt?: Measurement & { items: number; expected: number };
  kustomize?: Measurement & { injected: number; expected: number };
  /** Plan cache hits / lookups, when meshinject reported them (MESHINJECT_PLAN_STATS). */
  plans?: { hits: number; lookups: number };
}

/** Counts `istio-proxy` container entries (kustomize's patch adds no annotation): `name: istio-proxy` as a whole YAML line, or `"name": "istio-proxy"` in JSON. */
function countProxies(file: string): number {
  const text = readFileSync(file, 'utf8');
  return (text.match(/\bname: istio-proxy\s*$/gm) ?? []).length + (text.match(/"name": ?"istio-proxy"/g) ?? []).length;
}

function fmtS(m: Measurement | undefined): string {
  if (!m) return 'n/a';
  if (m.timedOut) return `> ${m.seconds.toFixed(0)} (killed)`;
  return m.seconds < 10 ? m.seconds.toFixed(3) : m.seconds.toFixed(1);
}

function fmtCpu(m: Measurement | undefined): string {
  return m && !m.timedOut && Number.isFinite(m.cpuSeconds) ? m.cpuSeconds.toFixed(2) : 'n/a';
}

function fmtMB(m: Measurement | undefined): string {
  return m && !m.timedOut && Number.isFinite(m.maxRssMB) ? m.maxRssMB.toFixed(0) : 'n/a';
}

function planStats(stderr: string): Row['plans'] {
  const m = /meshinject plans: (\d+) hits of (\d+) lookups/.exec(stderr);
  return m ? { hits: Number(m[1]), lookups: Number(m[2]) } : undefined;
}

function died(m: Measurement): string {
  return m.exitCode !== 0 ? ` (exit ${m.exitCode}${/heap limit/.test(m.stderr) ? ': heap out of memory' : ''})` : '';
}

/** Runs meshinject (`cliArgs` after the CLI path) `reps` times and counts the workloads it injected for `meshName`. */
async function measureMesh(
  label: string,
  cliArgs: string[],
  stdinFile: string | undefined,
  meshName: Mesh,
  expected: number,
  heap: string[],
  reps: number,
): Promise<{ mesh: NonNullable<Row['mesh']>; plans?: Row['plans'] }> {
  const runs: MeshRun[] = [];
  for (let i = 0; i < reps; i++) runs.push(await meshRun(cliArgs, stdinFile, meshName, heap));
  return meshResult(label, runs, expected);
}

/** One meshinject run and the workloads it injected (the fewest over runs is reported). */
interface MeshRun {
  m: Measurement;
  injected: number;
}

async function meshRun(
  cliArgs: string[],
  stdinFile: string | undefined,
  meshName: Mesh,
  heap: string[],
): Promise<MeshRun> {
  const outFile = `${OUT}/mesh-out.txt`;
  const m = await measure('node', [...heap, CLI, ...cliArgs], {
    ...(stdinFile ? { stdinFile } : {}),
    stdoutFile: outFile,
    timeoutSeconds: 900,
    env: { MESHINJECT_PLAN_STATS: '1' },
  });
  return { m, injected: countInjected(outFile, meshName) };
}

/** The row figures of several meshinject runs of one input (`medianOf`), printed as they are measured. */
function meshResult(
  label: string,
  runs: readonly MeshRun[],
  expected: number,
): { mesh: NonNullable<Row['mesh']>; plans?: Row['plans'] } {
  const m = medianOf(runs.map((r) => r.m));
  const injected = Math.min(...runs.map((r) => r.injected));
  process.stderr.write(
    `  ${label}: meshinject ${fmtS(m)} s, ${fmtCpu(m)} s CPU, exit ${m.exitCode}, injected ${injected}/${expected}\n`,
  );
  if (m.exitCode !== 0) process.stderr.write(`    meshinject stderr: ${m.stderr.slice(0, 500)}\n`);
  const plans = planStats(m.stderr);
  return { mesh: { ...m, injected, expected }, ...(plans ? { plans } : {}) };
}

async function kustomizeRow(row: Row, resourcesFile: string, expected: number, args: Args): Promise<void> {
  const kdir = `${OUT}/kustomize-${row.size}`;
  mkdirSync(kdir, { recursive: true });
  writeFileSync(`${kdir}/resources.yaml`, readFileSync(resourcesFile));
  writeFileSync(`${kdir}/patch.yaml`, KUSTOMIZE_PATCH);
  writeFileSync(`${kdir}/kustomization.yaml`, kustomization('resources.yaml', 'patch.yaml'));
  const outFile = `${OUT}/kustomize-${row.size}.out.yaml`;
  const m = await measureMedian(row.size < 1000 ? 3 : 1, 'kubectl', ['kustomize', kdir], {
    stdoutFile: outFile,
    timeoutSeconds: args.kustomizeTimeout,
  });
  row.kustomize = { ...m, injected: m.timedOut ? 0 : countProxies(outFile), expected };
  process.stderr.write(`  mixed ${row.size}: kustomize ${fmtS(m)} s\n`);
  rmSync(kdir, { recursive: true, force: true });
  rmSync(outFile, { force: true });
}

/** The config file of each mesh, written once into the scratch folder. */
function meshConfigFile(mesh: Mesh): string {
  const file = `${OUT}/config-${mesh}.yaml`;
  if (!existsSync(file)) writeFileSync(file, MESH_CONFIGS[mesh]);
  return file;
}

/**
 * A package class (`mixed`, `all-workloads`, `every-shape-different`) at its sizes: per size, the package is
 * written once, then `kpt fn source`, meshinject (each mesh of the size) and the yaml round trip run back to back.
 */
async function benchPackageClass(cls: PackageClass, args: Args, cliOk: boolean, kptOk: boolean): Promise<Row[]> {
  const sizes = args.sizes ? [...args.sizes] : scaled(args, cls === 'mixed' ? [100, 1000, 10000] : [1000, 10000]);
  if (args.with50k && !sizes.includes(50000)) sizes.push(50000);
  const driverSizes = new Set(args.sizes ?? scaled(args, [1000, 10000]));
  const rows: Row[] = [];
  for (const n of sizes) {
    const resources = packageResources(cls, n);
    const dir = `${OUT}/package-${cls}-${n}`;
    const file = writePackage(dir, resources);
    const heap = n >= LARGE_HEAP_FROM ? [`--max-old-space-size=${LARGE_HEAP_MB}`] : [];
    // Three rounds up to 10 000 (the targets' size), one beyond; each round runs kpt, every mesh and the round
    // trip back to back, so that the machine's load weighs on all of them alike, and each figure is the median
    // over the rounds.
    const reps = n <= 10000 ? 3 : 1;
    const expected = resources.filter((r) => r.workload).length;
    const base = {
      cls,
      size: n,
      unit: 'workloads',
      resources: resources.length,
      inputMB: readFileSync(file).length / 1e6,
    };
    const meshes: readonly Mesh[] = cls === 'mixed' && driverSizes.has(n) ? MESHES : ['istio'];
    const kptRuns: Array<Measurement & { items: number }> = [];
    const meshRuns = new Map<Mesh, MeshRun[]>(meshes.map((m) => [m, []]));
    const floorRuns: Measurement[] = [];
    for (let round = 0; round < reps; round++) {
      if (kptOk) {
        const kptOut = `${OUT}/kpt-out.yaml`;
        const k = await measure('kpt', ['fn', 'source', dir], { stdoutFile: kptOut, timeoutSeconds: 900 });
        kptRuns.push({ ...k, items: countKptItems(kptOut) });
        rmSync(kptOut, { force: true });
      }
      if (cliOk)
        for (const meshName of meshes)
          meshRuns
            .get(meshName)!
            .push(await meshRun(['-q', '-c', meshConfigFile(meshName), dir], undefined, meshName, heap));
      floorRuns.push(
        await measure('node', [...heap, FLOOR, file], { stdoutFile: `${OUT}/floor-out.txt`, timeoutSeconds: 900 }),
      );
    }
    let kpt: Row['kpt'];
    if (kptOk) {
      const k = medianOf(kptRuns);
      kpt = { ...k, items: Math.min(...kptRuns.map((r) => r.items)), expected: resources.length + 1 };
      process.stderr.write(
        `  ${cls} ${n}: kpt fn source ${fmtS(k)} s, ${fmtCpu(k)} s CPU, ${kpt.items}/${kpt.expected} items\n`,
      );
    }
    const measured: Array<Omit<Row, 'floor'>> = [];
    for (const meshName of meshes) {
      const label = cls === 'mixed' ? `mixed ${meshName}` : cls;
      const row: Omit<Row, 'floor'> = { ...base, label, meshName, ...(kpt ? { kpt } : {}) };
      if (cliOk) Object.assign(row, meshResult(`${label} ${n}`, meshRuns.get(meshName)!, expected));
      measured.push(row);
    }
    const floor = medianOf(floorRuns);
    process.stderr.write(`  ${cls} ${n}: round trip ${fmtS(floor)} s, ${fmtCpu(floor)} s CPU\n`);
    const out = measured.map((r) => ({ ...r, floor }));
    if (cls === 'mixed' && n <= args.kustomizeMax)
      await kustomizeRow(out[0]!, file, resources.filter((r) => r.kind === 'Deployment').length, args);
    rows.push(...out);
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** `all-workloads-rl`: all-workloads as a kpt-style ResourceList on stdin, beside the round trip. */
async function benchResourceList(args: Args, cliOk: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of args.sizes ?? scaled(args, [1000, 10000])) {
    const resources = generateWorkloads(n);
    const file = `${OUT}/all-workloads-rl-${n}.yaml`;
    writeFileSync(file, toResourceList(resources));
    const heap = n >= LARGE_HEAP_FROM ? [`--max-old-space-size=${LARGE_HEAP_MB}`] : [];
    const reps = n <= 1000 ? 3 : 1;
    const row: Omit<Row, 'floor'> = {
      cls: 'all-workloads-rl',
      label: 'all-workloads-rl',
      meshName: 'istio',
      size: n,
      unit: 'workloads',
      resources: resources.length,
      inputMB: readFileSync(file).length / 1e6,
    };
    if (cliOk) Object.assign(row, await measureMesh(`all-workloads-rl ${n}`, [], file, 'istio', n, heap, reps));
    const floor = await measureMedian(reps, 'node', [...heap, FLOOR, file], {
      stdoutFile: `${OUT}/floor-out.txt`,
      timeoutSeconds: 900,
    });
    rows.push({ ...row, floor });
    rmSync(file, { force: true });
  }
  return rows;
}

/** The shape classes: generator shapes and base sizes (each run at n, 2n, 4n). */
const SHAPE_CLASSES: Partial<Record<ClassName, Array<{ shape: Shape; n: number; unit: string }>>> = {
  'compact-json': [{ shape: 'compact-json', n: 5000, unit: 'items' }],
  'wide-maps': [
    { shape: 'wide-configmap', n: 10000, unit: 'keys' },
    { shape: 'wide-values', n: 10000, unit: 'keys' },
  ],
  'huge-annotation': [{ shape: 'huge-annotation', n: 1024, unit: 'KiB' }],
  'anchored-300k': [
    { shape: 'anchored-docs', n: 75000, unit: 'documents' },
    { shape: 'one-anchored', n: 2500, unit: 'Deployments' },
  ],
  'look-alikes': [{ shape: 'look-alikes', n: 1000, unit: 'Deployments' }],
};

/** The CLI arguments of a shape (wide-values carries its own functionConfig). */
function shapeArgs(shape: Shape): string[] {
  return shape === 'wide-values' ? [] : ['--config', meshConfigFile('istio')];
}

async function benchShapes(cls: ClassName, args: Args, cliOk: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { shape, n: base, unit } of SHAPE_CLASSES[cls]!) {
    for (const k of [1, 2, 4]) {
      const n = Math.round(base / args.scale) * k;
      const file = `${OUT}/shape-${shape}-${n}.txt`;
      writeFileSync(file, generateShape(shape, n));
      const heap = ['--max-old-space-size=8192'];
      const row: Omit<Row, 'floor'> = { cls, label: shape, size: n, unit, inputMB: readFileSync(file).length / 1e6 };
      if (cliOk)
        Object.assign(
          row,
          await measureMesh(
            `${shape} ${n} ${unit}`,
            shapeArgs(shape),
            file,
            'istio',
            shape === 'compact-json' || shape === 'one-anchored' || shape === 'look-alikes' ? n : 1,
            heap,
            1,
          ),
        );
      const floor = await measureMedian(1, 'node', [...heap, FLOOR, file], {
        stdoutFile: `${OUT}/floor-out.txt`,
        timeoutSeconds: 900,
      });
      rows.push({ ...row, floor });
      rmSync(file, { force: true });
    }
  }
  return rows;
}

/**
 * The `identity` class: each package class (mixed with every mesh), the ResourceList form and each shape at a
 * moderate size, with the fast paths on and off (bench/identity.ts).
 */
async function benchIdentity(args: Args): Promise<IdentityRow[]> {
  const n = args.sizes?.[0] ?? scaled(args, [1000])[0]!;
  const rows: IdentityRow[] = [];
  const outFile = `${OUT}/identity-out.txt`;
  for (const cls of ['mixed', 'all-workloads', 'every-shape-different'] as const) {
    const dir = `${OUT}/identity-${cls}`;
    writePackage(dir, packageResources(cls, n));
    for (const mesh of cls === 'mixed' ? MESHES : (['istio'] as const))
      rows.push(
        await identityRow(`${cls} ${n} (${mesh}, package)`, [CLI, '-q', '-c', meshConfigFile(mesh), dir], outFile),
      );
    rmSync(dir, { recursive: true, force: true });
  }
  const rl = `${OUT}/identity-rl.yaml`;
  writeFileSync(rl, toResourceList(generateWorkloads(n)));
  rows.push(await identityRow(`all-workloads-rl ${n} (ResourceList on stdin)`, [CLI], outFile, rl));
  for (const { shape, n: base, unit } of Object.values(SHAPE_CLASSES).flat()) {
    const size = Math.max(1, Math.round(base / 10 / args.scale));
    writeFileSync(rl, generateShape(shape, size));
    rows.push(
      await identityRow(
        `${shape} ${size} ${unit}`,
        ['--max-old-space-size=8192', CLI, ...shapeArgs(shape)],
        outFile,
        rl,
      ),
    );
  }
  rmSync(rl, { force: true });
  rmSync(outFile, { force: true });
  return rows;
}

function machine(loadAtStart: string, minutes: Results['minutes']): string[] {
  const cpuModel =
    /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  const kubectl = (() => {
    try {
      return execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .join(', ');
    } catch {
      return 'kubectl: not available';
    }
  })();
  const yamlVersion = (JSON.parse(readFileSync(`${ROOT}node_modules/yaml/package.json`, 'utf8')) as { version: string })
    .version;
  return [
    `- CPU: ${cpuModel}`,
    `- nproc: ${nproc}`,
    `- memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- node: ${process.version}; yaml ${yamlVersion}`,
    `- ${kptVersion()}`,
    `- ${kubectl}`,
    `- load average (1, 5, 15 min): ${loadAtStart} when the run started, ${loadAverage()} when the report was written`,
    `- run time: ${Object.values(minutes)
      .reduce((a, b) => a + b, 0)
      .toFixed(1)} min (${Object.entries(minutes)
      .map(([c, m]) => `${c} ${m.toFixed(1)}`)
      .join(', ')})`,
  ];
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', ');
}

function ok(r: Row): boolean {
  return r.mesh !== undefined && r.mesh.exitCode === 0 && r.floor.exitCode === 0;
}

function kptOk(r: Row): boolean {
  return r.kpt !== undefined && r.kpt.exitCode === 0 && Number.isFinite(r.kpt.cpuSeconds);
}

/** meshinject ÷ the peer (`kpt` or the round trip `floor`) by `f`, when both ran. */
function ratio(r: Row, peer: 'kpt' | 'floor', f: (m: Measurement) => number): number | undefined {
  if (!ok(r) || (peer === 'kpt' && !kptOk(r))) return undefined;
  return f(r.mesh!) / f(r[peer]!);
}

/** The rows of the same series (label and mesh) as `r`, smallest size first. */
function series(r: Row, rows: readonly Row[]): Row[] {
  return rows.filter((x) => x.label === r.label && x.meshName === r.meshName);
}

/** Growth of meshinject's CPU from the previous size of its series, ÷ the size ratio (1.0 = linear). */
function growth(r: Row, rows: readonly Row[]): string {
  const s = series(r, rows);
  const prev = s[s.indexOf(r) - 1];
  if (!prev || !ok(r) || !ok(prev)) return '';
  const v = r.mesh!.cpuSeconds / prev.mesh!.cpuSeconds / (r.size / prev.size);
  return `${v.toFixed(2)} (×${(r.size / prev.size).toFixed(0)} size)`;
}

const fx = (v: number | undefined, d = 2) => (v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(d));

function classTable(rows: readonly Row[]): string[] {
  const head =
    '| class | size | input MB | meshinject wall s | CPU s | RSS MB | injected | kpt fn source CPU s | kpt RSS MB | CPU ÷ kpt | RSS ÷ kpt | round trip CPU s | round trip RSS MB | CPU ÷ round trip | growth (CPU ÷ size) | plan hits |';
  const lines = [
    head,
    '|' +
      head
        .split('|')
        .slice(1, -1)
        .map(() => '---')
        .join('|') +
      '|',
  ];
  for (const r of rows) {
    const inj = r.mesh ? `${r.mesh.injected}/${r.mesh.expected}${died(r.mesh)}` : 'n/a';
    const kptItems = r.kpt && r.kpt.items !== r.kpt.expected ? ` (${r.kpt.items}/${r.kpt.expected} items)` : '';
    const plans =
      r.plans && r.plans.lookups > 0
        ? `${((100 * r.plans.hits) / Math.max(1, r.plans.lookups)).toFixed(1)}% (${r.plans.hits}/${r.plans.lookups})`
        : 'n/a';
    lines.push(
      `| ${r.label} | ${r.size} ${r.unit} | ${r.inputMB.toFixed(1)} | ${fmtS(r.mesh)} | ${fmtCpu(r.mesh)} | ${fmtMB(r.mesh)} | ${inj} | ${r.kpt ? `${fmtCpu(r.kpt)}${died(r.kpt)}${kptItems}` : 'n/a'} | ${fmtMB(r.kpt)} | ${fx(ratio(r, 'kpt', (m) => m.cpuSeconds))} | ${fx(ratio(r, 'kpt', (m) => m.maxRssMB))} | ${fmtCpu(r.floor)}${died(r.floor)} | ${fmtMB(r.floor)} | ${fx(ratio(r, 'floor', (m) => m.cpuSeconds))} | ${growth(r, rows)} | ${plans} |`,
    );
  }
  return lines;
}

function kustomizeTable(rows: readonly Row[]): string[] {
  const lines = [
    '| N workloads | kustomize s | kustomize RSS MB | Deployments patched | meshinject s (same input, all workloads) |',
    '|---|---|---|---|---|',
  ];
  for (const r of rows) {
    if (!r.kustomize) continue;
    lines.push(
      `| ${r.size} | ${fmtS(r.kustomize)} | ${fmtMB(r.kustomize)} | ${r.kustomize.timedOut ? 'n/a' : `${r.kustomize.injected}/${r.kustomize.expected}`} | ${fmtS(r.mesh)} |`,
    );
  }
  return lines;
}

/** One target: meshinject's figure beside kpt's and the round trip's from the same run, and whether it is met. */
interface Target {
  name: string;
  value: string;
  kpt?: string;
  floor?: string;
  met: boolean | undefined;
  /** Whether the stretch goal is met, when the target has one. */
  stretch?: boolean | undefined;
}

/** Targets 1, 2 and 4 of issue #24 on the largest size measured of each package class (CPU and peak RSS against kpt). */
function kptTargets(rows: readonly Row[]): Target[] {
  const out: Target[] = [];
  const largest = (cls: ClassName, mesh: Mesh) => rows.filter((r) => r.cls === cls && r.meshName === mesh).at(-1);
  const cpuTarget = (r: Row | undefined, what: string, limit: number, stretch?: number) => {
    if (!r) return;
    const v = ratio(r, 'kpt', (m) => m.cpuSeconds);
    out.push({
      name: `${what} ${r.size}: CPU ≤ ${limit.toFixed(1)} × kpt fn source${stretch ? ` (stretch ${stretch} ×)` : ''}`,
      value: `${fmtCpu(r.mesh)} s (${fx(v)} ×; ${fx(ratio(r, 'floor', (m) => m.cpuSeconds))} × round trip)`,
      kpt: `${fmtCpu(r.kpt)} s`,
      floor: `${fmtCpu(r.floor)} s`,
      met: v === undefined ? undefined : v <= limit,
      ...(stretch ? { stretch: v === undefined ? undefined : v <= stretch } : {}),
    });
  };
  const rssTarget = (r: Row | undefined, what: string) => {
    if (!r) return;
    const v = ratio(r, 'kpt', (m) => m.maxRssMB);
    out.push({
      name: `${what} ${r.size}: peak RSS ≤ kpt fn source`,
      value: `${fmtMB(r.mesh)} MB (${fx(v)} ×)`,
      kpt: `${fmtMB(r.kpt)} MB`,
      floor: `${fmtMB(r.floor)} MB`,
      met: v === undefined ? undefined : v <= 1,
    });
  };
  const aw = largest('all-workloads', 'istio');
  cpuTarget(aw, 'all-workloads', 1.0, 0.5);
  rssTarget(aw, 'all-workloads');
  cpuTarget(largest('every-shape-different', 'istio'), 'every-shape-different', 1.5);
  for (const mesh of MESHES) {
    const r = largest('mixed', mesh);
    cpuTarget(r, `mixed (${mesh})`, 1.0, 0.5);
    rssTarget(r, `mixed (${mesh})`);
  }
  return out;
}

/** Target 5 of issue #24: linear growth of every series, between its two largest sizes. */
function growthTargets(rows: readonly Row[]): Target[] {
  const out: Target[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    const key = `${r.label}/${r.meshName ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const s = series(r, rows).filter(ok);
    if (s.length < 2) continue;
    // Workload classes: the two largest sizes (×10); shapes: the smallest and the largest (×4).
    const [a, b] = [r.unit === 'workloads' ? s[s.length - 2]! : s[0]!, s[s.length - 1]!];
    const g = b.mesh!.cpuSeconds / a.mesh!.cpuSeconds / (b.size / a.size);
    const kg =
      kptOk(a) && kptOk(b) ? (b.kpt!.cpuSeconds / a.kpt!.cpuSeconds / (b.size / a.size)).toFixed(2) : undefined;
    out.push({
      name: `${r.label}: CPU(${b.size}) ÷ CPU(${a.size}) ÷ ${(b.size / a.size).toFixed(0)} ≤ ${GROWTH_BOUND}`,
      value: g.toFixed(2),
      ...(kg ? { kpt: kg } : {}),
      floor: (b.floor.cpuSeconds / a.floor.cpuSeconds / (b.size / a.size)).toFixed(2),
      met: g <= GROWTH_BOUND,
    });
  }
  return out;
}

/** Target 3 of issue #24: start-up over bare node, wall and CPU medians. */
function startupTargets(st: Startup | undefined): Target[] {
  if (!st?.mesh) return [];
  const out: Target[] = [];
  for (const k of ['wall', 'cpu'] as const) {
    const over = (st.mesh[k] - st.node[k]) * 1000;
    out.push({
      name: `start-up, 10-workload list, ${k === 'wall' ? 'wall' : 'CPU'} (median of ${st.runs}): ≤ node -e 0 + ${STARTUP_BUDGET_MS} ms (stretch + ${STARTUP_STRETCH_MS} ms)`,
      value: `${(st.mesh[k] * 1000).toFixed(0)} ms (node + ${over.toFixed(0)} ms)`,
      ...(st.kpt ? { kpt: `${(st.kpt[k] * 1000).toFixed(0)} ms` } : {}),
      floor: `${(st.floor[k] * 1000).toFixed(0)} ms`,
      met: st.mesh.exit === 0 && over <= STARTUP_BUDGET_MS,
      stretch: st.mesh.exit === 0 && over <= STARTUP_STRETCH_MS,
    });
  }
  return out;
}

/** The bounds of issue #40 (stricter than issue #24's): CPU ratios to the peers of the same run, start-up over node. */
const ISSUE40 = { allWorkloadsKpt: 0.5, allWorkloadsRoundTrip: 0.5, everyShapeKpt: 1.0, startupMs: 30 } as const;

/**
 * The targets of issue #40 on the largest size measured: all-workloads CPU ≤ 0.5 × kpt fn source and ≤ 0.5 × the
 * round trip, every-shape-different CPU ≤ 1.0 × kpt fn source, start-up (wall and CPU) ≤ node + 30 ms.
 */
function issue40Targets(rows: readonly Row[], st: Startup | undefined): Target[] {
  const out: Target[] = [];
  const largest = (cls: ClassName) => rows.filter((r) => r.cls === cls && r.meshName === 'istio').at(-1);
  const cpuRatio = (r: Row | undefined, what: string, peer: 'kpt' | 'floor', limit: number) => {
    if (!r) return;
    const v = ratio(r, peer, (m) => m.cpuSeconds);
    out.push({
      name: `${what} ${r.size}: CPU ≤ ${limit.toFixed(1)} × ${peer === 'kpt' ? 'kpt fn source' : 'the round trip'} (issue #40)`,
      value: `${fmtCpu(r.mesh)} s (${fx(v)} ×)`,
      ...(peer === 'kpt' ? { kpt: `${fmtCpu(r.kpt)} s` } : { floor: `${fmtCpu(r.floor)} s` }),
      met: v === undefined ? undefined : v <= limit,
    });
  };
  const aw = largest('all-workloads');
  cpuRatio(aw, 'all-workloads', 'kpt', ISSUE40.allWorkloadsKpt);
  cpuRatio(aw, 'all-workloads', 'floor', ISSUE40.allWorkloadsRoundTrip);
  cpuRatio(largest('every-shape-different'), 'every-shape-different', 'kpt', ISSUE40.everyShapeKpt);
  if (st?.mesh) {
    const mesh = st.mesh;
    for (const k of ['wall', 'cpu'] as const) {
      const over = (mesh[k] - st.node[k]) * 1000;
      out.push({
        name: `start-up, 10-workload list, ${k === 'wall' ? 'wall' : 'CPU'}: ≤ node -e 0 + ${ISSUE40.startupMs} ms (issue #40)`,
        value: `node + ${over.toFixed(0)} ms`,
        met: mesh.exit === 0 && over <= ISSUE40.startupMs,
      });
    }
  }
  return out;
}

/** Issue #40 §3: peak RSS and CPU grow linearly from the smallest to the largest size of the memory class. */
function memoryTargets(rows: readonly MemoryRow[]): Target[] {
  const [a, b] = [rows[0], rows.at(-1)];
  if (!a || !b || a === b) return [];
  const fine = a.m.exitCode === 0 && b.m.exitCode === 0 && a.injected === a.size && b.injected === b.size;
  const times = (b.size / a.size).toFixed(0);
  return [
    {
      name: `memory (all-workloads, default heap): peak RSS(${b.size}) ÷ RSS(${a.size}) ÷ ${times} ≤ ${GROWTH_BOUND}`,
      value: `${rssGrowth(a, b).toFixed(2)} (${b.m.maxRssMB.toFixed(0)} MB, ${b.m.seconds.toFixed(0)} s wall, ${b.m.cpuSeconds.toFixed(0)} s CPU)`,
      met: fine && rssGrowth(a, b) <= GROWTH_BOUND,
    },
    {
      name: `memory (all-workloads): CPU(${b.size}) ÷ CPU(${a.size}) ÷ ${times} ≤ ${GROWTH_BOUND}`,
      value: cpuGrowth(a, b).toFixed(2),
      met: fine && cpuGrowth(a, b) <= GROWTH_BOUND,
    },
  ];
}

/** Every target of the run, in report order. */
function targets(
  rows: readonly Row[],
  st: Startup | undefined,
  diffRows: readonly DiffRow[],
  identity: readonly IdentityRow[],
  memory: readonly MemoryRow[] = [],
): Target[] {
  const out: Target[] = [
    ...kptTargets(rows),
    ...growthTargets(rows),
    ...memoryTargets(memory),
    ...issue40Targets(rows, st),
    ...startupTargets(st),
    ...diffTargets(diffRows, GROWTH_BOUND),
  ];
  if (identity.length) {
    const bad = identity.filter((r) => !r.identical);
    out.push({
      name: `outputs byte-identical with the fast paths on, off and verified (${identity.length} inputs)`,
      value: bad.length ? `${bad.length} differ: ${bad.map((r) => r.label).join('; ')}` : 'identical',
      met: bad.length === 0,
    });
  }
  const injected = rows.filter((r) => r.mesh);
  if (injected.length) {
    const all = injected.every((r) => r.mesh!.exitCode === 0 && r.mesh!.injected === r.mesh!.expected);
    const kptAll = rows.every((r) => !r.kpt || (r.kpt.exitCode === 0 && r.kpt.items === r.kpt.expected));
    out.push({
      name: 'sanity: exit 0 and every workload injected in every row; kpt wrote every resource',
      value: all ? 'yes' : 'no',
      kpt: kptAll ? 'yes' : 'no',
      met: all && kptAll,
    });
  }
  return out;
}

function metText(t: Target): string {
  if (t.met === undefined) return 'not measured';
  const base = t.met ? 'met' : '**NOT met**';
  return t.stretch === undefined ? base : `${base}; stretch ${t.stretch ? 'met' : 'not met'}`;
}

function targetTable(ts: readonly Target[]): string[] {
  return [
    '| target | meshinject | kpt fn source (same run) | yaml round trip (same run) | status |',
    '|---|---|---|---|---|',
    ...ts.map((t) => `| ${t.name} | ${t.value} | ${t.kpt ?? ''} | ${t.floor ?? ''} | ${metText(t)} |`),
  ];
}

/** What a run produced, for the report. */
interface Results {
  rows: Row[];
  st?: Startup;
  diffRows: DiffRow[];
  identity: IdentityRow[];
  memory: MemoryRow[];
  /** Wall minutes each class took. */
  minutes: Partial<Record<ClassName, number>>;
}

async function runClasses(args: Args, cliOk: boolean, withKpt: boolean): Promise<Results> {
  const res: Results = { rows: [], diffRows: [], identity: [], memory: [], minutes: {} };
  for (const cls of args.classes) {
    process.stderr.write(`bench: ${cls}\n`);
    const t0 = Date.now();
    if (cls === 'startup') res.st = await benchStartup(OUT, cliOk ? CLI : undefined, FLOOR, withKpt);
    else if (cls === 'diff')
      res.diffRows = cliOk ? await benchDiff(OUT, CLI, withKpt, args.sizes ?? scaled(args, [300, 3000])) : [];
    else if (cls === 'identity') res.identity = cliOk ? await benchIdentity(args) : [];
    else if (cls === 'memory')
      res.memory = cliOk
        ? await benchMemory(OUT, CLI, meshConfigFile('istio'), args.sizes ?? scaled(args, MEMORY_SIZES))
        : [];
    else if (PACKAGE_CLASSES.includes(cls))
      res.rows.push(...(await benchPackageClass(cls as PackageClass, args, cliOk, withKpt)));
    else if (cls === 'all-workloads-rl') res.rows.push(...(await benchResourceList(args, cliOk)));
    else res.rows.push(...(await benchShapes(cls, args, cliOk)));
    res.minutes[cls] = (Date.now() - t0) / 60000;
  }
  return res;
}

const INTRO = [
  'Input classes (bench/generate.ts and bench/package.ts, deterministic; see bench/run.ts). `mixed` is N workloads (≈60%',
  'Deployments, 25% StatefulSets, 15% CronJobs) plus one Service per two workloads and one ConfigMap per four, injected',
  'with Istio and (1 000 and 10 000) with the Linkerd (manual), OSM and Kuma drivers; `all-workloads` is N workloads of',
  'five kinds plus N/5 Services; `every-shape-different` gives every pod template its own annotations, ports and',
  'container count. These three are kpt packages (a Kptfile and one multi-document `resources.yaml`, comments on every',
  '7th resource), every workload injected (`policy: enabled`). The peer is `kpt fn source DIR` (kpt reads and writes the',
  'package, as every kpt pipeline does); meshinject runs as `meshinject -q -c CONFIG DIR`; the yaml round trip',
  '(bench/yaml-roundtrip.mjs: parseAllDocuments + toString) reads resources.yaml. The three run back to back on the',
  'same files. `all-workloads-rl` is all-workloads as a kpt-style ResourceList on stdin (kpt annotations). The shape',
  'classes are the inputs of issue #8 §3 at sizes n, 2n, 4n, beside the round trip only. `memory` is all-workloads at',
  "10 000 and 100 000 workloads, meshinject alone with Node's default heap, one run each (issue #40).",
  'CPU is user + system seconds and peak RSS comes from GNU `/usr/bin/time`; wall time is measured around the child.',
  'Start-up is the median of alternating rounds timed in bash (`$EPOCHREALTIME` around the command, CPU from `times`, 1 ms steps).',
  `mixed, all-workloads, every-shape-different up to 10 000: medians (wall, CPU and RSS each) of 3 rounds, each round running kpt, every mesh and the round trip back to back; other classes: sizes ≤ 1 000 median of 3 runs, larger one run. "growth" is CPU ÷ CPU at the previous size ÷ the size ratio (linear`,
  `= 1.0; the bound is ${GROWTH_BOUND}). The build machine is shared with other jobs (see the load average): compare ratios within a run.`,
];

/** The Markdown tables of a run: throughput, kustomize, start-up, diff and check, identity, targets. */
interface Tables {
  tbl: string[];
  kz: string[];
  st: string[];
  df: string[];
  id: string[];
  tg: string[];
  mem: string[];
}

/** The report as Markdown; `notes` is the hand-kept section, kept from the previous report. */
function report(res: Results, tables: Tables, loadAtStart: string, notes: string): string {
  const { kz, df, st, id, tg, tbl, mem } = tables;
  return [
    '# meshinject benchmark results',
    '',
    `Generated by \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${new Date().toISOString().slice(0, 10)}.`,
    ...INTRO,
    ...(process.argv.includes('--quick')
      ? [
          '**`--quick`: every size above is ÷ 10, so start-up weighs on every ratio; the targets are read at full size.**',
        ]
      : []),
    '',
    '## Machine',
    '',
    ...machine(loadAtStart, res.minutes),
    '',
    '## Targets (issues #24 and #40)',
    '',
    ...tg,
    '',
    ...(tbl.length > 2 ? ['## Throughput and memory', '', ...tbl, ''] : []),
    ...(kz.length > 2 ? ['## kustomize (mixed input, Deployments only)', '', ...kz, ''] : []),
    ...(mem.length > 2
      ? ['## Memory (all-workloads, meshinject alone, default heap, one run per size)', '', ...mem, '']
      : []),
    ...(df.length ? ['## diff and check (mixed package, beside injecting and kpt fn source)', '', ...df, ''] : []),
    ...(st.length ? ['## Start-up', '', ...st, ''] : []),
    ...(id.length ? ['## Byte-identity with the fast paths on and off', '', ...id, ''] : []),
    notes.trimEnd(),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loadAtStart = loadAverage();
  for (const k of Object.keys(process.env)) {
    if (!k.startsWith('MESHINJECT_')) continue;
    process.stderr.write(
      `bench: ignoring ${k}=${process.env[k]} from the environment (the bench sets its own switches)\n`,
    );
    delete process.env[k];
  }
  mkdirSync(OUT, { recursive: true });
  const cliOk = existsSync(`${ROOT}dist/meshinject.cjs`);
  if (!cliOk)
    process.stderr.write('bench: dist/meshinject.cjs missing (run `npm run build`): meshinject columns are n/a\n');
  const withKpt = hasKpt();
  if (!withKpt) process.stderr.write('bench: kpt is not on PATH: the kpt columns are n/a\n');
  const res = await runClasses(args, cliOk, withKpt);
  const tables: Tables = {
    tbl: classTable(res.rows),
    kz: kustomizeTable(res.rows),
    st: res.st ? startupTable(res.st) : [],
    df: res.diffRows.length ? diffTable(res.diffRows) : [],
    id: res.identity.length ? identityTable(res.identity) : [],
    tg: targetTable(targets(res.rows, res.st, res.diffRows, res.identity, res.memory)),
    mem: memoryTable(res.memory),
  };
  process.stdout.write(
    `\n${[tables.tg, tables.tbl, tables.kz, tables.mem, tables.df, tables.st, tables.id]
      .filter((t) => t.length > 2)
      .map((t) => t.join('\n'))
      .join('\n\n')}\n`,
  );
  if (res.identity.some((r) => !r.identical)) {
    process.stderr.write('bench: OUTPUT MISMATCH with the fast paths on and off (see the identity table): exit 1\n');
    process.exitCode = 1;
  }
  if (!args.write || (args.partial && args.scale === 1)) return;
  const target = args.scale === 1 ? `${ROOT}bench/RESULTS.md` : `${OUT}/RESULTS.quick.md`;
  const previous = existsSync(`${ROOT}bench/RESULTS.md`) ? readFileSync(`${ROOT}bench/RESULTS.md`, 'utf8') : undefined;
  writeFileSync(target, report(res, tables, loadAtStart, notesSection(previous)));
  process.stderr.write(`bench: wrote ${target.slice(ROOT.length)} (the notes section is kept by hand)\n`);
}

await main();
