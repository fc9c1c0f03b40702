/**
 * The custom driver's injection: strip a previous custom injection (its status annotation), render the pod's
 * templates, merge them into one fragment, check that the fragment only adds, strategic-merge it into the pod
 * and record what it added in `meshinject.dev/custom-status`. Re-injection therefore strips first (a second
 * run is a no-op) and uninject removes exactly what was added.
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import { quoteData } from '../../results/quote.ts';
import type { InjectRequest, Inventory } from '../../contract/driver.ts';
import { strategicMerge } from '../../patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../patch/patch-schema.ts';
import { removeInventory } from '../../patch/uninject.ts';
import { InjectError } from '../../results/errors.ts';
import { DEFAULT_TEMPLATE, type CustomSettings } from './config.ts';
import { customTemplateData, renderCustomTemplate } from './render.ts';
import { checkCustomStatus } from './uninject.ts';
import { cloneJson, isJsonObject } from '../../json.ts';
import { defined } from '../../checked.ts';

/** Pod annotation recording what the custom injection added (JSON, see {@link CustomStatus}). */
export const CUSTOM_STATUS_ANNOTATION = 'meshinject.dev/custom-status';
/** Pod annotation choosing the templates (comma list); default `sidecar`. */
export const TEMPLATES_ANNOTATION = 'meshinject.dev/templates';

/** The status record: the templates run and the names and keys they added. */
export interface CustomStatus {
  templates: string[];
  containers: string[];
  initContainers: string[];
  volumes: string[];
  imagePullSecrets: string[];
  labels: string[];
  annotations: string[];
}

const LISTS = ['containers', 'initContainers', 'volumes', 'imagePullSecrets'] as const;

function names(list: Json | undefined): string[] {
  return Array.isArray(list) ? list.filter(isJsonObject).map((e) => String(e.name)) : [];
}

const statusField = `metadata.annotations[${CUSTOM_STATUS_ANNOTATION}]`;

/**
 * Reads the status annotation: undefined when absent.
 * @throws InjectError naming the annotation when it is not the JSON this driver writes (never ignored: the
 *   pod would be injected twice)
 */
export function parseCustomStatus(pod: PodTemplate): CustomStatus | undefined {
  const raw = pod.metadata.annotations?.[CUSTOM_STATUS_ANNOTATION];
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new InjectError(`${CUSTOM_STATUS_ANNOTATION} is not valid JSON: ${quoteData(raw)}`, { field: statusField });
  }
  const o = (isJsonObject(v as Json) ? v : {}) as Record<string, unknown>;
  const keys = ['templates', ...LISTS, 'labels', 'annotations'] as const;
  const out = {} as CustomStatus;
  for (const k of keys) {
    const given = o[k]; // fixed key: one of the names above
    const list = given ?? [];
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
      throw new InjectError(`${CUSTOM_STATUS_ANNOTATION}: "${k}" must be a list of names; got ${quoteData(given)}`, {
        field: statusField,
      });
    }
    (out as Record<typeof k, string[]>)[k] = list; // fixed key: one of the names above
  }
  return out;
}

/** The inventory of a custom status (see `MeshDriver.inventory`). */
export function customInventory(pod: PodTemplate): Inventory | undefined {
  const s = parseCustomStatus(pod);
  if (!s) return undefined;
  return {
    statusAnnotation: CUSTOM_STATUS_ANNOTATION,
    containers: s.containers,
    initContainers: s.initContainers,
    volumes: s.volumes,
    imagePullSecrets: s.imagePullSecrets,
    annotations: s.annotations,
    labels: s.labels,
  };
}

/**
 * The templates a pod asks for: `meshinject.dev/templates` split on `,` (blanks trimmed), else `sidecar`.
 * @throws InjectError naming the annotation for an unknown or empty name, listing the known templates
 */
export function selectedTemplates(pod: PodTemplate, settings: CustomSettings): string[] {
  const value = pod.metadata.annotations?.[TEMPLATES_ANNOTATION];
  const wanted = value === undefined ? [DEFAULT_TEMPLATE] : value.split(',').map((s) => s.trim());
  const known = [...settings.templates.keys()];
  for (const n of wanted) {
    if (!settings.templates.has(n)) {
      const where =
        value === undefined
          ? `no ${TEMPLATES_ANNOTATION} annotation, so the default template "${DEFAULT_TEMPLATE}" is used, but`
          : `${TEMPLATES_ANNOTATION} names template "${n}", but`;
      throw new InjectError(`${where} it is not defined; known templates: ${known.join(', ') || '(none)'}`, {
        field: `metadata.annotations[${TEMPLATES_ANNOTATION}]`,
        code: 'BAD_ANNOTATION',
      });
    }
  }
  return wanted;
}

