import type { Inventory } from '../contract/driver.ts';
import type { Decision, LabelSelector, KrmResult, NamespaceInfo, ResourceId } from '../model.ts';
import { resourceResult } from '../results/result.ts';
import { formatSelector, matchesSelector, validateSelector } from '../selection/label-selector.ts';

/**
 * Check mode (`meshinject check`, `spec.mode: check`): what a pre-merge gate fails on. Injection is run as
 * usual but nothing is written; each workload's input is compared with what injection would make of it:
 * - `not-injected`: the config injects it, and it carries no sidecar;
 * - `injection-drift`: it carries a sidecar, but injecting now would change its pod template (another proxy
 *   version, other values, another revision): the injection is stale;
 * - `unwanted-sidecar`: the config skips it, and it carries a sidecar (meshinject does not remove sidecars);
 * - `injection-required`: it is skipped (for any reason but hostNetwork) in a namespace that
 *   `spec.check.requireInjection` selects;
 * - `opt-out-forbidden`: it opts out on its own (a driver reason its driver declares an opt-out,
 *   `ReasonInfo.optOut`, e.g. a pod label saying "false") and `spec.check.forbidOptOut` is true.
 * Pure: findings are KRM results (tag `meshinject.dev/check`), so kpt shows them and reports read them.
 */

/** A decided workload, as the pipeline records it for `meshinject check` and `explain`. */
export interface WorkloadRecord {
  /** `SourceItem.position` of the resource. */
  position: number;
  id: ResourceId;
  /** Effective namespace (`metadata.namespace`, else the default namespace). */
  namespace: string;
  decision: Decision;
  /** What the input's pod template already carried from this mesh (its status annotation), if anything. */
  previous?: Inventory;
  /** False when the injection failed (an error result was pushed). */
  ok: boolean;
  /** The driver's tags of the workload as written (`DriverDecision.tags`, `MeshDriver.workloadTags`), by short key; absent when none. */
  tags?: Record<string, string>;
}

/** `spec.check` as validated by the schema. */
export interface CheckRules {
  requireInjection: LabelSelector[];
  forbidOptOut: boolean;
}

/** What fails a check: errors only, errors and drift (default), or also warnings. */
export type FailOn = 'error' | 'drift' | 'warning';

/** Check rules from the raw functionConfig (`spec.check`), with the semantic selector problems. */
export function readCheckRules(functionConfig: unknown): {
  rules: CheckRules;
  mode?: 'inject' | 'check';
  issues: Array<{ path: string; message: string }>;
} {
  const spec = (
    functionConfig as {
      spec?: { mode?: unknown; check?: { requireInjection?: unknown; forbidOptOut?: unknown } };
    } | null
  )?.spec;
  const check = spec?.check;
  const required = check?.requireInjection;
  const require = Array.isArray(required) ? (required as LabelSelector[]) : [];
  const issues = require.flatMap((s, i) => validateSelector(s, `spec.check.requireInjection[${i}]`));
  return {
    rules: { requireInjection: require, forbidOptOut: check?.forbidOptOut === true },
    ...(spec?.mode === 'check' || spec?.mode === 'inject' ? { mode: spec.mode } : {}),
    issues,
  };
}

/** A check finding and the resource text that fixes it (for SARIF `fixes`), by result. */
export interface CheckOutput {
  results: KrmResult[];
  /** New text of the resource for findings whose fix is injecting (`not-injected`, `injection-drift`). */
  fixes: Map<KrmResult, string>;
}

/**
 * The check findings of a run.
 *
 * @param workloads the decided workloads (`processItems(...).workloads`) with their input's index
 * @param changedText per input, the new text of each resource injection would change (by position); the run
 *   must have been made with `resultAnnotations` off, so that only pod template changes count
 * @param namespaces the run's namespace table (for `requireInjection`)
 * @param podTemplatePath per workload, its pod template field path from the root (`spec.template`)
 * @param optOuts the reason codes the driver declares opt-outs (`ReasonInfo.optOut`)
 */
export function checkWorkloads(
  workloads: ReadonlyArray<WorkloadRecord & { input: number }>,
  changedText: ReadonlyArray<ReadonlyMap<number, string>>,
  namespaces: ReadonlyMap<string, NamespaceInfo>,
  rules: CheckRules,
  failOn: FailOn,
  podTemplatePath: (w: WorkloadRecord) => string,
  optOuts: ReadonlySet<string> = new Set(),
): CheckOutput {
  const results: KrmResult[] = [];
  const fixes = new Map<KrmResult, string>();
  const add = (w: WorkloadRecord, rule: string, severity: 'error' | 'warning', message: string, fix?: string): void => {
    const r = resourceResult(severity, `${rule}: ${message}`, w.id, {
      field: podTemplatePath(w),
      tags: { 'meshinject.dev/check': 'true', 'meshinject.dev/outcome': rule, 'meshinject.dev/reason': rule },
    });
    results.push(r);
    if (fix !== undefined) fixes.set(r, fix);
  };
  for (const w of workloads) {
    if (!w.ok) continue;
    const d = w.decision;
    const next = changedText[w.input]?.get(w.position);
    const sidecar = w.previous
      ? `${w.previous.statusAnnotation} lists ${[...w.previous.initContainers, ...w.previous.containers].join(', ') || 'an injection'}`
      : '';
    if (d.inject && !w.previous) {
      add(w, 'not-injected', 'error', `the config injects it (${d.reason}) but it carries no sidecar`, next);
    } else if (d.inject && next !== undefined) {
      add(
        w,
        'injection-drift',
        failOn === 'error' ? 'warning' : 'error',
        `its sidecar (${sidecar}) differs from what the current config injects (proxy version, values or revision)`,
        next,
      );
    } else if (!d.inject && w.previous) {
      add(w, 'unwanted-sidecar', 'error', `the config skips it (${d.reason}) but it carries a sidecar (${sidecar})`);
    }
    if (!d.inject && d.reason !== 'host-network') {
      const ns = namespaces.get(w.namespace);
      const labels = { ...(ns?.labels ?? {}), 'kubernetes.io/metadata.name': w.namespace };
      const i = rules.requireInjection.findIndex((s) => matchesSelector(s, labels));
      const required = rules.requireInjection[i];
      if (required !== undefined) {
        add(
          w,
          'injection-required',
          'error',
          `skipped (${d.reason}) in namespace ${w.namespace}, where spec.check.requireInjection[${i}] (${formatSelector(required)}) requires injection`,
        );
      } else if (rules.forbidOptOut && optOuts.has(d.reason)) {
        add(w, 'opt-out-forbidden', 'error', `it opts out (${d.reason}) and spec.check.forbidOptOut is true`);
      }
    }
  }
  return { results, fixes };
}

/** With `--fail-on warning`, warnings fail too: they become errors (in place). */
export function applyFailOn(results: KrmResult[], failOn: FailOn): void {
  if (failOn !== 'warning') return;
  for (const r of results) if (r.severity === 'warning') r.severity = 'error';
}
