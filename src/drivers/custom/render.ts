/**
 * Rendering of the custom driver's templates: the template data (the documented data model), the shared
 * Handlebars engine (src/render/: strict, no HTML escaping, prototype access off, pure helpers that read
 * neither the environment nor files), and the check that a fragment only adds what its status can record.
 */
import type { Json, JsonObject, NamespaceInfo, PodTemplate } from '../../model.ts';
import type { WorkloadRef } from '../../contract/driver.ts';
import { renderTemplate, renderTemplatePlanned } from '../../render/engine.ts';
import { createPlanner, planSources, type PlanSource } from '../../render/plans.ts';
import { parseFragment } from '../../yaml/read/fragment-reader.ts';
import { InjectError, MeshInjectError } from '../../results/errors.ts';
import type { CustomTemplate } from './config.ts';
import { isJsonObject } from '../../json.ts';

/**
 * The data every custom template renders with. Top-level names:
 * - `pod`: the pod template as in the input without a previous custom injection: `{metadata: {name?, labels,
 *   annotations, ...}, spec}` (`labels` and `annotations` always maps): `pod.metadata.labels.app`, `pod.spec.containers`;
 * - `workload`: `{apiVersion, kind, name, namespace}` of the resource that owns the pod template;
 * - `namespace`: `{name, labels, annotations}` (maps empty when the namespace is unknown);
 * - `values`: `spec.custom.values`.
 */
export interface CustomTemplateData {
  pod: {
    metadata: JsonObject & { labels: Record<string, string>; annotations: Record<string, string> };
    spec: JsonObject;
  };
  workload: { apiVersion: string; kind: string; name: string; namespace: string };
  namespace: NamespaceInfo;
  values: JsonObject;
}

/**
 * The templates' copy of each `spec.custom.values`: one per values object, so that plans key it by identity.
 * Module state by design: a memo keyed by a config's values object, which is never changed after loading: the copy is the same for every call.
 */
const valuesCopies = new WeakMap<JsonObject, JsonObject>();

/** Builds {@link CustomTemplateData} (copies: a template cannot change the pod). */
export function customTemplateData(
  pod: PodTemplate,
  workload: WorkloadRef,
  namespace: NamespaceInfo | undefined,
  values: JsonObject,
): CustomTemplateData {
  let valuesCopy = valuesCopies.get(values);
  if (!valuesCopy) {
    valuesCopy = structuredClone(values);
    valuesCopies.set(values, valuesCopy);
  }
  const meta = structuredClone(pod.metadata) as JsonObject;
  return {
    pod: {
      metadata: {
        ...meta,
        labels: { ...(pod.metadata.labels ?? {}) },
        annotations: { ...(pod.metadata.annotations ?? {}) },
      },
      spec: structuredClone(pod.spec),
    },
    workload: {
      apiVersion: workload.apiVersion,
      kind: workload.kind,
      name: workload.name,
      namespace: workload.namespace,
    },
    namespace: {
      name: workload.namespace,
      labels: { ...(namespace?.labels ?? {}) },
      annotations: { ...(namespace?.annotations ?? {}) },
    },
    values: valuesCopy,
  };
}

/** What a custom fragment may hold: what the status annotation records and uninject removes. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  metadata: ['labels', 'annotations'],
  spec: ['containers', 'initContainers', 'volumes', 'imagePullSecrets'],
};

/**
 * The user's words for a Handlebars error: `line L, column C: <reason>` from a strict-mode miss
 * (`"app" not defined in [object Object] - 2:14`) or a parse error (`Parse error on line 3: ...`).
 */
function withLine(reason: string): string {
  const miss = / - (\d+):(\d+)$/.exec(reason);
  if (miss)
    return `line ${miss[1]}, column ${Number(miss[2]) + 1}: ${reason.slice(0, miss.index).replace(/ in (\[object Object\]|undefined)$/, '')}`;
  const parse = /^Parse error on line (\d+):\n(?:.*\n){2}(.*)$/.exec(reason);
  if (parse) return `line ${parse[1]}: syntax error: ${parse[2]}`;
  return reason.split('\n')[0] ?? '';
}

