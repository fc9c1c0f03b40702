import { applyEdits } from '../edit/flow-edit.ts';
import type { KrmResult } from '../model.ts';
import { exitCodeOf, generalResult } from '../results/result.ts';
import { migrationEdits, type MigrateRequest } from '../migrate.ts';

import type { FileOutput, RunInput, RunOptions, RunOutput } from '../run.ts';
import { resolveConfig } from './config.ts';
import { orBadInput, parseInputs } from './inputs.ts';
import { badInput, joinStreams, stderrFor } from './output.ts';

/**
 * `meshinject migrate` (src/migrate.ts): the inputs (YAML streams; a ResourceList is bad input, exit 2) moved to
 * `req.to` for `req.namespaces`, as the driver plans it. Exit 2 also for a request the driver refuses; exit 1 when a
 * workload cannot be uninjected or a change cannot be written faithfully (nothing written). `files` holds each
 * input's new text and its edits (for `-i` and `--diff`); results: one per change (`meshinject.dev/outcome:
 * migrated`), then the driver's notes.
 */
export function runMigration(inputs: readonly RunInput[], opts: RunOptions, req: MigrateRequest): RunOutput {
  const parsed = orBadInput(() => parseInputs(inputs));
  if (!parsed.ok) return badInput(parsed.message);
  const sources = parsed.value;
  if (sources.some((s) => s.form !== 'stream'))
    return badInput(
      'meshinject migrate reads YAML files and directories (a stream of documents), not a ResourceList or a List',
    );
  const results: KrmResult[] = [];
  const failed = (): RunOutput => ({
    stdout: '',
    stdoutParts: [],
    stderr: stderrFor(results, opts.logToStderr === true),
    exitCode: 1,
    results,
    files: [],
    workloads: [],
  });
  const cfg = resolveConfig(sources, opts);
  if (cfg.fatal !== undefined) return badInput(cfg.fatal);
  const problems = cfg.problems ?? (cfg.problem !== undefined ? [cfg.problem] : []);
  for (const p of problems) results.push(generalResult('error', `functionConfig: ${p}`));
  if (problems.length === 0 && cfg.loaded?.ok === false)
    for (const issue of cfg.loaded.issues)
      results.push(generalResult('error', `functionConfig: ${issue.message}`, issue.path));
  if (exitCodeOf(results) !== 0 || !cfg.loaded?.ok) return failed();
  const { mesh, config } = cfg.loaded;
  // Documents are composed as they are read (ResourceItem.load): a bad one is bad input here too, not internal.
  const planned = orBadInput(() =>
    migrationEdits(
      sources,
      inputs.map((i) => i.name),
      config,
      mesh,
      req,
      results,
    ),
  );
  if (!planned.ok) return badInput(planned.message);
  const edits = planned.value;
  if ('error' in edits) return badInput(edits.error);
  if (exitCodeOf(results) !== 0) return failed();
  const files = sources.map((source, i): FileOutput => {
    const own = (edits.get(i) ?? []).sort((a, b) => a.start - b.start || a.end - b.end);
    const output = applyEdits(source.text, 0, source.text.length, own);
    const name = inputs[i]?.name;
    return { ...(name !== undefined ? { name } : {}), input: source.text, output, parts: [output], edits: own };
  });
  const stdoutParts = files.length === 1 && files[0] ? [...files[0].parts] : joinStreams(files.map((f) => f.parts));
  return {
    stdout: stdoutParts.join(''),
    stdoutParts,
    stderr: stderrFor(results, opts.logToStderr === true),
    exitCode: 0,
    results,
    files,
    config,
    workloads: [],
  };
}
