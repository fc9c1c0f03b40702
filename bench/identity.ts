/**
 * The `identity` class of `npm run bench` (issue #24, "Done when"): every input class at a moderate size run
 * with meshinject's fast paths on, with all of them off, with each off alone, and with every planned render
 * verified against a full one; the sha256 of the outputs must be equal. A difference is printed loudly on
 * stderr, shown as NOT met in the targets, and makes `npm run bench` exit 1.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { measure, type Measurement } from './measure.ts';

/**
 * Every environment switch that turns a fast path of meshinject off (read by src/cli.ts). Add a switch here when
 * a fast path gets one: the `identity` class runs each input with all of them set and with each one alone.
 */
export const FAST_PATHS_OFF: Readonly<Record<string, string>> = {
  MESHINJECT_PLANS: '0',
};

/** The verification switch: every planned render compared with a full one; meshinject fails on a difference. */
export const VERIFY_FAST_PATHS: Readonly<Record<string, string>> = { MESHINJECT_VERIFY_PLANS: '1' };

/** One run of an identity row: its environment, exit code, sha256 of stdout, CPU seconds. */
export interface IdentityRun {
  variant: string;
  exitCode: number | null;
  sha256: string;
  cpuSeconds: number;
  stderr: string;
}

/** One input of the identity class and its runs; `identical` when every run exited 0 with the same sha256. */
export interface IdentityRow {
  label: string;
  runs: IdentityRun[];
  identical: boolean;
}

/** The variants run on each input: name → environment (fast paths on is the empty environment). */
export function identityVariants(): Array<[string, Record<string, string>]> {
  const keys = Object.keys(FAST_PATHS_OFF);
  const out: Array<[string, Record<string, string>]> = [['fast paths on', {}]];
  out.push([keys.length > 1 ? 'all off' : `${keys[0]}=${FAST_PATHS_OFF[keys[0]!]}`, { ...FAST_PATHS_OFF }]);
  if (keys.length > 1) for (const k of keys) out.push([`${k}=${FAST_PATHS_OFF[k]}`, { [k]: FAST_PATHS_OFF[k]! }]);
  for (const [k, v] of Object.entries(VERIFY_FAST_PATHS)) out.push([`${k}=${v}`, { [k]: v }]);
  return out;
}

/**
 * Runs `node ...args` (stdin from `stdinFile` when given) once per variant and compares the outputs.
 *
 * @param outFile scratch file for stdout (hashed after each run)
 */
export async function identityRow(
  label: string,
  args: string[],
  outFile: string,
  stdinFile?: string,
): Promise<IdentityRow> {
  const runs: IdentityRun[] = [];
  for (const [variant, env] of identityVariants()) {
    const m: Measurement = await measure('node', args, {
      stdoutFile: outFile,
      env,
      timeoutSeconds: 900,
      ...(stdinFile ? { stdinFile } : {}),
    });
    const sha256 = createHash('sha256').update(readFileSync(outFile)).digest('hex');
    runs.push({ variant, exitCode: m.exitCode, sha256, cpuSeconds: m.cpuSeconds, stderr: m.stderr.slice(0, 400) });
  }
  const identical = runs.every((r) => r.exitCode === 0 && r.sha256 === runs[0]!.sha256);
  if (!identical) {
    const lines = runs.map(
      (r) =>
        `    ${r.variant}: exit ${r.exitCode}, sha256 ${r.sha256}${r.exitCode !== 0 ? `, stderr: ${r.stderr.split('\n')[0]}` : ''}`,
    );
    process.stderr.write(
      `\n!!!!!!!! bench: OUTPUT MISMATCH with fast paths on and off: ${label}\n${lines.join('\n')}\n!!!!!!!!\n\n`,
    );
  } else {
    process.stderr.write(`  identity ${label}: ${runs.length} runs, sha256 ${runs[0]!.sha256.slice(0, 12)}\n`);
  }
  return { label, runs, identical };
}

/** The identity table: per input, sha256 prefix and CPU seconds of each variant. */
export function identityTable(rows: readonly IdentityRow[]): string[] {
  const variants = rows[0]?.runs.map((r) => r.variant) ?? [];
  const head = `| input | ${variants.map((v) => `${v}: sha256 / CPU s`).join(' | ')} | identical |`;
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
    const cells = r.runs.map(
      (x) => `${x.sha256.slice(0, 12)}${x.exitCode !== 0 ? ` (exit ${x.exitCode})` : ''} / ${x.cpuSeconds.toFixed(2)}`,
    );
    lines.push(`| ${r.label} | ${cells.join(' | ')} | ${r.identical ? 'yes' : '**NO**'} |`);
  }
  return lines;
}