function bad(name: string, t: CustomTemplate, what: string): InjectError {
  return new InjectError(`template "${name}" (${t.from}) ${what}`, { code: 'TEMPLATE' });
}

/**
 * Renders one template and returns its pod fragment `{metadata?: {labels?, annotations?}, spec?: {containers?,
 * initContainers?, volumes?, imagePullSecrets?}}`, parsed with YAML 1.1 rules as kubectl reads manifests.
 * @throws InjectError (TEMPLATE) naming the template, where it came from and the line, for a syntax error, a
 *   missing field (strict mode), output that is not a YAML mapping, or a field outside the allowed ones
 */
export function renderCustomTemplate(name: string, t: CustomTemplate, data: CustomTemplateData): JsonObject {
  const { planName, source } = customSources(t, name);
  // The planner takes any record of data; an interface has no index signature, so it is cast (src/render/plans.ts).
  const parsed = planner.render(planName, source, data as unknown as Record<string, unknown>);
  if (parsed === null || parsed === undefined) return {};
  if (!isJsonObject(parsed))
    throw bad(name, t, 'did not render a YAML mapping (a pod fragment with metadata and spec)');
  checkFragment(name, t, parsed);
  return parsed;
}

/**
 * Sidecar plans of custom templates (`src/render/plans.ts`): the pod, the workload and the namespace may hold
 * placeholders; `values` is one object per run (`customTemplateData`).
 */
const planner = createPlanner({ slotRoots: ['pod', 'workload', 'namespace'], identityRoots: ['values'] });
const customSources = planSources<CustomTemplate>((t, name) => sourceOf(name, t));

/** One custom template as a plan source: rendered with the shared engine, parsed with YAML 1.1 rules. */
function sourceOf(name: string, t: CustomTemplate): PlanSource {
  const parse = (text: string): Json => {
    try {
      return parseFragment(text);
    } catch (e) {
      throw bad(name, t, `rendered invalid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  };
  return {
    render: (data) => {
      let text: string;
      try {
        text = renderTemplate(`custom/${name}`, t.source, data);
      } catch (e) {
        if (!(e instanceof MeshInjectError)) throw e;
        throw bad(name, t, `failed at ${withLine(e.message.replace(/^template "[^"]*" failed: /, ''))}`);
      }
      return parse(text);
    },
    renderPlanned: (data) => parse(renderTemplatePlanned(`custom/${name}`, t.source, data)),
  };
}

/**
 * The shape rules of a custom fragment: only the fields its status annotation records.
 * @throws InjectError (TEMPLATE) naming the first field outside them or of the wrong shape
 */
function checkFragment(name: string, t: CustomTemplate, parsed: JsonObject): void {
  for (const [top, v] of Object.entries(parsed)) {
    const allowed = Object.hasOwn(ALLOWED, top) ? ALLOWED[top] : undefined;
    if (!allowed)
      throw bad(
        name,
        t,
        `renders ${top}: a custom template may add only metadata.labels, metadata.annotations, spec.containers, spec.initContainers, spec.volumes and spec.imagePullSecrets (what its status annotation records and uninject removes)`,
      );
    if (v === null) continue;
    if (!isJsonObject(v)) throw bad(name, t, `renders ${top} that is not a mapping`);
    for (const [k, x] of Object.entries(v)) {
      if (!allowed.includes(k))
        throw bad(
          name,
          t,
          `renders ${top}.${k}: a custom template may add only metadata.labels, metadata.annotations, spec.containers, spec.initContainers, spec.volumes and spec.imagePullSecrets (what its status annotation records and uninject removes)`,
        );
      if (top === 'metadata') {
        if (x !== null && (!isJsonObject(x) || Object.values(x).some((s) => typeof s !== 'string')))
          throw bad(name, t, `renders ${top}.${k} that is not a map of strings (quote the values)`);
      } else if (
        x !== null &&
        (!Array.isArray(x) || x.some((e) => !isJsonObject(e) || typeof e.name !== 'string' || e.name === ''))
      ) {
        throw bad(name, t, `renders ${top}.${k} that is not a list of entries with a name`);
      }
    }
  }
}
