/**
 * `npm run bench`: meshinject's speed and memory against the `yaml` round trip (and kustomize) on identical
 * inputs, class by class.
 *
 *   node --import tsx bench/run.ts [--class NAME[,NAME…]] [--sizes 1000,10000] [--with-50k]
 *                                  [--kustomize-max N] [--kustomize-timeout S] [--no-write]
 *
 * Input classes (`--class`, default: all of them, about 15 minutes on 2 cores):
 *   - `mixed`: N workloads (bench/generate.ts `generateResources`; ≈1.75 N resources with Services and
 *     ConfigMaps) at N = 100, 1 000, 10 000 (`--sizes`; `--with-50k` adds 50 000), plus kustomize (a
 *     strategic-merge patch adding istio-proxy + volumes to every Deployment) for N ≤ --kustomize-max
 *     (default 1 000: its time grows much faster than linearly);
 *   - `all-workloads`: N resources, every one a workload of five kinds, all injected (1 000 and 10 000);
 *   - `every-shape-different`: the same with every pod template of its own shape (1 000 and 10 000);
 *   - `compact-json`, `wide-maps`, `huge-annotation`, `anchored-300k`: the shapes that once took super-linear
 *     time (issue #8 §3; `generateShape`), each at sizes n, 2n, 4n (up to 20 000 items, 40 000 keys, 4 MiB,
 *     300 000 documents);
 *   - `diff`: `meshinject diff` and `diff -i` beside injecting the same `mixed` stream, 3 000 workloads (bench/diff.ts);
 *   - `startup`: a 10-workload ResourceList through the CLI, median of 15 runs, beside bare `node -e 0`.
 * Every meshinject run is measured back to back with `bench/yaml-roundtrip.mjs` on the same file: wall time,
 * CPU time and peak RSS (GNU `/usr/bin/time -f %M`), and their ratios. N ≤ 1 000: median of 3 runs.
 * A full run (no `--class`, no `--sizes`) writes bench/RESULTS.md unless --no-write; a partial run prints
 * its tables only. Figures, not tests: nothing fails.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateResources, generateShape, generateWorkloads, toResourceList, toStream, type Shape } from './generate.ts';
import { measure, measureMedian, median, type Measurement } from './measure.ts';
import { KUSTOMIZE_PATCH, kustomization } from './kustomize.ts';
import { benchDiff, diffTable, diffTargets, type DiffRow } from './diff.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}bench/out`;
const CLI = `${ROOT}bin/meshinject.js`;
const FLOOR = `${ROOT}bench/yaml-roundtrip.mjs`;
/** From this N on, both node processes run with `--max-old-space-size=LARGE_HEAP_MB`. */
const LARGE_HEAP_FROM = 50000;
const LARGE_HEAP_MB = 12288;

/** Every input class, in the order a full run measures them. */
export const CLASSES = ['mixed', 'all-workloads', 'every-shape-different', 'compact-json', 'wide-maps', 'huge-annotation', 'anchored-300k', 'diff', 'startup'] as const;
type ClassName = (typeof CLASSES)[number];

interface Args {
  classes: ClassName[];
  sizes?: number[];
  with50k: boolean;
  kustomizeMax: number;
  kustomizeTimeout: number;
  write: boolean;
  partial: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { classes: [...CLASSES], with50k: false, kustomizeMax: 1000, kustomizeTimeout: 600, write: true, partial: false };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--with-50k') a.with50k = true;
    else if (x === '--sizes') {
      a.sizes = argv[++i]!.split(',').map(Number);
      a.partial = true;
    } else if (x === '--class') {
      const names = argv[++i]!.split(',');
      for (const n of names) if (!(CLASSES as readonly string[]).includes(n)) throw new Error(`bench: unknown class ${n} (have ${CLASSES.join(', ')})`);
      a.classes = names as ClassName[];
      a.partial = true;
    } else if (x === '--kustomize-max') a.kustomizeMax = Number(argv[++i]);
    else if (x === '--kustomize-timeout') a.kustomizeTimeout = Number(argv[++i]);
    else if (x === '--no-write') a.write = false;
    else throw new Error(`bench: unknown argument ${x}`);
  }
  return a;
}

