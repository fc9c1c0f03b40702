import type { KrmResult } from '../model.ts';
import { locateResult, type LocatedInput, type ResourceSpan } from './locate.ts';
import { ERROR_TAG } from '../results/errors.ts';
import { driverTagsOf } from '../results/result.ts';

/** The resource a result is about (`KrmResult.resourceRef`). */
type ResourceRef = NonNullable<KrmResult['resourceRef']>;

/**
 * The data every CI report (JUnit, SARIF, GitHub annotations, table) is written from: one entry per
 * workload with its decision and findings, plus findings about the run as a whole (the functionConfig).
 * Built from a run's KRM results and the inputs' text (for line and column); pure.
 */

/** Where a finding points: the file as the user named it, 1-based line and column. */
export interface Location {
  file?: string;
  line?: number;
  column?: number;
}

/** A replacement that fixes a finding (SARIF `fixes`): the resource's whole text, replaced. */
export interface Fix {
  description: string;
  span: ResourceSpan;
  /** The new text of the span. */
  text: string;
}

/** One finding: a rule (a reason code), a level, whether it fails the run, and where it points. */
export interface Finding {
  /** Stable rule id: a decision reason (`host-network`), a check rule (`not-injected`), or an error class. */
  rule: string;
  level: 'error' | 'warning' | 'note';
  /** True when this finding fails the run (exit 1). */
  fails: boolean;
  message: string;
  field?: string;
  location: Location;
  fix?: Fix;
}

/** A workload's identity and outcome. */
export interface WorkloadReport {
  apiVersion: string;
  kind: string;
  name: string;
  /** `metadata.namespace` as written (absent: the default namespace applied). */
  namespace?: string;
  /** `injected`, `skipped`, `error`, or a check outcome (`not-injected`, `drift`, ...). */
  decision: string;
  /** The reason code of the decision (`policy-enabled`, ...), or the first error's rule. */
  reason: string;
  /** The mesh (`istio`). */
  mesh: string;
  location: Location;
  /** Every finding about this workload, the decision itself included (level `note` when it is fine). */
  findings: Finding[];
  /** The driver's tags of the workload (`meshinject.dev/<key>` of its outcome result, by short key: Istio's `dataplane`); absent when none. */
  tags?: Record<string, string>;
}

/** A whole report. */
export interface Report {
  /** `inject` or `check`. */
  command: string;
  toolVersion: string;
  workloads: WorkloadReport[];
  /** Findings not about one workload (functionConfig problems and warnings). */
  general: Finding[];
  /** What the driver's reason codes mean (`MeshDriver.reasonInfo`), when the report was given them. */
  reasons?: Readonly<Record<string, { description: string }>>;
}

/**
 * Rule id of a result: its decision reason, else its error rule (`meshinject.dev/error`, src/results/errors.ts
 * `ERROR_RULE`), else the class of what it is about (`invalid-workload`, `invalid-config`, `*-warning`).
 */
function ruleOf(r: KrmResult): string {
  const reason = r.tags?.['meshinject.dev/reason'] ?? r.tags?.[ERROR_TAG];
  if (reason) return reason;
  if (!r.resourceRef) return r.severity === 'error' ? 'invalid-config' : 'config-warning';
  return r.severity === 'error' ? 'invalid-workload' : 'workload-warning';
}

function levelOf(r: KrmResult): Finding['level'] {
  return r.severity === 'info' ? 'note' : r.severity;
}

/** The key of the workload a result is about: its resource (`ref`, the result's `resourceRef`) and file. */
function keyOf(r: KrmResult, ref: ResourceRef): string {
  return JSON.stringify([
    ref.apiVersion,
    ref.kind,
    ref.namespace ?? '',
    ref.name,
    r.file?.path ?? '',
    r.file?.index ?? 0,
  ]);
}

/**
 * Builds a report from a run's results: results with a `resourceRef` are grouped per workload (in
 * order of first appearance), the others are general. Every error fails (a check's `--fail-on warning`
 * has already made warnings errors). `fixes` gives the new resource text for check findings fixed by injecting.
 *
 * @param results the run's KRM results
 * @param inputs the inputs as read by the CLI (for file, line and column)
 * @param opts `mesh` for the table, `command` and version for the report header
 */
