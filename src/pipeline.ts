import type { Config } from './config/types.ts';
import type { MeshDriver, WorkloadRef } from './drivers/driver.ts';
import type { Decision, Json, JsonObject, KrmResult, NamespaceInfo, PodTemplate, ResourceId } from './model.ts';
import type { ParsedSource, SourceItem } from './krm/source.ts';
import { MeshInjectError } from './results/errors.ts';
import { resourceResult } from './results/result.ts';
import { decide } from './selection/policy.ts';
import { lookupWorkloadKind } from './workloads/kinds.ts';
import { emitChanged } from './krm/emit.ts';
import { checkWorkload, getPodTemplate, holdsPodTemplate, isProblem, withAnnotation, withPodTemplate } from './workloads/pod-template.ts';

/** The annotation meshinject writes on every considered workload (switch off with `spec.resultAnnotations: false`). */
export const RESULT_ANNOTATION = 'meshinject.dev/injection';

/** What processing the resources produced: replaced resources by position, and one result per workload. */
export interface ProcessOutput {
  /** New source text of each changed resource, by `SourceItem.position`. */
  changed: Map<number, string>;
  results: KrmResult[];
}

function obj(v: Json | undefined): JsonObject | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
}

function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function stringMap(v: Json | undefined): Record<string, string> {
  const o = obj(v);
  const out: Record<string, string> = {};
  if (o) for (const [k, x] of Object.entries(o)) if (x !== null && typeof x !== 'object') out[k] = String(x);
  return out;
}

/**
 * The namespaces known to this run: `Namespace` objects in the list win over `spec.namespaces` entries of
 * the same name.
 */
export function collectNamespaces(items: readonly SourceItem[], config: Config): Map<string, NamespaceInfo> {
  const out = new Map<string, NamespaceInfo>();
  for (const n of config.namespaces) out.set(n.name, n);
  for (const it of items) {
    if (it.kind !== 'Namespace') continue;
    const v = obj(it.value);
    if (!v || v.kind !== 'Namespace' || str(v.apiVersion) !== 'v1') continue;
    const meta = obj(v.metadata);
    const name = str(meta?.name);
    if (!name) continue;
    out.set(name, { name, labels: stringMap(meta?.labels), annotations: stringMap(meta?.annotations) });
  }
  return out;
}

/**
 * Identity of a resource for results. The file comes from kpt/kustomize's
 * `internal.config.kubernetes.io/{path,index}` (or the legacy `config.kubernetes.io/*`), else, for a plain
 * YAML stream, from the input name and document position.
 */
export function resourceId(item: SourceItem, source: ParsedSource, inputName: string | undefined): ResourceId {
  const v = obj(item.value) ?? {};
  const meta = obj(v.metadata) ?? {};
  const ann = stringMap(meta.annotations);
  const id: ResourceId = {
    apiVersion: str(v.apiVersion) ?? '',
    kind: str(v.kind) ?? '',
    name: str(meta.name) ?? str(meta.generateName) ?? '',
  };
  const ns = str(meta.namespace);
  if (ns) id.namespace = ns;
  const path = ann['internal.config.kubernetes.io/path'] ?? ann['config.kubernetes.io/path'];
  const index = ann['internal.config.kubernetes.io/index'] ?? ann['config.kubernetes.io/index'];
  if (path !== undefined) {
    id.filePath = path;
    id.fileIndex = index !== undefined && /^\d+$/.test(index) ? Number(index) : 0;
  } else if (source.form === 'stream' && inputName !== undefined) {
    id.filePath = inputName;
    id.fileIndex = item.topPosition;
  }
  return id;
}

function describe(id: ResourceId): string {
  return `${id.kind} "${id.namespace ? `${id.namespace}/` : ''}${id.name}"`;
}

function isLocalConfig(v: JsonObject): boolean {
  const ann = stringMap(obj(v.metadata)?.annotations);
  return ann['config.kubernetes.io/local-config'] === 'true';
}

/**
 * Drops a processed resource's syntax tree and data: only its source range is needed to write the output,
 * and a large input then never holds every resource's syntax tree at once (peak memory).
 */
function release(item: SourceItem): void {
  (item as { node: unknown }).node = null;
  (item as { value: unknown }).value = null;
  delete item.listToken;
}