/** One measured input: meshinject and the round trip on the same file, back to back. */
interface Row {
  cls: ClassName;
  label: string;
  /** Size in `unit` (workloads, items, keys, KiB, documents). */
  size: number;
  unit: string;
  resources?: number;
  inputMB: number;
  mesh?: Measurement & { injected: number; expected: number };
  floor: Measurement;
  kustomize?: Measurement & { injected: number; expected: number };
  /** Plan cache hits / lookups, when meshinject reported them (MESHINJECT_PLAN_STATS). */
  plans?: { hits: number; lookups: number };
}

/** Counts `istio-proxy` container entries: `name: istio-proxy` as a whole YAML line, or `"name": "istio-proxy"` in JSON. */
function countProxies(file: string): number {
  const text = readFileSync(file, 'utf8');
  return (text.match(/\bname: istio-proxy\s*$/gm) ?? []).length + (text.match(/"name": ?"istio-proxy"/g) ?? []).length;
}

function fmtS(m: Measurement | undefined): string {
  if (!m) return 'n/a';
  if (m.timedOut) return `> ${m.seconds.toFixed(0)} (killed)`;
  return m.seconds < 10 ? m.seconds.toFixed(3) : m.seconds.toFixed(1);
}

function fmtMB(m: Measurement | undefined): string {
  return m && !m.timedOut && Number.isFinite(m.maxRssMB) ? m.maxRssMB.toFixed(0) : 'n/a';
}

function planStats(stderr: string): Row['plans'] {
  const m = /meshinject plans: (\d+) hits of (\d+) lookups/.exec(stderr);
  return m ? { hits: Number(m[1]), lookups: Number(m[2]) } : undefined;
}

/**
 * Measures one input file: the round trip, then meshinject (`cliArgs` after the CLI path), back to back.
 * `expected` is the number of workloads meshinject must inject (counted in its output).
 */
async function measurePair(row: Omit<Row, 'floor' | 'inputMB'>, file: string, cliArgs: string[], expected: number, heap: string[], reps: number, cliOk: boolean): Promise<Row> {
  const inputMB = readFileSync(file).length / 1e6;
  const floor = await measureMedian(reps, 'node', [...heap, FLOOR, file], { stdoutFile: `${OUT}/floor-out.txt`, timeoutSeconds: 900 });
  const out: Row = { ...row, inputMB, floor };
  process.stderr.write(`  ${row.label} ${row.size} ${row.unit}: round trip ${fmtS(floor)} s\n`);
  if (cliOk) {
    const outFile = `${OUT}/mesh-out.txt`;
    const m = await measureMedian(reps, 'node', [...heap, CLI, ...cliArgs], { stdinFile: file, stdoutFile: outFile, timeoutSeconds: 900, env: { MESHINJECT_PLAN_STATS: '1' } });
    out.mesh = { ...m, injected: countProxies(outFile), expected };
    const plans = planStats(m.stderr);
    if (plans) out.plans = plans;
    process.stderr.write(`  ${row.label} ${row.size} ${row.unit}: meshinject ${fmtS(m)} s exit ${m.exitCode}\n`);
    if (m.exitCode !== 0) process.stderr.write(`    meshinject stderr: ${m.stderr.slice(0, 500)}\n`);
  }
  return out;
}