export function buildReport(
  results: readonly KrmResult[],
  inputs: readonly LocatedInput[],
  opts: {
    mesh: string;
    command: string;
    toolVersion: string;
    fixes?: ReadonlyMap<KrmResult, string>;
    reasons?: Report['reasons'];
  },
): Report {
  const workloads = new Map<string, WorkloadReport>();
  const general: Finding[] = [];
  for (const r of results) {
    const ref = r.resourceRef;
    const pos = ref ? locateResult(inputs, r) : undefined;
    const finding = findingOf(r, pos, opts.fixes?.get(r));
    if (!ref) {
      general.push(finding);
      continue;
    }
    const key = keyOf(r, ref);
    let w = workloads.get(key);
    if (!w) {
      w = workloadOf(r, ref, inputs, pos, finding, opts.mesh);
      workloads.set(key, w);
    }
    applyOutcome(w, r, finding);
    const tags = r.tags?.['meshinject.dev/outcome'] && !r.tags['meshinject.dev/check'] ? driverTagsOf(r.tags) : {};
    if (Object.keys(tags).length > 0) w.tags = tags;
    w.findings.push(finding);
  }
  return {
    command: opts.command,
    toolVersion: opts.toolVersion,
    workloads: [...workloads.values()],
    general,
    ...(opts.reasons ? { reasons: opts.reasons } : {}),
  };
}

/** A result as a finding: its rule, level, location (`pos` from the CLI's inputs) and the fix text, if any. */
function findingOf(r: KrmResult, pos: ReturnType<typeof locateResult>, fix: string | undefined): Finding {
  const file = pos?.file ?? r.file?.path;
  const location: Location = {
    ...(file ? { file } : {}),
    ...(pos ? { line: pos.line, column: pos.column } : {}),
  };
  const finding: Finding = {
    rule: ruleOf(r),
    level: levelOf(r),
    fails: r.severity === 'error',
    message: r.message,
    ...(r.field?.path ? { field: r.field.path } : {}),
    location,
  };
  if (fix !== undefined && pos)
    finding.fix = {
      description: 'inject the sidecar (the resource as meshinject writes it)',
      span: pos.span,
      text: fix,
    };
  return finding;
}

/** The report entry of the workload a result is about, first seen with `finding` (located at the resource itself). */
function workloadOf(
  r: KrmResult,
  ref: ResourceRef,
  inputs: readonly LocatedInput[],
  pos: ReturnType<typeof locateResult>,
  finding: Finding,
  mesh: string,
): WorkloadReport {
  const resourcePos = r.field?.path ? locateResult(inputs, { ...r, field: { path: '' } }) : pos;
  const file = finding.location.file;
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    ...(ref.namespace ? { namespace: ref.namespace } : {}),
    decision: 'error',
    reason: finding.rule,
    mesh,
    location: {
      ...(file ? { file } : {}),
      ...(resourcePos ? { line: resourcePos.line, column: resourcePos.column } : {}),
    },
    findings: [],
  };
}

/**
 * The workload's decision and reason after one more result: a check finding is the workload's outcome
 * (the decision before it is what the config says); an outcome replaces a provisional `error`; an error
 * result makes it `error`.
 */
function applyOutcome(w: WorkloadReport, r: KrmResult, finding: Finding): void {
  const outcome = r.tags?.['meshinject.dev/outcome'];
  if (outcome && r.tags?.['meshinject.dev/check']) {
    w.decision = outcome;
    w.reason = finding.rule;
  } else if (outcome && w.decision === 'error' && !w.findings.some((f) => f.level === 'error')) {
    w.decision = outcome;
    w.reason = finding.rule;
  }
  if (r.severity === 'error' && !r.tags?.['meshinject.dev/check']) {
    w.decision = 'error';
    w.reason = finding.rule;
  }
}

/** Counts for summaries: workloads per decision, failing findings. */
export function reportTotals(report: Report): { workloads: number; byDecision: Map<string, number>; failing: number } {
  const byDecision = new Map<string, number>();
  for (const w of report.workloads) byDecision.set(w.decision, (byDecision.get(w.decision) ?? 0) + 1);
  const failing = [...report.general, ...report.workloads.flatMap((w) => w.findings)].filter((f) => f.fails).length;
  return { workloads: report.workloads.length, byDecision, failing };
}
