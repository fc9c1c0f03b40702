import type { Json, JsonObject, PodMeta } from '../../model.ts';
import { createTemplateEngine } from '../../render/engine.ts';
import { parseFragment } from '../../yaml/read/fragment-reader.ts';
import { InjectError } from '../../results/errors.ts';
import { TEMPLATES } from '../templates.gen.ts';
import { PRECOMPILED } from '../templates-precompiled.gen.js';
import { ISTIO_PLAN_RULES, ISTIO_TEMPLATE_FUNCTIONS } from './template-functions.ts';
import { plannedPodPorts, type IstioTemplateData } from './template-data.ts';
import { isJsonObject, owned } from '../../json.ts';
import { createPlanner, type PlanSource } from '../../render/plans.ts';
import { defined } from '../../checked.ts';

/** The Istio engine: shared helpers plus Istio's own, with the built-in templates precompiled at build. */
const engine = createTemplateEngine(ISTIO_TEMPLATE_FUNCTIONS, PRECOMPILED, ISTIO_PLAN_RULES);

/**
 * Sidecar plans of the built-in templates (`src/render/plans.ts`): the workload's kind and API version
 * (`TypeMeta`: the built-in templates do not read it, so one plan serves every kind of a pod shape), names,
 * labels, annotations and the pod spec's strings and port numbers may be placeholders; `PodPorts` is rebuilt
 * from the placeholder `Spec`; `Values` and `MeshConfig` are the same objects for a whole run.
 */
const planner = createPlanner({
  slotRoots: ['TypeMeta', 'DeploymentMeta', 'ObjectMeta', 'Spec', 'AppContainers', 'WorkloadName', 'Owner'],
  identityRoots: ['Values', 'MeshConfig'],
  derived: { PodPorts: plannedPodPorts },
});

/** The built-in template `name` as a plan source: rendered, then parsed as `fragmentFromYaml` does. */
function builtinSource(name: string, source: string): PlanSource {
  const label = `istio/${name}`;
  return {
    render: (data) => fragmentFromYaml(label, engine.render(label, source, data)) as Json,
    renderPlanned: (data) => fragmentFromYaml(label, engine.renderPlanned(label, source, data)) as Json,
  };
}

/** Module state by design: a memo of the plan source of each built-in template (its name names one fixed source); its plans live in the run. */
const builtinSources = new Map<string, PlanSource>();

/** Pod annotation choosing the templates to run (comma list). */
export const TEMPLATES_ANNOTATION = 'inject.istio.io/templates';

/**
 * Names of the built-in Istio injection templates, in Istio's registration order (the chart's
 * `files/` templates that meshinject ports; waypoint, kube-gateway and agentgateway are not ported).
 */
export const ISTIO_TEMPLATE_NAMES: readonly string[] = ['sidecar', 'gateway', 'grpc-simple', 'grpc-agent'];

/**
 * The templates to run for a pod, in order: the `inject.istio.io/templates` annotation split on `,`
 * with blanks trimmed (duplicates kept, as Istio runs `sidecar,sidecar` twice), else `["sidecar"]`
 * (Istio `selectTemplates`, pkg/kube/inject/webhook.go, with kube-inject's default template).
 */
export function selectedTemplates(annotations: Record<string, string> | null | undefined): string[] {
  const value = annotations?.[TEMPLATES_ANNOTATION];
  if (value === undefined) return ['sidecar'];
  return value.split(',').map((s) => s.trim());
}

/** A rendered template: the pod metadata and spec fragments to strategic-merge into the pod. */
export interface RenderedFragment {
  metadata?: PodMeta;
  spec?: JsonObject;
}

const PROBE_INT_FIELDS = [
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
];

/**
 * Go-typed round-trip of a container as Istio's merge produces it (`corev1.Container` with
 * `omitempty`): an env `value: ""` and zero-valued probe counters disappear, an empty
 * `imagePullPolicy` is dropped. Everything else is kept as rendered.
 */
function normalizeContainer(c: JsonObject): void {
  // Changed as the pod's own copies (`owned`): the container may hold a planned render's shared parts.
  if (Array.isArray(c.env) && c.env.some(isEmptyEnvValue)) {
    const env = defined(owned<Json[]>(c, 'env'), 'the env list just seen');
    for (let i = 0; i < env.length; i++)
      if (isEmptyEnvValue(env[i])) delete defined(owned<JsonObject>(env, i), 'an env entry just seen').value;
  }
  for (const probe of PROBES) {
    if (!hasZeroCounter(c[probe])) continue;
    const p = defined(owned<JsonObject>(c, probe), 'a probe just seen');
    for (const f of PROBE_INT_FIELDS) if (p[f] === 0) delete p[f];
  }
  if (c.imagePullPolicy === '') delete c.imagePullPolicy;
}

