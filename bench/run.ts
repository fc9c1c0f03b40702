/**
 * `npm run bench`: meshinject's speed and memory against two references on identical inputs.
 *
 *   node --import tsx bench/run.ts [--with-50k] [--sizes 100,1000] [--kustomize-max N]
 *                                  [--kustomize-timeout S] [--no-write] [--no-shapes | --shapes-only]
 *
 * For each N workloads (bench/generate.ts; ≈1.75 N resources in a kpt-style ResourceList):
 *   - meshinject: the real CLI (`node bin/meshinject.js`, stdin → stdout file), Istio, everything injected;
 *   - floor: `yaml` parseDocument + toString of the same input in its own node process (yaml-roundtrip.mjs);
 *   - kustomize: `kubectl kustomize` with a strategic-merge patch adding istio-proxy + volumes to every
 *     Deployment (same resources as a YAML stream), for N ≤ --kustomize-max (default 10 000).
 * Then the start-up cost: a 10-workload ResourceList through the CLI, median of 15 runs.
 * Then the input shapes that once took super-linear time (bench/generate.ts `SHAPES`: compact JSON, wide
 * maps, one huge annotation, 300 000 tiny anchored documents), each at three sizes n, 2n, 4n: CPU seconds
 * per unit of size stay flat when time grows linearly.
 * Prints a table and writes bench/RESULTS.md (unless --no-write). Figures, not tests: nothing fails.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SHAPES, generateResources, generateShape, toResourceList, toStream, type Shape } from './generate.ts';
import { measure, measureMedian, median, type Measurement } from './measure.ts';
import { KUSTOMIZE_PATCH, kustomization } from './kustomize.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}bench/out`;
const CLI = `${ROOT}bin/meshinject.js`;
const FLOOR = `${ROOT}bench/yaml-roundtrip.mjs`;
/** From this N on, both node processes run with `--max-old-space-size=LARGE_HEAP_MB`. */
const LARGE_HEAP_FROM = 50000;
const LARGE_HEAP_MB = 12288;

interface Args {
  sizes: number[];
  kustomizeMax: number;
  kustomizeTimeout: number;
  write: boolean;
  shapes: 'yes' | 'no' | 'only';
}

function parseArgs(argv: string[]): Args {
  const a: Args = { sizes: [100, 1000, 10000], kustomizeMax: 10000, kustomizeTimeout: 600, write: true, shapes: 'yes' };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--with-50k') a.sizes = [...new Set([...a.sizes, 50000])];
    else if (x === '--sizes') a.sizes = argv[++i]!.split(',').map(Number);
    else if (x === '--kustomize-max') a.kustomizeMax = Number(argv[++i]);
    else if (x === '--kustomize-timeout') a.kustomizeTimeout = Number(argv[++i]);
    else if (x === '--no-write') a.write = false;
    else if (x === '--no-shapes') a.shapes = 'no';
    else if (x === '--shapes-only') a.shapes = 'only';
    else throw new Error(`bench: unknown argument ${x}`);
  }
  return a;
}

interface Row {
  n: number;
  resources: number;
  inputMB: number;
  mesh?: Measurement & { injected: number; expected: number };
  floor: Measurement;
  kustomize?: Measurement & { injected: number; expected: number };
}

/** Counts `istio-proxy` container entries (`name: istio-proxy` as a whole scalar line). */
function countProxies(file: string): number {
  return (readFileSync(file, 'utf8').match(/\bname: istio-proxy\s*$/gm) ?? []).length;
}

function repeatsFor(n: number): number {
  return n <= 1000 ? 3 : 1;
}

function fmtS(m: Measurement | undefined): string {
  if (!m) return 'n/a';
  if (m.timedOut) return `> ${m.seconds.toFixed(0)} (killed)`;
  return m.seconds < 10 ? m.seconds.toFixed(3) : m.seconds.toFixed(1);
}

function fmtMB(m: Measurement | undefined): string {
  return m && !m.timedOut && Number.isFinite(m.maxRssMB) ? m.maxRssMB.toFixed(0) : 'n/a';
}