/** The annotation value meshinject writes for a decision: `injected (istio, revision default)` / `skipped (host-network)`. */
export function resultAnnotationValue(decision: Decision, summary?: string): string {
  return decision.inject ? `injected (${summary ?? ''})` : `skipped (${decision.reason})`;
}

/**
 * Decides and injects every workload of the input. Returns the new source text of each changed resource
 * (only the differing lines rewritten) and one result per workload; a workload whose injection fails gets
 * an error result and is left unchanged. No I/O; each resource's syntax tree and data (`item.node`,
 * `item.value`) are released once processed, so afterwards only the items' source ranges are valid.
 *
 * @param source the parsed input
 * @param config the validated config
 * @param driver the mesh driver for `config.mesh`
 * @param inputName the input's name for `file.path` of plain streams (CLI file argument)
 */
export function processItems(
  source: ParsedSource,
  config: Config,
  driver: MeshDriver,
  inputName?: string,
): ProcessOutput {
  const namespaces = collectNamespaces(source.items, config);
  const changed = new Map<number, string>();
  const results: KrmResult[] = [];
  const handle = (item: SourceItem): void => {
    const v = obj(item.value);
    if (!v || isLocalConfig(v)) return;
    const wk = lookupWorkloadKind(str(v.apiVersion) ?? '', str(v.kind) ?? '', config.workloadKinds);
    if (!wk || !holdsPodTemplate(item.value, wk)) return;
    const id = resourceId(item, source, inputName);
    const problems = checkWorkload(item.value, wk);
    if (problems.length > 0) {
      for (const p of problems) results.push(resourceResult('error', `${describe(id)}: ${p.message}`, id, { field: p.field }));
      return;
    }
    const pod = getPodTemplate(item.value, wk);
    if (isProblem(pod)) {
      results.push(resourceResult('error', `${describe(id)}: ${pod.message}`, id, { field: pod.field }));
      return;
    }
    const nsDeclared = str(obj(v.metadata)?.namespace);
    const namespace = nsDeclared ?? config.defaultNamespace;
    const decision = decide({
      podMeta: pod.metadata,
      hostNetwork: pod.spec.hostNetwork === true,
      namespace,
      ...(namespaces.has(namespace) ? { namespaceInfo: namespaces.get(namespace)! } : {}),
      config,
    });
    for (const w of decision.warnings) results.push(resourceResult('warning', w, id));
    const previous = decision.inject ? undefined : driver.previousInjection?.(pod);
    if (previous) {
      results.push(resourceResult('warning', `skipped, but the pod template is already injected (${previous}): meshinject does not remove sidecars; remove them from the source or re-enable injection`, id));
    }
    let next: PodTemplate | undefined;
    let summary: string | undefined;
    if (decision.inject) {
      const workload: WorkloadRef = {
        apiVersion: id.apiVersion,
        kind: id.kind,
        name: str(obj(v.metadata)?.name) ?? '',
        namespace,
        namespaceDefaulted: nsDeclared === undefined,
      };
      try {
        const res = driver.inject({
          pod,
          workload,
          ...(namespaces.has(namespace) ? { namespace: namespaces.get(namespace)! } : {}),
          config,
        });
        next = res.pod;
        summary = res.summary;
        for (const w of res.warnings) results.push(resourceResult('warning', w, id));
      } catch (e) {
        if (!(e instanceof MeshInjectError)) throw e;
        results.push(resourceResult('error', `${describe(id)}: ${e.message}`, id, e.field ? { field: e.field } : {}));
        return;
      }
    }
    let desired: Json = next ? withPodTemplate(item.value, wk, next) : item.value;
    if (config.resultAnnotations) {
      desired = withAnnotation(desired, RESULT_ANNOTATION, resultAnnotationValue(decision, summary));
    }
    const text = desired === item.value ? undefined : emitChanged(item, source, desired);
    if (text !== undefined) changed.set(item.position, text);
    const outcome = decision.inject ? 'injected' : 'skipped';
    const severity = decision.inject || decision.intended ? 'info' : 'warning';
    const message = decision.inject
      ? `injected (${summary}): ${decision.detail}`
      : `skipped (${decision.reason}): ${decision.detail}`;
    results.push(
      resourceResult(severity, message, id, {
        tags: { 'meshinject.dev/outcome': outcome, 'meshinject.dev/reason': decision.reason },
      }),
    );
  };
  for (const item of source.items) {
    handle(item);
    release(item);
  }
  return { changed, results };
}