const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'];

function isEmptyEnvValue(e: Json | undefined): boolean {
  return isJsonObject(e) && e.value === '';
}

function hasZeroCounter(p: Json | undefined): boolean {
  return isJsonObject(p) && PROBE_INT_FIELDS.some((f) => p[f] === 0);
}

/** Whether `normalizeContainer` would change `c`. */
function needsNormalizing(c: JsonObject): boolean {
  return (
    (Array.isArray(c.env) && c.env.some(isEmptyEnvValue)) ||
    PROBES.some((k) => hasZeroCounter(c[k])) ||
    c.imagePullPolicy === ''
  );
}

/**
 * The Go-typed round-trip artifacts of a (merged) pod spec: empty env values, zero probe counters, empty
 * pull policy. In place (`spec` must be writable; shared parts of a planned render are copied first).
 */
export function normalizeFragment(spec: JsonObject): void {
  for (const key of ['initContainers', 'containers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      if (!isJsonObject(c) || !needsNormalizing(c)) continue;
      const items = defined(owned<Json[]>(spec, key), 'the container list just seen');
      normalizeContainer(defined(owned<JsonObject>(items, i), 'a container just seen'));
    }
  }
}

/**
 * Renders one Istio template (`sidecar`, `gateway`, `grpc-simple`, `grpc-agent`) with `data` and
 * parses the YAML with YAML 1.1 rules (as Go's sigs.k8s.io/yaml does), returning the pod fragment as
 * JSON. Empty env values and zero probe counters are dropped as Go's typed round-trip drops them.
 * @throws InjectError `requested template "x" not found; have sidecar, gateway, ...` for an unknown name;
 *   InjectError (code TEMPLATE) when rendering fails or the output is not a YAML mapping.
 */
export function renderIstioTemplate(name: string, data: IstioTemplateData): RenderedFragment {
  const source = ISTIO_TEMPLATE_NAMES.includes(name) ? TEMPLATES[`istio/${name}`] : undefined;
  if (source === undefined) {
    throw new InjectError(`requested template "${name}" not found; have ${ISTIO_TEMPLATE_NAMES.join(', ')}`, {
      code: 'TEMPLATE',
    });
  }
  let plannedSource = builtinSources.get(name);
  if (!plannedSource) {
    plannedSource = builtinSource(name, source);
    builtinSources.set(name, plannedSource);
  }
  // The planner takes any record of data; an interface has no index signature, so it is cast (src/render/plans.ts).
  return planner.render(name, plannedSource, data as unknown as Record<string, unknown>) as RenderedFragment;
}

/**
 * Parses a rendered template (YAML 1.1 rules, as Go's sigs.k8s.io/yaml) into the pod fragment, dropping
 * empty env values and zero probe counters as Go's typed round-trip does. `label` names the template in errors.
 * @throws InjectError (code TEMPLATE) when the text is not YAML or not a mapping.
 */
export function fragmentFromYaml(label: string, text: string, goTyped = false): RenderedFragment {
  let parsed: unknown;
  try {
    parsed = parseFragment(text);
  } catch (err) {
    throw new InjectError(`template "${label}" produced invalid YAML: ${(err as Error).message}`, { code: 'TEMPLATE' });
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isJsonObject(parsed))
    throw new InjectError(`template "${label}" did not produce a YAML mapping`, { code: 'TEMPLATE' });
  const out: RenderedFragment = {};
  if (isJsonObject(parsed.metadata)) out.metadata = parsed.metadata as PodMeta;
  if (isJsonObject(parsed.spec)) {
    // Go-template fragments are normalized after the merge (`normalizeGoTyped`), as Go's typed round-trip
    // applies to the merged pod: a zero in the template still overwrites an old value.
    if (goTyped) defaultResourceDivisors(parsed.spec);
    else normalizeFragment(parsed.spec);
    out.spec = parsed.spec;
  }
  return out;
}

/**
 * Go's typed round-trip of `corev1.ResourceFieldSelector`: `divisor` is a `resource.Quantity` value, so a
 * missing one is written as `"0"`. Applied to fragments of Go templates (the built-in ports write their own).
 */
function defaultResourceDivisors(spec: JsonObject): void {
  for (const key of ['initContainers', 'containers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (!isJsonObject(c) || !Array.isArray(c.env)) continue;
      for (const e of c.env) {
        const ref = isJsonObject(e) && isJsonObject(e.valueFrom) ? e.valueFrom.resourceFieldRef : undefined;
        if (isJsonObject(ref) && ref.divisor === undefined) ref.divisor = '0';
      }
    }
  }
}
