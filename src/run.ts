import { parse as parseYaml } from 'yaml';
import { loadConfig } from './config/load.ts';
import { DRIVERS } from './drivers/registry.ts';
import { parseSource, type ParsedSource } from './krm/source.ts';
import { writeOutput } from './krm/write.ts';
import type { KrmResult } from './model.ts';
import { processItems } from './pipeline.ts';
import { MeshInjectError } from './results/errors.ts';
import { exitCodeOf, formatResultLine, generalResult, summarize } from './results/result.ts';

/** Options of one run; everything ambient (env, argv, files) is resolved by the CLI and passed in here. */
export interface RunOptions {
  /** functionConfig as YAML text (CLI `--config`); overrides the ResourceList's `functionConfig`. */
  functionConfig?: string;
  /** Name of the input for messages and `file.path` of plain streams (a file path, or `stdin`). */
  inputName?: string;
  /** `LOG_TO_STDERR=true`: one human line per result on stderr. */
  logToStderr?: boolean;
}

/**
 * The outcome of one run. `stdout` is complete or empty: with exit code 2 (bad input or usage) it is empty;
 * with exit code 1 a ResourceList carries every result and its items unchanged, other forms write nothing.
 */
export interface RunOutput {
  stdout: string;
  stderr: string;
  exitCode: 0 | 1 | 2;
  results: KrmResult[];
}

function stderrFor(results: readonly KrmResult[], all: boolean): string {
  const lines = results.filter((r) => all || r.severity === 'error').map(formatResultLine);
  if (all) {
    const s = summarize(results);
    lines.push(`meshinject: ${s.injected} injected, ${s.skipped} skipped, ${s.errors} error(s)`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Exit 2: bad input, nothing on stdout, the reason on stderr. */
function badInput(message: string): RunOutput {
  return { stdout: '', stderr: `meshinject: error: ${message}\n`, exitCode: 2, results: [] };
}

function finish(source: ParsedSource, results: KrmResult[], stdout: string, opts: RunOptions): RunOutput {
  const exitCode = exitCodeOf(results);
  const keep = exitCode === 0 || source.form === 'resource-list';
  return { stdout: keep ? stdout : '', stderr: stderrFor(results, opts.logToStderr === true), exitCode, results };
}

/**
 * Runs meshinject on one input: bytes in, bytes out, no process access.
 *
 * @param input a ResourceList, a `kind: List`, or a multi-document YAML stream (a leading BOM is ignored)
 * @returns stdout/stderr text and the exit code (0 ok, 1 error results, 2 bad input)
 */
export function run(input: string, opts: RunOptions = {}): RunOutput {
  const where = opts.inputName ?? 'input';
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  let source: ParsedSource;
  try {
    source = parseSource(text, where);
    if (source.form === 'stream' && source.items.length === 0) {
      throw new MeshInjectError('BAD_INPUT', `${where}: no resources: expected a ResourceList, a List or Kubernetes YAML documents`);
    }
  } catch (e) {
    if (!(e instanceof MeshInjectError)) throw e;
    return badInput(e.message);
  }
  let fnConfig: unknown = source.functionConfig;
  if (opts.functionConfig !== undefined) {
    try {
      fnConfig = parseYaml(opts.functionConfig, { uniqueKeys: true, maxAliasCount: 100 });
    } catch (e) {
      return badInput(`functionConfig: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  const results: KrmResult[] = [];
  const unchanged = () => writeOutput(source, new Map(), results);
  const loaded = loadConfig(fnConfig, DRIVERS);
  if (!loaded.ok) {
    for (const issue of loaded.issues) results.push(generalResult('error', `functionConfig: ${issue.message}`, issue.path));
    return finish(source, results, unchanged(), opts);
  }
  for (const w of loaded.warnings) results.push(generalResult('warning', `functionConfig: ${w}`));
  let out: ReturnType<typeof processItems>;
  try {
    out = processItems(source, loaded.config, loaded.mesh, opts.inputName);
  } catch (e) {
    // Resources are composed as they are processed: a broken one is bad input, and nothing is written.
    if (!(e instanceof MeshInjectError) || e.code !== 'BAD_INPUT') throw e;
    return badInput(e.message);
  }
  results.push(...out.results);
  if (exitCodeOf(results) !== 0) return finish(source, results, unchanged(), opts);
  return finish(source, results, writeOutput(source, out.changed, results), opts);
}