/**
 * Injects the selected templates into one pod template (the request's pod is not mutated). The fragments are
 * merged in order into one (a later template may patch an earlier one's container), which must only add:
 * a container, init container, volume or image pull secret whose name the pod already uses is an error, and
 * so is a label or annotation the pod already has with another value (one with the same value is left as the
 * user's and not recorded). Added containers, volumes and image pull secrets follow the pod's own, in template
 * order; added init containers precede the pod's own.
 * @throws InjectError for an unknown template, a template failure, or a fragment that would change the user's pod
 */
export function injectCustomPod(req: InjectRequest<CustomSettings>): { pod: PodTemplate; templates: string[] } {
  const previous = customInventory(req.pod);
  const pod = previous ? removeInventory(req.pod, previous) : cloneJson(req.pod);
  if (previous) checkCustomStatus(pod, defined(parseCustomStatus(req.pod), 'the status of an injected pod'), req);
  const templates = selectedTemplates(pod, req.settings);
  const data = customTemplateData(pod, req.workload, req.namespace, req.settings.values);
  let fragment: JsonObject = {};
  const order: Record<(typeof LISTS)[number], string[]> = {
    containers: [],
    initContainers: [],
    volumes: [],
    imagePullSecrets: [],
  };
  for (const name of templates) {
    const rendered = renderCustomTemplate(name, defined(req.settings.templates.get(name), `template ${name}`), data);
    const spec = isJsonObject(rendered.spec) ? rendered.spec : {};
    for (const list of LISTS) for (const n of names(spec[list])) if (!order[list].includes(n)) order[list].push(n);
    fragment = strategicMerge(fragment, rendered, POD_SCHEMA);
  }
  const meta = isJsonObject(fragment.metadata) ? fragment.metadata : {};
  const used = new Set([...names(pod.spec.containers), ...names(pod.spec.initContainers)]);
  const status: CustomStatus = {
    templates,
    containers: [],
    initContainers: [],
    volumes: [],
    imagePullSecrets: [],
    labels: [],
    annotations: [],
  };
  for (const list of LISTS) {
    for (const n of order[list]) {
      const taken =
        list === 'containers' || list === 'initContainers' ? used.has(n) : names(pod.spec[list]).includes(n);
      if (taken)
        throw new InjectError(
          `templates ${templates.join(', ')} add ${list} entry "${n}", but the pod already has one of that name: custom templates only add (rename it in the template or the pod)`,
          { field: `spec.${list}`, code: 'TEMPLATE' },
        );
      status[list].push(n);
    }
  }
  const out: PodTemplate = cloneJson(pod);
  for (const kind of ['labels', 'annotations'] as const) {
    const add = isJsonObject(meta[kind]) ? (meta[kind] as Record<string, string>) : {};
    const have = out.metadata[kind] ?? {};
    for (const [k, v] of Object.entries(add)) {
      if (!Object.hasOwn(have, k)) {
        status[kind].push(k);
        continue;
      }
      if (have[k] !== v)
        throw new InjectError(
          `templates ${templates.join(', ')} set ${kind.slice(0, -1)} ${k} to ${quoteData(v)}, but the pod has ${quoteData(have[k])}: custom templates only add`,
          { field: `metadata.${kind}[${k}]`, code: 'TEMPLATE' },
        );
    }
  }
  const merged = strategicMerge({ metadata: out.metadata as JsonObject, spec: out.spec }, fragment, POD_SCHEMA);
  const result: PodTemplate = { metadata: merged.metadata as PodTemplate['metadata'], spec: merged.spec as JsonObject };
  // The pod's own entries keep their order; added ones follow in template order, so the app stays the first
  // (kubectl's default) container. Added init containers come first: they prepare the pod for the app.
  for (const list of LISTS) {
    const entries = Array.isArray(result.spec[list]) ? result.spec[list].filter(isJsonObject) : [];
    if (status[list].length === 0) continue;
    const own = entries.filter((e) => !status[list].includes(String(e.name)));
    const added = status[list].map((n) =>
      defined(
        entries.find((e) => e.name === n),
        `added ${list} entry ${n}`,
      ),
    );
    result.spec[list] = list === 'initContainers' ? [...added, ...own] : [...own, ...added];
  }
  result.metadata.annotations = {
    ...(result.metadata.annotations ?? {}),
    [CUSTOM_STATUS_ANNOTATION]: JSON.stringify(status),
  };
  return { pod: result, templates };
}