async function benchSize(n: number, args: Args, cliOk: boolean): Promise<Row> {
  const resources = generateResources(n);
  const rl = `${OUT}/rl-${n}.yaml`;
  writeFileSync(rl, toResourceList(resources));
  const inputMB = readFileSync(rl).length / 1e6;
  const reps = repeatsFor(n);
  // V8's default heap (about 4 GB here) is too small for the yaml round trip of the 50 000-workload input:
  // from that size on, both node processes get the same larger heap.
  const heap = n >= LARGE_HEAP_FROM ? [`--max-old-space-size=${LARGE_HEAP_MB}`] : [];
  const row: Row = { n, resources: resources.length, inputMB, floor: await measureMedian(reps, 'node', [...heap, FLOOR, rl], { stdoutFile: `${OUT}/floor-${n}.yaml` }) };
  process.stderr.write(`  N=${n}: floor ${fmtS(row.floor)} s\n`);
  if (cliOk) {
    const outFile = `${OUT}/meshinject-${n}.yaml`;
    const m = await measureMedian(reps, 'node', [...heap, CLI], { stdinFile: rl, stdoutFile: outFile });
    row.mesh = { ...m, injected: countProxies(outFile), expected: resources.filter((r) => r.workload).length };
    process.stderr.write(`  N=${n}: meshinject ${fmtS(m)} s exit ${m.exitCode}\n`);
    if (m.exitCode !== 0) process.stderr.write(`    meshinject stderr: ${m.stderr.slice(0, 500)}\n`);
  }
  if (n <= args.kustomizeMax) {
    const dir = `${OUT}/kustomize-${n}`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/resources.yaml`, toStream(resources));
    writeFileSync(`${dir}/patch.yaml`, KUSTOMIZE_PATCH);
    writeFileSync(`${dir}/kustomization.yaml`, kustomization('resources.yaml', 'patch.yaml'));
    const outFile = `${OUT}/kustomize-${n}.out.yaml`;
    const m = await measureMedian(n < 1000 ? reps : 1, 'kubectl', ['kustomize', dir], { stdoutFile: outFile, timeoutSeconds: args.kustomizeTimeout });
    row.kustomize = { ...m, injected: m.timedOut ? 0 : countProxies(outFile), expected: resources.filter((r) => r.kind === 'Deployment').length };
    process.stderr.write(`  N=${n}: kustomize ${fmtS(m)} s\n`);
  }
  return row;
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

function table(rows: Row[]): string[] {
  const head = '| N workloads | resources | input MB | meshinject s | meshinject RSS MB | injected | yaml round trip s | round trip RSS MB | time ratio | RSS ratio | kustomize s | kustomize RSS MB | kustomize patched |';
  const sep = '|' + head.split('|').slice(1, -1).map(() => '---').join('|') + '|';
  const lines = [head, sep];
  for (const r of rows) {
    const ok = r.mesh !== undefined && r.mesh.exitCode === 0 && r.floor.exitCode === 0;
    const tr = ok ? (r.mesh!.seconds / r.floor.seconds).toFixed(2) : r.mesh ? 'failed' : 'n/a';
    const mr = ok ? (r.mesh!.maxRssMB / r.floor.maxRssMB).toFixed(2) : r.mesh ? 'failed' : 'n/a';
    const died = r.mesh && r.mesh.exitCode !== 0 ? ` (exit ${r.mesh.exitCode}${/heap limit/.test(r.mesh.stderr) ? ': JavaScript heap out of memory' : ''})` : '';
    const inj = r.mesh ? `${r.mesh.injected}/${r.mesh.expected}${died}` : 'n/a';
    const kinj = r.kustomize ? (r.kustomize.timedOut ? 'n/a' : `${r.kustomize.injected}/${r.kustomize.expected}`) : 'not run';
    lines.push(`| ${r.n} | ${r.resources} | ${r.inputMB.toFixed(1)} | ${fmtS(r.mesh)} | ${fmtMB(r.mesh)} | ${inj} | ${fmtS(r.floor)}${r.floor.exitCode !== 0 ? ` (exit ${r.floor.exitCode}${/heap limit/.test(r.floor.stderr) ? ': heap out of memory' : ''})` : ''} | ${fmtMB(r.floor)} | ${tr} | ${mr} | ${r.kustomize ? fmtS(r.kustomize) : 'not run'} | ${fmtMB(r.kustomize)} | ${kinj} |`);
  }
  return lines;
}

interface Startup {
  mesh?: number;
  meshRuns?: number[];
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
    return { med: median(ms.map((m) => m.seconds)), runs: ms.map((m) => m.seconds), exit: ms[0]!.exitCode };
  };
  const node = (await time15('node', ['-e', ''])).med;
  const floor = (await time15('node', [FLOOR, rl])).med;
  if (!cliOk) return { node, floor };
  const m = await time15('node', [CLI], rl);
  return { mesh: m.med, meshRuns: m.runs, meshExit: m.exit, node, floor };
}

interface Target {
  name: string;
  value: string;
  met: boolean | undefined;
}

function targets(rows: Row[], st: Startup): Target[] {
  const r10k = rows.find((r) => r.n === 10000);
  const r1k = rows.find((r) => r.n === 1000);
  const out: Target[] = [];
  const tr = r10k?.mesh ? r10k.mesh.seconds / r10k.floor.seconds : undefined;
  out.push({ name: '10 000 workloads: time ≤ yaml Document round trip (ratio ≤ 1.0; aim 0.5)', value: tr === undefined ? 'n/a' : tr.toFixed(2), met: tr === undefined ? undefined : tr <= 1.0 });
  const rr = r10k?.mesh ? r10k.mesh.maxRssMB / r10k.floor.maxRssMB : undefined;
  out.push({ name: '10 000 workloads: peak RSS ≤ 1.2 × round trip', value: rr === undefined || !Number.isFinite(rr) ? 'n/a' : rr.toFixed(2), met: rr === undefined || !Number.isFinite(rr) ? undefined : rr <= 1.2 });
  const sc = r10k?.mesh && r1k?.mesh ? r10k.mesh.seconds / r1k.mesh.seconds : undefined;
  out.push({ name: 'time(10 000) / time(1 000) ≤ 12', value: sc === undefined ? 'n/a' : sc.toFixed(1), met: sc === undefined ? undefined : sc <= 12 });
  const su = st.mesh;
  out.push({ name: '10-workload list end to end ≤ 150 ms median', value: su === undefined ? 'n/a' : `${(su * 1000).toFixed(0)} ms`, met: su === undefined ? undefined : su <= 0.15 });
  const okInject = rows.every((r) => !r.mesh || (r.mesh.exitCode === 0 && r.mesh.injected === r.mesh.expected));
  out.push({ name: 'sanity: exit 0 and every workload injected at every N', value: rows.some((r) => r.mesh) ? (okInject ? 'yes' : 'no') : 'n/a', met: rows.some((r) => r.mesh) ? okInject : undefined });
  return out;
}

/** Base sizes of the shapes (each is run at n, 2n and 4n). */
const SHAPE_BASE: Record<Shape, { n: number; unit: string }> = {
  'compact-json': { n: 5000, unit: 'items' },
  'wide-configmap': { n: 10000, unit: 'keys' },
  'wide-values': { n: 10000, unit: 'keys' },
  'huge-annotation': { n: 2048, unit: 'KiB' },
  'anchored-docs': { n: 75000, unit: 'documents' },
};

/**
 * Runs every input shape at n, 2n and 4n through the CLI and returns a Markdown table: wall and CPU
 * seconds, and CPU microseconds per unit (flat across the three sizes = linear growth).
 */
async function benchShapes(cliOk: boolean): Promise<string[]> {
  const lines = ['| shape | size | wall s | CPU s | CPU µs per unit | CPU growth vs n (linear: 1, 2, 4) | exit |', '|---|---|---|---|---|---|---|'];
  if (!cliOk) return lines;
  const config = `${OUT}/shapes-config.yaml`;
  writeFileSync(config, 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: mesh\nspec:\n  mesh: istio\n');
  for (const shape of SHAPES) {
    const base = SHAPE_BASE[shape];
    let first: number | undefined;
    for (const k of [1, 2, 4]) {
      const n = base.n * k;
      const file = `${OUT}/shape-${shape}-${n}.txt`;
      writeFileSync(file, generateShape(shape, n));
      const args = shape === 'wide-values' ? [CLI] : [CLI, '--config', config];
      const m = await measure('node', ['--max-old-space-size=8192', ...args], { stdinFile: file, stdoutFile: `${OUT}/shape-out.txt`, timeoutSeconds: 900 });
      first ??= m.cpuSeconds;
      lines.push(`| ${shape} | ${n} ${base.unit} | ${fmtS(m)} | ${m.cpuSeconds.toFixed(2)} | ${((m.cpuSeconds / n) * 1e6).toFixed(1)} | ${(m.cpuSeconds / first).toFixed(2)} | ${m.exitCode} |`);
      process.stderr.write(`  ${shape} ${n}: ${fmtS(m)} s wall, ${m.cpuSeconds.toFixed(2)} s CPU, exit ${m.exitCode}\n`);
    }
  }
  return lines;
}

function metText(m: boolean | undefined): string {
  return m === undefined ? 'not measured' : m ? 'met' : 'NOT met';
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(OUT, { recursive: true });
  const cliOk = existsSync(`${ROOT}dist/meshinject.cjs`);
  if (!cliOk) process.stderr.write('bench: dist/meshinject.cjs missing (run `npm run build`): meshinject columns are n/a\n');
  if (args.shapes === 'only') {
    process.stdout.write(`\n${(await benchShapes(cliOk)).join('\n')}\n`);
    return;
  }
  const rows: Row[] = [];
  for (const n of args.sizes) rows.push(await benchSize(n, args, cliOk));
  const shapeLines = args.shapes === 'yes' ? await benchShapes(cliOk) : [];
  const st = await benchStartup(cliOk);
  const tbl = table(rows);
  const ts = targets(rows, st);
  const startupLines = [
    `| run (10 workloads, 18 resources, median of 15) | wall |`,
    `|---|---|`,
    `| meshinject CLI end to end | ${st.mesh === undefined ? 'n/a' : `${(st.mesh * 1000).toFixed(0)} ms${st.meshExit !== 0 ? ` (exit ${st.meshExit})` : ''}`} |`,
    `| \`node -e ''\` (bare node start-up) | ${(st.node * 1000).toFixed(0)} ms |`,
    `| yaml round trip (bench/yaml-roundtrip.mjs) | ${(st.floor * 1000).toFixed(0)} ms |`,
  ];
  const targetLines = ['| target | measured | status |', '|---|---|---|', ...ts.map((t) => `| ${t.name} | ${t.value} | ${metText(t.met)} |`)];
  process.stdout.write(`\n${tbl.join('\n')}\n\n${startupLines.join('\n')}\n\n${targetLines.join('\n')}\n${shapeLines.length ? `\n${shapeLines.join('\n')}\n` : ''}`);
  if (!args.write) return;
  const md = [
    '# meshinject benchmark results',
    '',
    `Generated by \`npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}\` on ${new Date().toISOString().slice(0, 10)}.`,
    'Inputs come from `bench/generate.ts` (deterministic): N workloads (≈60% Deployments, 25% StatefulSets, 15% CronJobs),',
    'one Service per two workloads, one ConfigMap per four, comments on every 7th resource, kpt path/index/id annotations,',
    'as a kpt-style ResourceList whose functionConfig is Istio with `policy: enabled` (every workload injected).',
    'Wall time is measured around the child process; peak RSS is GNU `/usr/bin/time -f %M`. N ≤ 1 000: median of 3 runs;',
    'larger N: one run (kustomize: one run from N = 1 000, killed after --kustomize-timeout, default 600 s). "time ratio" and "RSS ratio" are meshinject ÷ yaml round trip. From N = 50 000, meshinject and the round trip both run with `node --max-old-space-size=12288` (the round trip exhausts the default heap there). kustomize patches only Deployments',
    '(a strategic-merge patch with `target: {kind: Deployment}`), so its "patched" column counts Deployments.',
    'The build machine is shared with other jobs (see the load average): absolute times move between runs; the',
    'ratios compare tools measured back to back on the same input in the same run.',
    '',
    '## Machine',
    '',
    ...machine(),
    '',
    '## Throughput and memory',
    '',
    ...tbl,
    '',
    '## Start-up',
    '',
    ...startupLines,
    '',
    '## Targets',
    '',
    ...targetLines,
    '',
    ...(shapeLines.length ? ['## Input shapes (growth must be linear)', '', ...shapeLines, ''] : []),
  ];
  writeFileSync(`${ROOT}bench/RESULTS.md`, md.join('\n'));
  process.stderr.write('bench: wrote bench/RESULTS.md\n');
}

await main();
