import { parseAllDocuments } from 'yaml';

/**
 * `--output patches`: the injection as a kustomize Component whose JSON 6902 patches turn the input resources
 * into meshinject's output (istio/istio#38966: keep upstream manifests untouched, patch them at build time).
 * Pure: texts in, the Component's text out.
 */

type J = null | boolean | number | string | J[] | { [k: string]: J };

/** One RFC 6902 operation. */
export interface PatchOp {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: J;
}

const isObj = (v: J | undefined): v is { [k: string]: J } => typeof v === 'object' && v !== null && !Array.isArray(v);

function equal(a: J | undefined, b: J | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return false;
}

const pointer = (path: string, key: string | number) => `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The `name` of every element when all are objects with distinct string names (a list Kubernetes merges by name). */
function names(list: J[]): string[] | undefined {
  const out = list.map((x) => (isObj(x) && typeof x.name === 'string' ? x.name : undefined));
  if (out.some((n) => n === undefined) || new Set(out).size !== out.length) return undefined;
  return out as string[];
}

/**
 * Operations of a named list (containers, volumes): elements removed (from the end), then in the new order each
 * element added where it now sits or diffed in place. Undefined when the kept elements changed order.
 */
function diffNamed(a: J[], b: J[], path: string, out: PatchOp[]): boolean {
  const na = names(a);
  const nb = names(b);
  if (!na || !nb) return false;
  const kept = na.filter((n) => nb.includes(n));
  if (kept.join('\u0000') !== nb.filter((n) => na.includes(n)).join('\u0000')) return false;
  for (let i = a.length - 1; i >= 0; i--) if (!nb.includes(na[i]!)) out.push({ op: 'remove', path: pointer(path, i) });
  b.forEach((x, j) => {
    const at = na.indexOf(nb[j]!);
    if (at < 0) out.push({ op: 'add', path: pointer(path, j), value: x });
    else diffValue(a[at]!, x, pointer(path, j), out);
  });
  return true;
}

/** Appends the operations that turn `a` into `b` at `path` (maps key by key, named lists by name). */
export function diffValue(a: J, b: J, path: string, out: PatchOp[]): void {
  if (equal(a, b)) return;
  if (isObj(a) && isObj(b)) {
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) out.push({ op: 'remove', path: pointer(path, k) });
    for (const [k, v] of Object.entries(b)) {
      if (!Object.hasOwn(a, k)) out.push({ op: 'add', path: pointer(path, k), value: v });
      else diffValue(a[k]!, v, pointer(path, k), out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (diffNamed(a, b, path, out)) return;
    if (a.length === b.length) return a.forEach((x, i) => diffValue(x, b[i]!, pointer(path, i), out));
  }
  out.push({ op: 'replace', path, value: b });
}

/** The resources of a text: a YAML stream's documents, a List's or ResourceList's items, read as kustomize reads YAML (1.1). */
function resourcesOf(text: string): Array<{ [k: string]: J }> {
  const out: Array<{ [k: string]: J }> = [];
  const add = (v: J) => {
    if (!isObj(v)) return;
    if ((v.kind === 'List' || v.kind === 'ResourceList') && Array.isArray(v.items)) v.items.forEach(add);
    else out.push(v);
  };
  for (const d of parseAllDocuments(text, { version: '1.1', merge: true, uniqueKeys: false })) {
    if (d.errors.length > 0) throw new Error(`--output patches: cannot read a document: ${d.errors[0]!.message.split('\n')[0]}`);
    if (d.contents !== null) add(d.toJS({ maxAliasCount: 100 }) as J);
  }
  return out;
}

/** A resource's identity as a kustomize patch target: group, version, kind, name, namespace. */
function targetOf(r: { [k: string]: J }): Record<string, string> | undefined {
  const meta = isObj(r.metadata) ? r.metadata : {};
  if (typeof r.apiVersion !== 'string' || typeof r.kind !== 'string' || typeof meta.name !== 'string') return undefined;
  const slash = r.apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : r.apiVersion.slice(0, slash),
    version: slash < 0 ? r.apiVersion : r.apiVersion.slice(slash + 1),
    kind: r.kind,
    name: meta.name,
    ...(typeof meta.namespace === 'string' && meta.namespace !== '' ? { namespace: meta.namespace } : {}),
  };
}

/**
 * The kustomize Component (`kustomization.yaml` of a component directory) whose patches turn the resources of
 * `inputs` into those of `outputs` (per input file: its text and meshinject's output for it). Resources are
 * matched by identity; one meshinject left out of the output (local config) gets no patch.
 *
 * @throws Error when a resource identity appears twice in the input (a patch target would be ambiguous)
 */
export function patchComponent(files: ReadonlyArray<{ input: string; output: string }>): string {
  const after = new Map<string, { [k: string]: J }>();
  const before: Array<[string, Record<string, string>, { [k: string]: J }]> = [];
  const seen = new Set<string>();
  for (const f of files) {
    for (const r of resourcesOf(f.output)) {
      const t = targetOf(r);
      if (t) after.set(JSON.stringify(t), r);
    }
    for (const r of resourcesOf(f.input)) {
      const t = targetOf(r);
      if (!t) continue;
      const key = JSON.stringify(t);
      if (seen.has(key)) throw new Error(`--output patches: ${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} appears twice in the input, so a patch could not name which one it changes`);
      seen.add(key);
      before.push([key, t, r]);
    }
  }
  const entries: string[] = [];
  for (const [key, target, r] of before) {
    const next = after.get(key);
    if (!next) continue;
    const ops: PatchOp[] = [];
    diffValue(r, next, '', ops);
    if (ops.length === 0) continue;
    const t = Object.entries(target).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`).join('\n');
    const patch = JSON.stringify(ops, null, 2).split('\n').map((l) => `    ${l}`).join('\n');
    entries.push(`- target:\n${t}\n  patch: |-\n${patch}\n`);
  }
  return [
    '# A kustomize Component written by `meshinject --output patches`: JSON 6902 patches that apply the injection',
    '# to the input resources. Save it as kustomization.yaml in a directory and list that directory under',
    '# `components:` of the kustomization that holds those resources.',
    'apiVersion: kustomize.config.k8s.io/v1alpha1',
    'kind: Component',
    entries.length ? `patches:\n${entries.join('')}` : 'patches: []\n',
  ].join('\n');
}
