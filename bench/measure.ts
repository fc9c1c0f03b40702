/**
 * Process measurement helpers for the benchmark: wall time (monotonic clock around the child) and peak
 * resident set size (GNU `/usr/bin/time -f %M`, in KiB) of one child process, with stdin and stdout
 * redirected to files so pipes never throttle the child.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';

/** One measured run. `seconds` is wall time; `maxRssMB` is peak RSS in MiB (NaN when unknown). */
export interface Measurement {
  seconds: number;
  maxRssMB: number;
  exitCode: number | null;
  stderr: string;
  /** True when the run was killed after its time limit. */
  timedOut: boolean;
  /** User + system CPU seconds of the child (GNU time; NaN when unknown): steadier than wall time on a busy machine. */
  cpuSeconds: number;
}

/** Options of one measured run. */
export interface MeasureOptions {
  /** File to use as the child's stdin (default: /dev/null). */
  stdinFile?: string;
  /** File the child's stdout is written to (default: /dev/null). */
  stdoutFile?: string;
  cwd?: string;
  /** Kill the child after this many seconds (default 900). */
  timeoutSeconds?: number;
  /** Extra environment variables of the child (added to this process's environment). */
  env?: Record<string, string>;
}

const TIME_BIN = '/usr/bin/time';

/** True when GNU time is installed (`/usr/bin/time -f`); otherwise RSS is reported as NaN. */
export function hasGnuTime(): boolean {
  if (!existsSync(TIME_BIN)) return false;
  const r = spawnSync(TIME_BIN, ['-f', '%M', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /^\d+\s*$/.test(r.stderr.trim().split('\n').pop() ?? '');
}

const gnuTime = hasGnuTime();

/**
 * Runs `cmd args` once and measures it.
 * Wall time is taken with `process.hrtime` around the child (it includes GNU time's own ≈1 ms exec).
 */
export async function measure(cmd: string, args: string[], opts: MeasureOptions = {}): Promise<Measurement> {
  const rssFile = `/tmp/meshinject-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const inFd = openSync(opts.stdinFile ?? '/dev/null', 'r');
  const outFd = openSync(opts.stdoutFile ?? '/dev/null', 'w');
  const [file, argv] = gnuTime ? [TIME_BIN, ['-f', '%M %U %S', '-o', rssFile, cmd, ...args]] : [cmd, args];
  const t0 = process.hrtime.bigint();
  // detached: the child leads its own process group, so a time-out kills GNU time *and* the measured command.
  const child = spawn(file, argv, {
    cwd: opts.cwd,
    stdio: [inFd, outFd, 'pipe'],
    detached: true,
    ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    if (stderr.length < 20000) stderr += d;
  });
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    },
    (opts.timeoutSeconds ?? 900) * 1000,
  );
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearTimeout(timer);
  closeSync(inFd);
  closeSync(outFd);
  let maxRssMB = Number.NaN;
  let cpuSeconds = Number.NaN;
  if (gnuTime && existsSync(rssFile)) {
    const last = readFileSync(rssFile, 'utf8').trim().split('\n').pop() ?? '';
    const m = /^(\d+) ([\d.]+) ([\d.]+)$/.exec(last);
    if (m) {
      maxRssMB = Number(m[1]) / 1024;
      cpuSeconds = Number(m[2]) + Number(m[3]);
    }
    rmSync(rssFile, { force: true });
  }
  return { seconds, maxRssMB, exitCode, stderr, timedOut, cpuSeconds };
}

/** Median of a non-empty list of numbers. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Runs `repeats` times in a row; see `medianOf`. */
export async function measureMedian(
  repeats: number,
  cmd: string,
  args: string[],
  opts: MeasureOptions = {},
): Promise<Measurement & { runs: number[] }> {
  const ms: Measurement[] = [];
  for (let i = 0; i < repeats; i++) ms.push(await measure(cmd, args, opts));
  return medianOf(ms);
}

/**
 * Several runs of one command as one: the median wall time, CPU time and peak RSS (each its own median), the
 * other fields (exit code, stderr) of the run whose wall time is nearest the median, unless a run failed: then
 * that run's. `runs` lists the wall times.
 */
export function medianOf(ms: readonly Measurement[]): Measurement & { runs: number[] } {
  const secs = ms.map((m) => m.seconds);
  const med = median(secs);
  const failed = ms.find((m) => m.exitCode !== 0 || m.timedOut);
  const pick = failed ?? ms.reduce((a, b) => (Math.abs(b.seconds - med) < Math.abs(a.seconds - med) ? b : a));
  return {
    ...pick,
    seconds: med,
    cpuSeconds: median(ms.map((m) => m.cpuSeconds)),
    maxRssMB: median(ms.map((m) => m.maxRssMB)),
    runs: secs,
  };
}
