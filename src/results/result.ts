import type { Json, KrmResult, ResourceId, Severity } from '../model.ts';
import { emitSeqLines } from '../yaml/emit/emit-block.ts';
import { escapeLine } from './escape-line.ts';

/**
 * Builds a KRM result about one resource: `resourceRef` from its identity, `file {path, index}` from the
 * orchestrator annotations (or the CLI input), an optional `field.path` and `tags`.
 */
export function resourceResult(
  severity: Severity,
  message: string,
  id: ResourceId,
  extra: { field?: string; tags?: Record<string, string> } = {},
): KrmResult {
  const r: KrmResult = {
    message,
    severity,
    resourceRef: {
      apiVersion: id.apiVersion,
      kind: id.kind,
      name: id.name,
      ...(id.namespace ? { namespace: id.namespace } : {}),
    },
  };
  if (extra.field) r.field = { path: extra.field };
  if (id.filePath !== undefined) r.file = { path: id.filePath, index: id.fileIndex ?? 0 };
  if (extra.tags) r.tags = extra.tags;
  return r;
}

/** The result tag keys (after `meshinject.dev/`) the core writes itself; a driver's tag of such a key is left out. */
export const CORE_TAG_KEYS: ReadonlySet<string> = new Set(['outcome', 'reason', 'check', 'error', 'injection']);

/**
 * A driver's tags of a workload (`DriverDecision.tags`, `MeshDriver.workloadTags`: `{dataplane: 'ambient'}`) as
 * result tags `meshinject.dev/<key>`; keys of `CORE_TAG_KEYS` are left out.
 */
export function prefixedTags(tags: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(tags)) if (!CORE_TAG_KEYS.has(k)) out[`meshinject.dev/${k}`] = v;
  return out;
}

/** The driver's tags of a result by short key (the inverse of `prefixedTags`): `meshinject.dev/<key>` other than the core's. */
export function driverTagsOf(tags: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(tags ?? {})) {
    const key = k.startsWith('meshinject.dev/') ? k.slice('meshinject.dev/'.length) : undefined;
    if (key !== undefined && !CORE_TAG_KEYS.has(key)) out[key] = v;
  }
  return out;
}

/** A result not tied to a resource (e.g. about the functionConfig or the input as a whole). */
export function generalResult(severity: Severity, message: string, field?: string): KrmResult {
  return { message, severity, ...(field ? { field: { path: field } } : {}) };
}

/** Exit code of a run: 1 when any result is an error, else 0. */
export function exitCodeOf(results: readonly KrmResult[]): 0 | 1 {
  return results.some((r) => r.severity === 'error') ? 1 : 0;
}

/**
 * One human line per result, as kpt prints them:
 * `[warning] apps/v1/Deployment/shop/web spec.template.metadata: skipped (host-network): ...`.
 * One result is one line: every value in it is escaped with `escapeLine` (a newline or ESC in an annotation
 * value or a file name cannot forge another line or drive the terminal).
 */
export function formatResultLine(r: KrmResult): string {
  const ref = r.resourceRef;
  const who = ref ? `${ref.apiVersion}/${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}` : '';
  const where = r.file ? ` (${r.file.path}${r.file.index ? `#${r.file.index}` : ''})` : '';
  const field = r.field && ref ? ` ${r.field.path}` : '';
  const head = who ? ` ${who}${field}:` : '';
  return escapeLine(`[${r.severity}]${head} ${r.message}${where}`);
}

/** The `results:` entry appended to an output ResourceList (block YAML, ends with a newline). */
export function resultsYaml(results: readonly KrmResult[]): string {
  // A result is JSON; its interface has no index signature, so it is not assignable to `Json`.
  return `results:\n${emitSeqLines(results as unknown as Json[], 0, { seqIndent: 'compact' })}`;
}

/** Summary counts of a run's results: workloads by outcome, warning and error results. */
export interface SummaryCounts {
  injected: number;
  uninjected: number;
  skipped: number;
  warnings: number;
  errors: number;
}

/** Counts a run's results for the summary line (`summaryText`). */
export function summarize(results: readonly KrmResult[]): SummaryCounts {
  const s: SummaryCounts = { injected: 0, uninjected: 0, skipped: 0, warnings: 0, errors: 0 };
  for (const r of results) {
    if (r.severity === 'error') s.errors++;
    else if (r.severity === 'warning') s.warnings++;
    const outcome = r.tags?.['meshinject.dev/outcome'];
    if (r.severity === 'error') continue;
    if (outcome === 'injected') s.injected++;
    else if (outcome === 'uninjected') s.uninjected++;
    else if (outcome === 'skipped') s.skipped++;
  }
  return s;
}

/**
 * The counts of a summary line: `3 injected, 1 skipped, 0 error(s)`, with `N uninjected` (uninject, or
 * `removeWhenSkipped`) and `N warning(s)` when there are any: `0 injected, 2 uninjected, 1 skipped, 1 warning(s), 0 error(s)`.
 */
export function summaryText(s: SummaryCounts): string {
  return [
    `${s.injected} injected`,
    ...(s.uninjected ? [`${s.uninjected} uninjected`] : []),
    `${s.skipped} skipped`,
    ...(s.warnings ? [`${s.warnings} warning(s)`] : []),
    `${s.errors} error(s)`,
  ].join(', ');
}
