import { cloneJson, getIn, isJsonObject, setOwn } from '../json.ts';
import type { Json, JsonObject, PodMeta, PodTemplate } from '../model.ts';
import type { WorkloadKind } from './kinds.ts';

/** Where a kind keeps the pod metadata and pod spec. */
export function podPaths(wk: WorkloadKind): { meta: readonly string[]; spec: readonly string[] } {
  return {
    meta: wk.metaPath ?? [...wk.templatePath, 'metadata'],
    spec: [...wk.templatePath, 'spec'],
  };
}

/** A problem reading the pod template: the KRM field path and what is wrong. */
export interface PodTemplateProblem {
  field: string;
  message: string;
}

function typeName(v: Json | undefined): string {
  return v === null
    ? 'null'
    : Array.isArray(v)
      ? 'a list'
      : typeof v === 'object'
        ? 'a mapping'
        : `${typeof v} ${JSON.stringify(v)}`;
}

/** Problems of a `map[string]string` field (labels, annotations): not a mapping, or a non-string value. */
function checkStringMap(v: Json | undefined, field: string, out: PodTemplateProblem[]): void {
  if (v === undefined || v === null) return;
  if (!isJsonObject(v)) {
    out.push({ field, message: `${field} must be a mapping of strings; got ${typeName(v)}` });
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string')
      out.push({ field: `${field}[${k}]`, message: `${field}[${k}] must be a string; got ${typeName(x)} (quote it)` });
  }
}

/** Problems of a list of named objects (containers, volumes): not a list, an entry that is not a mapping or has no name. */
function checkNamedList(v: Json | undefined, field: string, out: PodTemplateProblem[], eachContainer: boolean): void {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) {
    out.push({ field, message: `${field} must be a list; got ${typeName(v)}` });
    return;
  }
  for (const [i, e] of v.entries()) {
    const at = `${field}[${i}]`;
    if (!isJsonObject(e)) {
      out.push({ field: at, message: `${at} must be a mapping; got ${typeName(e)}` });
      continue;
    }
    if (typeof e.name !== 'string')
      out.push({ field: `${at}.name`, message: `${at}.name must be a string; got ${typeName(e.name)}` });
    if (!eachContainer || e.ports === undefined || e.ports === null) continue;
    if (!Array.isArray(e.ports)) {
      out.push({ field: `${at}.ports`, message: `${at}.ports must be a list; got ${typeName(e.ports)}` });
      continue;
    }
    e.ports.forEach((p, j) => {
      const pat = `${at}.ports[${j}]`;
      if (!isJsonObject(p)) out.push({ field: pat, message: `${pat} must be a mapping; got ${typeName(p)}` });
      else if (typeof p.containerPort !== 'number')
        out.push({
          field: `${pat}.containerPort`,
          message: `${pat}.containerPort must be a number; got ${typeName(p.containerPort)}`,
        });
      else if (!Number.isInteger(p.containerPort) || p.containerPort < 1 || p.containerPort > 65535) {
        out.push({
          field: `${pat}.containerPort`,
          message: `${pat}.containerPort must be a port number from 1 to 65535; got ${p.containerPort}`,
        });
      }
    });
  }
}

/**
 * Checks the fields of a workload that injection reads, before anything is changed: `metadata` (name and
 * namespace strings, labels and annotations string maps), the pod template's metadata, and in its spec
 * `hostNetwork`, `containers`, `initContainers` (named mappings; ports with numeric `containerPort`) and
 * `volumes`. A wrong type is an error naming the field, never silently replaced.
 */