async function kustomizeRow(row: Row, resources: ReturnType<typeof generateResources>, args: Args): Promise<void> {
  const dir = `${OUT}/kustomize-${row.size}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/resources.yaml`, toStream(resources));
  writeFileSync(`${dir}/patch.yaml`, KUSTOMIZE_PATCH);
  writeFileSync(`${dir}/kustomization.yaml`, kustomization('resources.yaml', 'patch.yaml'));
  const outFile = `${OUT}/kustomize-${row.size}.out.yaml`;
  const m = await measureMedian(row.size < 1000 ? 3 : 1, 'kubectl', ['kustomize', dir], { stdoutFile: outFile, timeoutSeconds: args.kustomizeTimeout });
  row.kustomize = { ...m, injected: m.timedOut ? 0 : countProxies(outFile), expected: resources.filter((r) => r.kind === 'Deployment').length };
  process.stderr.write(`  mixed ${row.size}: kustomize ${fmtS(m)} s\n`);
  rmSync(dir, { recursive: true, force: true });
}

/** The workload classes (`mixed`, `all-workloads`, `every-shape-different`) at their sizes. */
async function benchWorkloads(cls: ClassName, args: Args, cliOk: boolean): Promise<Row[]> {
  const defaults = cls === 'mixed' ? [100, 1000, 10000] : [1000, 10000];
  const sizes = [...(args.sizes ?? defaults)];
  if (args.with50k && !sizes.includes(50000)) sizes.push(50000);
  const rows: Row[] = [];
  for (const n of sizes) {
    const resources = cls === 'mixed' ? generateResources(n) : generateWorkloads(n, cls === 'every-shape-different');
    const file = `${OUT}/${cls}-${n}.yaml`;
    writeFileSync(file, toResourceList(resources));
    const heap = n >= LARGE_HEAP_FROM ? [`--max-old-space-size=${LARGE_HEAP_MB}`] : [];
    const row = await measurePair({ cls, label: cls, size: n, unit: 'workloads', resources: resources.length }, file, [], resources.filter((r) => r.workload).length, heap, n <= 1000 ? 3 : 1, cliOk);
    if (cls === 'mixed' && n <= args.kustomizeMax) await kustomizeRow(row, resources, args);
    rows.push(row);
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
  'anchored-300k': [{ shape: 'anchored-docs', n: 75000, unit: 'documents' }],
};

async function benchShapes(cls: ClassName, cliOk: boolean): Promise<Row[]> {
  const config = `${OUT}/shapes-config.yaml`;
  writeFileSync(config, 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: mesh\nspec:\n  mesh: istio\n');
  const rows: Row[] = [];
  for (const { shape, n: base, unit } of SHAPE_CLASSES[cls]!) {
    for (const k of [1, 2, 4]) {
      const n = base * k;
      const file = `${OUT}/shape-${shape}-${n}.txt`;
      writeFileSync(file, generateShape(shape, n));
      const cliArgs = shape === 'wide-values' ? [] : ['--config', config];
      const expected = shape === 'compact-json' ? n : 1;
      rows.push(await measurePair({ cls, label: shape, size: n, unit }, file, cliArgs, expected, ['--max-old-space-size=8192'], 1, cliOk));
      rmSync(file, { force: true });
    }
  }
  return rows;
}

function machine(): string[] {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  const kubectl = (() => {
    try {
      return execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).split('\n').filter(Boolean).join(', ');
    } catch {
      return 'kubectl: not available';
    }
  })();
  const yamlVersion = (JSON.parse(readFileSync(`${ROOT}node_modules/yaml/package.json`, 'utf8')) as { version: string }).version;
  return [
    `- CPU: ${cpuModel}`,
    `- nproc: ${nproc}`,
    `- memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- node: ${process.version}; yaml ${yamlVersion}`,
    `- ${kubectl}`,
    `- load average (1, 5, 15 min) when the report was written: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', ')}`,
  ];
}

function ok(r: Row): boolean {
  return r.mesh !== undefined && r.mesh.exitCode === 0 && r.floor.exitCode === 0;
}

function ratio(r: Row, f: (m: Measurement) => number): number | undefined {
  return ok(r) ? f(r.mesh!) / f(r.floor) : undefined;
}

/** Growth of meshinject's time from the class's smallest row (wall for workload classes, CPU for shapes). */
function growth(r: Row, rows: readonly Row[]): string {
  const first = rows.find((x) => x.label === r.label);
  if (!first || !ok(r) || !ok(first) || first === r) return '';
  const shape = r.unit !== 'workloads';
  const v = shape ? r.mesh!.cpuSeconds / first.mesh!.cpuSeconds : r.mesh!.seconds / first.mesh!.seconds;
  return `${v.toFixed(1)} (×${(r.size / first.size).toFixed(0)} size${shape ? ', CPU' : ''})`;
}

function classTable(rows: readonly Row[]): string[] {
  const head = '| class | size | input MB | meshinject s | CPU s | RSS MB | injected | round trip s | round trip RSS MB | time ratio | RSS ratio | growth | plan hits |';
  const lines = [head, '|' + head.split('|').slice(1, -1).map(() => '---').join('|') + '|'];
  for (const r of rows) {
    const tr = ratio(r, (m) => m.seconds);
    const mr = ratio(r, (m) => m.maxRssMB);
    const died = r.mesh && r.mesh.exitCode !== 0 ? ` (exit ${r.mesh.exitCode}${/heap limit/.test(r.mesh.stderr) ? ': heap out of memory' : ''})` : '';
    const inj = r.mesh ? `${r.mesh.injected}/${r.mesh.expected}${died}` : 'n/a';
    const plans = r.plans ? `${((100 * r.plans.hits) / Math.max(1, r.plans.lookups)).toFixed(1)}% (${r.plans.hits}/${r.plans.lookups})` : 'n/a';
    const floorDied = r.floor.exitCode !== 0 ? ` (exit ${r.floor.exitCode}${/heap limit/.test(r.floor.stderr) ? ': heap out of memory' : ''})` : '';
    lines.push(
      `| ${r.label} | ${r.size} ${r.unit} | ${r.inputMB.toFixed(1)} | ${fmtS(r.mesh)} | ${r.mesh ? r.mesh.cpuSeconds.toFixed(2) : 'n/a'} | ${fmtMB(r.mesh)} | ${inj} | ${fmtS(r.floor)}${floorDied} | ${fmtMB(r.floor)} | ${tr === undefined ? 'n/a' : tr.toFixed(2)} | ${mr === undefined ? 'n/a' : mr.toFixed(2)} | ${growth(r, rows)} | ${plans} |`,
    );
  }
  return lines;
}

function kustomizeTable(rows: readonly Row[]): string[] {
  const lines = ['| N workloads | kustomize s | kustomize RSS MB | Deployments patched | meshinject s (same input, all workloads) |', '|---|---|---|---|---|'];
  for (const r of rows) {
    if (!r.kustomize) continue;
    lines.push(`| ${r.size} | ${fmtS(r.kustomize)} | ${fmtMB(r.kustomize)} | ${r.kustomize.timedOut ? 'n/a' : `${r.kustomize.injected}/${r.kustomize.expected}`} | ${fmtS(r.mesh)} |`);
  }
  return lines;
}

interface Startup {
  mesh?: number;
  meshExit?: number | null;
  node: number;
  floor: number;
}

async function benchStartup(cliOk: boolean): Promise<Startup> {
  const rl = `${OUT}/rl-startup-10.yaml`;
  writeFileSync(rl, toResourceList(generateResources(10)));
  const time15 = async (cmd: string, args: string[], stdinFile?: string) => {
    const ms: Measurement[] = [];
    await measure(cmd, args, stdinFile ? { stdinFile } : {}); // warm the page cache
    for (let i = 0; i < 15; i++) ms.push(await measure(cmd, args, stdinFile ? { stdinFile } : {}));
    return { med: median(ms.map((m) => m.seconds)), exit: ms[0]!.exitCode };
  };
  const node = (await time15('node', ['-e', '0'])).med;
  const floor = (await time15('node', [FLOOR, rl])).med;
  if (!cliOk) return { node, floor };
  const m = await time15('node', [CLI], rl);
  return { mesh: m.med, meshExit: m.exit, node, floor };
}

function startupTable(st: Startup): string[] {
  return [
    `| run (10 workloads, 18 resources, median of 15) | wall |`,
    `|---|---|`,
    `| meshinject CLI end to end | ${st.mesh === undefined ? 'n/a' : `${(st.mesh * 1000).toFixed(0)} ms${st.meshExit !== 0 ? ` (exit ${st.meshExit})` : ''}`} |`,
    `| \`node -e 0\` (bare node start-up) | ${(st.node * 1000).toFixed(0)} ms |`,
    `| yaml round trip (bench/yaml-roundtrip.mjs) | ${(st.floor * 1000).toFixed(0)} ms |`,
  ];
}

interface Target {
  name: string;
  value: string;
  met: boolean | undefined;
}

/** The targets of issue #13 at 10 000 workloads, and linear growth of the shapes (issue #8 §3). */
function targets(rows: readonly Row[], st: Startup | undefined): Target[] {
  const at = (cls: ClassName, n: number) => rows.find((r) => r.cls === cls && r.size === n);
  const out: Target[] = [];
  const check = (name: string, v: number | undefined, limit: number, digits = 2) =>
    out.push({ name, value: v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(digits), met: v === undefined || !Number.isFinite(v) ? undefined : v <= limit });
  const aw = at('all-workloads', 10000);
  check('all-workloads 10 000: time ≤ 0.5 × round trip', aw && ratio(aw, (m) => m.seconds), 0.5);
  check('all-workloads 10 000: peak RSS ≤ 0.5 × round trip', aw && ratio(aw, (m) => m.maxRssMB), 0.5);
  const mx = at('mixed', 10000);
  check('mixed 10 000: time ≤ 0.35 × round trip', mx && ratio(mx, (m) => m.seconds), 0.35);
  const es = at('every-shape-different', 10000);
  check('every-shape-different 10 000: time ≤ 1.0 × round trip', es && ratio(es, (m) => m.seconds), 1.0);
  for (const cls of ['mixed', 'all-workloads', 'every-shape-different'] as const) {
    const a = at(cls, 1000);
    const b = at(cls, 10000);
    check(`${cls}: time(10 000) / time(1 000) ≤ 12`, a && b && ok(a) && ok(b) ? b.mesh!.seconds / a.mesh!.seconds : undefined, 12, 1);
  }
  for (const label of ['compact-json', 'wide-configmap', 'wide-values', 'huge-annotation', 'anchored-docs']) {
    const rs = rows.filter((r) => r.label === label && ok(r));
    if (rs.length < 2) continue;
    const first = rs[0]!;
    const last = rs[rs.length - 1]!;
    // Linear growth: CPU time grows at most 1.5× faster than the size (start-up makes small sizes dearer).
    const g = last.mesh!.cpuSeconds / first.mesh!.cpuSeconds / (last.size / first.size);
    check(`${label}: CPU growth ÷ size growth (×${last.size / first.size}) ≤ 1.5`, g, 1.5);
  }
  if (st?.mesh !== undefined) check('10-workload list end to end: median ≤ 120 ms', st.mesh * 1000, 120, 0);
  const injected = rows.filter((r) => r.mesh);
  if (injected.length) {
    const all = injected.every((r) => r.mesh!.exitCode === 0 && r.mesh!.injected === r.mesh!.expected);
    out.push({ name: 'sanity: exit 0 and every workload injected in every row', value: all ? 'yes' : 'no', met: all });
  }
  return out;
}

function metText(m: boolean | undefined): string {
  return m === undefined ? 'not measured' : m ? 'met' : 'NOT met';
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(OUT, { recursive: true });
  const cliOk = existsSync(`${ROOT}dist/meshinject.cjs`);
  if (!cliOk) process.stderr.write('bench: dist/meshinject.cjs missing (run `npm run build`): meshinject columns are n/a\n');
  const rows: Row[] = [];
  let st: Startup | undefined;
  let diffRows: DiffRow[] = [];
  for (const cls of args.classes) {
    process.stderr.write(`bench: ${cls}\n`);
    if (cls === 'startup') st = await benchStartup(cliOk);
    else if (cls === 'diff') diffRows = cliOk ? await benchDiff(OUT, CLI, args.sizes) : [];
    else if (cls === 'mixed' || cls === 'all-workloads' || cls === 'every-shape-different') rows.push(...(await benchWorkloads(cls, args, cliOk)));
    else rows.push(...(await benchShapes(cls, cliOk)));
  }
  const tbl = classTable(rows);
  const kz = kustomizeTable(rows);
  const stLines = st ? startupTable(st) : [];
  const dfLines = diffRows.length ? diffTable(diffRows) : [];
  const targetLines = ['| target | measured | status |', '|---|---|---|', ...[...targets(rows, st), ...diffTargets(diffRows)].map((t) => `| ${t.name} | ${t.value} | ${metText(t.met)} |`)];
  process.stdout.write(`\n${tbl.join('\n')}\n\n${kz.length > 2 ? `${kz.join('\n')}\n\n` : ''}${dfLines.length ? `${dfLines.join('\n')}\n\n` : ''}${stLines.length ? `${stLines.join('\n')}\n\n` : ''}${targetLines.join('\n')}\n`);
  if (!args.write || args.partial) return;
  const md = [
    '# meshinject benchmark results',
    '',
    `Generated by \`npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}\` on ${new Date().toISOString().slice(0, 10)}.`,
    'Input classes (bench/generate.ts, deterministic; see bench/run.ts): `mixed` is N workloads (≈60% Deployments,',
    '25% StatefulSets, 15% CronJobs) plus one Service per two workloads and one ConfigMap per four; `all-workloads` is N',
    'workloads of five kinds and no other resource; `every-shape-different` gives every pod template its own',
    'annotations, ports and container count. All three are kpt-style ResourceLists (comments on every 7th resource, kpt',
    'path/index/id annotations) whose functionConfig is Istio with `policy: enabled`: every workload is injected. The',
    'shape classes are the inputs of issue #8 §3 at sizes n, 2n, 4n.',
    'Wall time is measured around the child process; CPU time and peak RSS come from GNU `/usr/bin/time`. Sizes ≤ 1 000:',
    'median of 3 runs; larger: one run. "time ratio" and "RSS ratio" are meshinject ÷ `yaml` round trip',
    '(bench/yaml-roundtrip.mjs: parseAllDocuments + toString), measured back to back on the same file in the same run.',
    '"growth" is time ÷ the class\'s smallest size (wall for workload classes, CPU for shapes).',
    'The build machine is shared with other jobs (see the load average): absolute times move between runs.',
    '',
    '## Machine',
    '',
    ...machine(),
    '',
    '## Throughput and memory',
    '',
    ...tbl,
    '',
    ...(kz.length > 2 ? ['## kustomize (mixed input, Deployments only)', '', ...kz, ''] : []),
    ...(dfLines.length ? ['## diff and diff -i (mixed stream, beside injecting it)', '', ...dfLines, ''] : []),
    ...(stLines.length ? ['## Start-up', '', ...stLines, ''] : []),
    '## Targets',
    '',
    ...targetLines,
    '',
    '## Notes (by hand, after this run)',
    '',
  ];
  writeFileSync(`${ROOT}bench/RESULTS.md`, md.join('\n'));
  process.stderr.write('bench: wrote bench/RESULTS.md (add the notes by hand)\n');
}

await main();
