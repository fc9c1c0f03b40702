import type { KrmResult } from '../model.ts';
import type { WorkloadRecord } from '../check/findings.ts';
import { locateResult, type LocatedInput } from './locate.ts';
import { escapeLine } from '../results/escape-line.ts';

/**
 * `meshinject explain`: per workload, the decision trace (every rule in order, what it saw, which rule
 * decided; `Decision.trace`), offline. Text for people, JSON for tools. Pure.
 */

/** One workload's explanation, as `--output json` prints it (an array of these). */
export interface Explanation {
  apiVersion: string;
  kind: string;
  name: string;
  /** The effective namespace (`metadata.namespace`, else the default namespace); absent for a workload in error. */
  namespace?: string;
  file?: string;
  line?: number;
  column?: number;
  /** `injected`, `skipped`, or `error` (the workload cannot be decided or injected as written). */
  outcome: 'injected' | 'skipped' | 'error';
  reason?: string;
  detail: string;
  trace: Array<{ rule: string; saw: string; outcome: 'pass' | 'decided' | 'note' }>;
  warnings: string[];
  /** The driver's tags of the workload as written (e.g. Istio's `dataplane`, `revision`); absent when none. */
  tags?: Record<string, string>;
}

/**
 * The explanations of a run: decided workloads in input order, then workloads that have only error
 * results (a broken pod template or an annotation the mesh refuses, found while deciding).
 *
 * @param workloads the run's decided workloads
 * @param results the run's results (for workloads in error and per-workload warnings)
 * @param inputs the inputs as read (for file and line)
 */
export function explainWorkloads(
  workloads: ReadonlyArray<WorkloadRecord>,
  results: readonly KrmResult[],
  inputs: readonly LocatedInput[],
): Explanation[] {
  const key = (
    r: { apiVersion: string; kind: string; name: string; namespace?: string },
    file?: { path: string; index?: number },
  ) => JSON.stringify([r.apiVersion, r.kind, r.namespace ?? '', r.name, file?.path ?? '', file?.index ?? 0]);
  const byKey = new Map<string, KrmResult[]>();
  for (const r of results) {
    if (!r.resourceRef) continue;
    const k = key(r.resourceRef, r.file);
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  const where = (r: KrmResult) => {
    const pos = locateResult(inputs, { ...r, field: { path: '' } });
    const file = pos?.file ?? r.file?.path;
    return {
      ...(file ? { file } : {}),
      ...(pos ? { line: pos.line, column: pos.column } : {}),
    };
  };
  const out: Explanation[] = [];
  const seen = new Set<string>();
  for (const w of workloads) {
    const file = w.id.filePath !== undefined ? { path: w.id.filePath, index: w.id.fileIndex ?? 0 } : undefined;
    const k = key(w.id, file);
    seen.add(k);
    const own = byKey.get(k) ?? [];
    const failed = own.find((r) => r.severity === 'error');
    const d = w.decision;
    out.push({
      apiVersion: w.id.apiVersion,
      kind: w.id.kind,
      name: w.id.name,
      namespace: w.namespace,
      ...where({
        message: '',
        severity: 'info',
        resourceRef: {
          apiVersion: w.id.apiVersion,
          kind: w.id.kind,
          name: w.id.name,
          ...(w.id.namespace ? { namespace: w.id.namespace } : {}),
        },
        ...(file ? { file } : {}),
      }),
      outcome: failed ? 'error' : d.inject ? 'injected' : 'skipped',
      reason: d.reason,
      detail: failed
        ? `${d.inject ? 'would be injected' : 'skipped'} (${d.reason}: ${d.detail}), but: ${failed.message}`
        : d.detail,
      trace: d.trace.map((s) => ({ rule: s.rule, saw: s.saw, outcome: s.outcome })),
      warnings: own
        .filter((r) => r.severity === 'warning' && !r.tags?.['meshinject.dev/outcome'])
        .map((r) => r.message),
      ...(w.tags && Object.keys(w.tags).length ? { tags: w.tags } : {}),
    });
  }
  for (const [k, rs] of byKey) {
    if (seen.has(k)) continue;
    const err = rs.find((r) => r.severity === 'error');
    const ref = err?.resourceRef;
    if (!err || !ref) continue;
    out.push({
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      ...where(err),
      outcome: 'error',
      detail: err.message,
      trace: [],
      warnings: [],
    });
  }
  return out;
}

/**
 * The explanations as text: a block per workload, the trace as a numbered table, the decision, then the driver's
 * tags of the workload (`dataplane: ambient`), one a line. Each line
 * is escaped with `escapeLine`: a value from the input cannot add a line or drive the terminal.
 */
export function explainText(list: readonly Explanation[]): string {
  const blocks = list.map((e) => {
    const at = e.file ? ` (${e.file}${e.line ? `:${e.line}` : ''})` : '';
    const lines = [`${e.kind} ${e.namespace ? `${e.namespace}/` : ''}${e.name}${at}`];
    const width = Math.max(0, ...e.trace.map((s) => s.rule.length));
    e.trace.forEach((s, i) => {
      const mark = s.outcome === 'decided' ? 'decided' : s.outcome === 'note' ? 'note   ' : 'pass   ';
      lines.push(`  ${String(i + 1).padStart(2)}. ${s.rule.padEnd(width)}  ${mark}  ${s.saw}`);
    });
    for (const w of e.warnings) lines.push(`  warning: ${w}`);
    lines.push(`  => ${e.outcome}${e.reason ? ` (${e.reason})` : ''}: ${e.detail}`);
    for (const [k, v] of Object.entries(e.tags ?? {})) lines.push(`     ${k}: ${v}`);
    return lines.map(escapeLine).join('\n');
  });
  return blocks.length ? `${blocks.join('\n\n')}\n` : 'no workloads in the input\n';
}
