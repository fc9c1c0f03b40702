/**
 * Shared data shapes of meshinject. Everything here is plain JSON data: the core never holds class
 * instances of Kubernetes objects, only structural views of the few fields it reads.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** `metav1.LabelSelector`: `matchLabels` AND every `matchExpressions` requirement. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }>;
}

/** What meshinject knows about a namespace: from a `Namespace` object in the list or from `spec.namespaces`. */
export interface NamespaceInfo {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** `metadata` of a pod template, as far as injection reads and writes it. */
export interface PodMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: JsonObject[];
  [key: string]: Json | undefined;
}

/** A pod template (`PodTemplateSpec`): `metadata` + `spec` (a `PodSpec`, kept as JSON). */
export interface PodTemplate {
  metadata: PodMeta;
  spec: JsonObject;
}

/** Identity of a resource for results: `resourceRef` plus where it came from. */
export interface ResourceId {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** `internal.config.kubernetes.io/path` (or the legacy form), or the input file for the CLI. */
  filePath?: string;
  /** `internal.config.kubernetes.io/index` (or the legacy form), or the document index in the stream. */
  fileIndex?: number;
}

/**
 * Why a workload was or was not injected: a stable, machine-readable code. The shared rules have fixed codes;
 * each driver adds its own for its opt-in/opt-out rules (Istio `label-true`, Linkerd `namespace-annotation-enabled`, ...).
 */
export type SharedDecisionReason =
  | 'host-network'
  | 'ignored-namespace'
  | 'namespace-not-selected'
  | 'never-inject-selector'
  | 'always-inject-selector'
  | 'policy-enabled'
  | 'policy-disabled';

/** A shared reason code or a driver's own (kebab-case). */
export type DecisionReason = SharedDecisionReason | (string & {});

/**
 * The outcome of the injection decision for one workload. `warnings` carries non-fatal findings (e.g. a
 * `sidecar.istio.io/inject` value Istio >= 1.27 treats as unset).
 */
export interface Decision {
  inject: boolean;
  reason: DecisionReason;
  /** Human sentence for results, e.g. `pod annotation sidecar.istio.io/inject is "false"`. */
  detail: string;
  /** The configured intent: true when skipping is what the user asked for (info, not warning). */
  intended: boolean;
  warnings: string[];
  /**
   * The namespace, when a rule that reads its labels decided while they were unknown (it is neither a
   * `Namespace` object in the input nor in `spec.namespaces`): the run reports it once.
   */
  unknownNamespace?: string;
  /** Every rule in order, what it saw, and which one decided (`meshinject explain`). */
  trace: DecisionStep[];
}

/** One rule of a decision trace: its stable name, the value it saw, and whether it decided. */
export interface DecisionStep {
  /** e.g. `host-network`, `namespace-selector`, `istio.inject-label`, `policy`. */
  rule: string;
  /** What the rule looked at, e.g. `spec.hostNetwork is false`. */
  saw: string;
  /** `pass`: did not decide; `decided`: this rule decided (the last step); `note`: information only. */
  outcome: 'pass' | 'decided' | 'note';
}

/** KRM result severity (functions spec). */
export type Severity = 'error' | 'warning' | 'info';

/** One KRM function result (`ResourceList.results[]`). */
export interface KrmResult {
  message: string;
  severity: Severity;
  resourceRef?: { apiVersion: string; kind: string; name: string; namespace?: string };
  field?: { path: string; currentValue?: Json; proposedValue?: Json };
  file?: { path: string; index?: number };
  tags?: Record<string, string>;
}