export function checkWorkload(resource: Json, wk: WorkloadKind): PodTemplateProblem[] {
  const out: PodTemplateProblem[] = [];
  const meta = getIn(resource, ['metadata']);
  if (meta !== undefined && meta !== null && !isJsonObject(meta))
    out.push({ field: 'metadata', message: `metadata must be a mapping; got ${typeName(meta)}` });
  for (const k of ['name', 'namespace', 'generateName']) {
    const v = getIn(resource, ['metadata', k]);
    if (v !== undefined && v !== null && typeof v !== 'string')
      out.push({ field: `metadata.${k}`, message: `metadata.${k} must be a string; got ${typeName(v)}` });
  }
  checkStringMap(getIn(resource, ['metadata', 'labels']), 'metadata.labels', out);
  checkStringMap(getIn(resource, ['metadata', 'annotations']), 'metadata.annotations', out);
  const paths = podPaths(wk);
  if (wk.templatePath.length > 0) {
    const tpl = getIn(resource, wk.templatePath);
    if (tpl !== undefined && tpl !== null && !isJsonObject(tpl)) {
      const f = wk.templatePath.join('.');
      out.push({ field: f, message: `${f} must be a mapping; got ${typeName(tpl)}` });
      return out;
    }
  }
  const m = paths.meta.join('.');
  const podMeta = getIn(resource, paths.meta);
  if (paths.meta.length > 1 && podMeta !== undefined && podMeta !== null && !isJsonObject(podMeta)) {
    out.push({ field: m, message: `${m} must be a mapping; got ${typeName(podMeta)}` });
  } else if (paths.meta.length > 1) {
    checkStringMap(getIn(resource, [...paths.meta, 'labels']), `${m}.labels`, out);
    checkStringMap(getIn(resource, [...paths.meta, 'annotations']), `${m}.annotations`, out);
  }
  const sp = paths.spec.join('.');
  const hostNetwork = getIn(resource, [...paths.spec, 'hostNetwork']);
  if (hostNetwork !== undefined && hostNetwork !== null && typeof hostNetwork !== 'boolean') {
    out.push({
      field: `${sp}.hostNetwork`,
      message: `${sp}.hostNetwork must be true or false; got ${typeName(hostNetwork)}`,
    });
  }
  checkNamedList(getIn(resource, [...paths.spec, 'containers']), `${sp}.containers`, out, true);
  checkNamedList(getIn(resource, [...paths.spec, 'initContainers']), `${sp}.initContainers`, out, true);
  checkNamedList(getIn(resource, [...paths.spec, 'volumes']), `${sp}.volumes`, out, false);
  return out;
}

/**
 * The first number of `resource` that JSON cannot hold (a YAML `.nan`, `.inf`, `-.inf`), as a problem naming its
 * field; undefined when there is none. Kubernetes refuses such a manifest (`sigs.k8s.io/yaml` turns YAML into JSON
 * with Go's `json.Marshal`: `json: unsupported value: NaN`), and a value that is not equal to itself cannot be
 * read back as written. Only the `yaml` package's reading gives such numbers (the fast reader declines them), so
 * the pipeline asks only for resources that reader read.
 */
export function checkFiniteNumbers(resource: Json): PodTemplateProblem | undefined {
  const walk = (v: Json, at: string): PodTemplateProblem | undefined => {
    if (typeof v === 'number') {
      if (Number.isFinite(v)) return undefined;
      const go = Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf';
      return {
        field: at,
        message: `${at} is a YAML float no JSON can hold (${go}): Kubernetes refuses it ("json: unsupported value: ${go}"); quote it if it is text`,
      };
    }
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) {
        const p = walk(x, `${at}[${i}]`);
        if (p) return p;
      }
    } else if (isJsonObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        const p = walk(x, at === '' ? k : `${at}.${k}`);
        if (p) return p;
      }
    }
    return undefined;
  };
  return walk(resource, '');
}

/**
 * Reads the pod template of a workload (the one accessor of the kinds table). Returns a deep copy, or a
 * problem naming the field when the template or its spec is missing or not a mapping (Istio:
 * `spec.template is required value`).
 */
export function getPodTemplate(resource: Json, wk: WorkloadKind): PodTemplate | PodTemplateProblem {
  const paths = podPaths(wk);
  const spec = getIn(resource, paths.spec);
  if (!isJsonObject(spec)) {
    return { field: paths.spec.join('.'), message: `${paths.spec.join('.')} is required and must be a mapping` };
  }
  const meta = getIn(resource, paths.meta);
  if (meta !== undefined && meta !== null && !isJsonObject(meta)) {
    return { field: paths.meta.join('.'), message: `${paths.meta.join('.')} must be a mapping` };
  }
  return cloneJson<PodTemplate>({ metadata: (meta ?? {}) as PodMeta, spec });
}

