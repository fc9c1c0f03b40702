/**
 * The `startup` class of `npm run bench` (issue #24 target 3): a 10-workload ResourceList through the CLI
 * (stdin to stdout), beside bare `node -e 0`, the `yaml` round trip of the same file and `kpt fn source` of the
 * same resources as a package. The commands run in turn, round after round (one warm-up round first), so a
 * change of machine load touches all of them alike; each figure is the median of `runs` rounds, wall and CPU.
 */
// The commands run one at a time and synchronously: nothing else of the bench runs meanwhile.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { generateResources, toResourceList } from './generate.ts';
import { median } from './measure.ts';
import { writePackage } from './package.ts';

/**
 * Times one run in bash, to the microsecond for wall time (`$EPOCHREALTIME` around the command) and to the
 * millisecond for CPU (the children's user + system time of bash's `times`); GNU time's CPU figures have 10 ms
 * steps, too coarse for a 25 ms budget. stdout goes to /dev/null.
 */
function timeOnce(
  cmd: string,
  args: string[],
  stdinFile = '/dev/null',
): { seconds: number; cpuSeconds: number; exitCode: number | null } {
  const script =
    'in=$1; shift; s=$EPOCHREALTIME; "$@" < "$in" > /dev/null; rc=$?; e=$EPOCHREALTIME; echo "$s $e $rc"; times';
  const r = spawnSync('bash', ['-c', script, 'bench-startup', stdinFile, cmd, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
  });
  const lines = r.stdout.trim().split('\n');
  const [s, e, rc] = lines[0]!.split(' ').map(Number) as [number, number, number];
  const sec = (x: string) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(x);
    return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
  };
  const [user, sys] = (lines[2] ?? '').split(' ').map(sec) as [number, number];
  return { seconds: e - s, cpuSeconds: user + sys, exitCode: rc };
}

/** Median wall and CPU seconds of one command over the rounds, and the exit code of its first run. */
export interface StartupFigure {
  wall: number;
  cpu: number;
  exit: number | null;
}

/** The start-up figures; `mesh` and `kpt` are absent when the CLI is not built or kpt is not on PATH. */
export interface Startup {
  runs: number;
  node: StartupFigure;
  floor: StartupFigure;
  mesh?: StartupFigure;
  kpt?: StartupFigure;
}

/** Milliseconds over bare node allowed by target 3, and its stretch. */
export const STARTUP_BUDGET_MS = 45;
export const STARTUP_STRETCH_MS = 25;

/**
 * Measures start-up.
 *
 * @param out the bench's scratch folder
 * @param cli bin/meshinject.js, or undefined when the CLI is not built
 * @param floor bench/yaml-roundtrip.mjs
 * @param runs rounds (at least 15)
 */
export async function benchStartup(
  out: string,
  cli: string | undefined,
  floor: string,
  withKpt: boolean,
  runs = 15,
): Promise<Startup> {
  const resources = generateResources(10);
  const rl = `${out}/rl-startup-10.yaml`;
  writeFileSync(rl, toResourceList(resources));
  const pkg = `${out}/startup-package`;
  writePackage(pkg, generateResources(10, { kptAnnotations: false }));
  const commands: Array<[keyof Omit<Startup, 'runs'>, string, string[], string | undefined]> = [
    ['node', 'node', ['-e', '0'], undefined],
    ['floor', 'node', [floor, rl], undefined],
    ...(cli ? [['mesh', 'node', [cli], rl] as [keyof Omit<Startup, 'runs'>, string, string[], string]] : []),
    ...(withKpt
      ? [['kpt', 'kpt', ['fn', 'source', pkg], undefined] as [keyof Omit<Startup, 'runs'>, string, string[], undefined]]
      : []),
  ];
  const seen = new Map<string, Array<ReturnType<typeof timeOnce>>>(commands.map(([k]) => [k, []]));
  for (let round = -1; round < runs; round++) {
    for (const [key, cmd, args, stdin] of commands) {
      const m = timeOnce(cmd, args, stdin);
      if (round >= 0) seen.get(key)!.push(m);
    }
  }
  const fig = (key: string): StartupFigure => {
    const ms = seen.get(key)!;
    return { wall: median(ms.map((m) => m.seconds)), cpu: median(ms.map((m) => m.cpuSeconds)), exit: ms[0]!.exitCode };
  };
  return {
    runs,
    node: fig('node'),
    floor: fig('floor'),
    ...(cli ? { mesh: fig('mesh') } : {}),
    ...(withKpt ? { kpt: fig('kpt') } : {}),
  };
}

const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
const signedMs = (s: number) => `${s < 0 ? '−' : '+'}${ms(Math.abs(s))}`;

/** The start-up table: wall and CPU medians, and each over bare node. */
export function startupTable(st: Startup): string[] {
  const row = (name: string, f: StartupFigure | undefined) =>
    f === undefined
      ? `| ${name} | n/a | n/a | n/a | n/a |`
      : `| ${name}${f.exit !== 0 ? ` (exit ${f.exit})` : ''} | ${ms(f.wall)} | ${ms(f.cpu)} | ${signedMs(f.wall - st.node.wall)} | ${signedMs(f.cpu - st.node.cpu)} |`;
  return [
    `| run (10 workloads, 18 resources; median of ${st.runs} alternating rounds) | wall | CPU | wall − node | CPU − node |`,
    '|---|---|---|---|---|',
    row('meshinject CLI end to end (ResourceList on stdin)', st.mesh),
    row('`node -e 0` (bare node start-up)', st.node),
    row('`kpt fn source` (the same resources as a package)', st.kpt),
    row('yaml round trip (bench/yaml-roundtrip.mjs)', st.floor),
  ];
}