/**
 * Whether a resource of a workload kind holds its own pod template: false only for a kind with a
 * `referencePath` (Argo Rollout `spec.workloadRef`) that is set while the template is absent; such a
 * resource passes through unchanged.
 */
export function holdsPodTemplate(resource: Json, wk: WorkloadKind): boolean {
  if (!wk.referencePath) return true;
  const ref = getIn(resource, wk.referencePath);
  const tpl = getIn(resource, wk.templatePath);
  return ref === undefined || ref === null || (tpl !== undefined && tpl !== null);
}

/**
 * The pod template's own `metadata` (a copy; `{}` when absent): the labels and annotations the pods get, which
 * is what the cluster's admission webhook decides on. For most kinds this is the metadata `getPodTemplate`
 * returns; for a CronJob it is `spec.jobTemplate.spec.template.metadata`, while `istioctl kube-inject` reads
 * and writes `spec.jobTemplate.metadata` (`WorkloadKind.metaPath`).
 */
export function getPodOwnMeta(resource: Json, wk: WorkloadKind): PodMeta {
  const meta = getIn(resource, [...wk.templatePath, 'metadata']);
  return isJsonObject(meta) ? (cloneJson(meta) as PodMeta) : {};
}

/** Whether a value returned by `getPodTemplate` is a problem. */
export function isProblem(v: PodTemplate | PodTemplateProblem): v is PodTemplateProblem {
  return 'message' in v;
}

function setIn(root: Json, path: readonly string[], value: Json): Json {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  const base: JsonObject = isJsonObject(root) ? { ...root } : {};
  return setOwn(base, key, setIn((Object.hasOwn(base, key) ? base[key] : undefined) ?? null, rest, value));
}

function deleteIn(root: Json, path: readonly string[]): Json {
  const [key, ...rest] = path;
  if (key === undefined || !isJsonObject(root) || !Object.hasOwn(root, key)) return root;
  const base: JsonObject = { ...root };
  const child = base[key];
  if (rest.length === 0) delete base[key];
  else if (child !== undefined) setOwn(base, key, deleteIn(child, rest));
  return base;
}

/**
 * The resource with its pod template replaced (a new value; the input is not mutated). An empty pod
 * metadata that was absent in the input stays absent; with `dropEmptyMetadata` (uninject: the injection
 * created it) an empty pod metadata is removed.
 */
export function withPodTemplate(
  resource: Json,
  wk: WorkloadKind,
  pod: PodTemplate,
  opts: { dropEmptyMetadata?: boolean } = {},
): Json {
  const paths = podPaths(wk);
  let out = resource;
  const empty = Object.keys(pod.metadata).length === 0;
  if (empty && opts.dropEmptyMetadata) out = deleteIn(out, paths.meta);
  else if (getIn(resource, paths.meta) !== undefined || !empty) out = setIn(out, paths.meta, pod.metadata as Json);
  return setIn(out, paths.spec, pod.spec);
}

/** The resource with `metadata.annotations[key] = value` (a new value; the input is not mutated). */
export function withAnnotation(resource: Json, key: string, value: string): Json {
  const annotations = getIn(resource, ['metadata', 'annotations']);
  return setIn(
    resource,
    ['metadata', 'annotations'],
    setOwn({ ...(isJsonObject(annotations) ? annotations : {}) }, key, value),
  );
}

/**
 * The resource without `metadata.annotations[key]` when it holds exactly `value` (a new value; the input is not
 * mutated); a map the removal empties is removed. Returns `resource` itself when there is nothing to remove.
 */
export function withoutAnnotation(resource: Json, key: string, value: string): Json {
  const annotations = getIn(resource, ['metadata', 'annotations']);
  if (!isJsonObject(annotations) || annotations[key] !== value) return resource;
  const kept: JsonObject = { ...annotations };
  delete kept[key];
  return Object.keys(kept).length === 0
    ? deleteIn(resource, ['metadata', 'annotations'])
    : setIn(resource, ['metadata', 'annotations'], kept);
}
