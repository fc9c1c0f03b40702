import { parseAllDocuments } from 'yaml';
import { emitMapLines, emitSeqLines, type BlockStyle } from '../yaml/emit/emit-block.ts';
import { setOwn } from '../json.ts';
import { defined } from '../checked.ts';

/**
 * `--output patches`: the injection as a kustomize Component whose patches turn the input resources into
 * meshinject's output (istio/istio#38966: keep upstream manifests untouched, patch them at build time), adding
 * exactly what injection added so that a later upstream change still applies (issue #37 item 1): one strategic
 * merge patch per resource for map keys (kustomize creates a missing map and merges an existing one key by key),
 * RFC 6902 operations for list items (one item by name; kustomize's strategic merge would move the items it
 * names to the front of a list). Written by the one block emitter (../yaml/emit/emit-block.ts), so NEL, LS and PS
 * are escaped as in every other YAML meshinject writes. Pure: texts in, the Component's text out.
 */

type J = null | boolean | number | string | J[] | { [k: string]: J };

/**
 * One RFC 6902 operation (`test` guards the name of a list item before an edit by index). A type, not an
 * interface, so that a list of them is JSON data (`J[]`) to the emitter.
 */
export type PatchOp = {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: J;
};

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

const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The `name` of every element when all are objects with distinct string names (a list Kubernetes merges by name). */
function names(list: J[]): string[] | undefined {
  const out = list.map((x) => (isObj(x) && typeof x.name === 'string' ? x.name : undefined));
  if (out.some((n) => n === undefined) || new Set(out).size !== out.length) return undefined;
  return out as string[];
}

/** The longest common subsequence of two name lists (small lists: the quadratic table). */
function commonOrder(x: string[], y: string[]): Set<string> {
  const len: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) {
      const row = len[i] ?? [];
      row[j] = x[i] === y[j] ? (len[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(len[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  const out = new Set<string>();
  for (let i = 0, j = 0; i < x.length && j < y.length; ) {
    const xi = x[i] ?? '';
    if (xi === y[j]) {
      out.add(xi);
      i++;
      j++;
    } else if ((len[i + 1]?.[j] ?? 0) >= (len[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return out;
}

/**
 * Operations of a named list (containers, init containers, volumes) that touch only the items injection
 * added, removed, moved or changed, so items an upstream adds later are kept: a removed item is a `test` of its
 * name and a `remove` (from the end); an item injection moved (Linkerd re-injection puts its own volumes after the
 * user's again) is removed and added where it goes, the items that keep their order staying put; an added item
 * after which only added items follow is appended (`/-`), any other at its index; a changed item is a `test` of
 * its name, then its own changes. False (nothing pushed) when the items are not a list merged by name.
 */
function diffNamed(a: J[], b: J[], path: string, out: PatchOp[], ctx: DiffContext): boolean {
  const na = names(a);
  const nb = names(b);
  if (!na || !nb) return false;
  const stay = commonOrder(
    na.filter((n) => nb.includes(n)),
    nb.filter((n) => na.includes(n)),
  );
  for (let i = a.length - 1; i >= 0; i--) {
    const n = na[i] ?? '';
    if (stay.has(n)) continue;
    out.push(
      { op: 'test', path: pointer(pointer(path, i), 'name'), value: n },
      { op: 'remove', path: pointer(path, i) },
    );
  }
  const lastKept = nb.reduce((last, n, j) => (stay.has(n) ? j : last), -1);
  b.forEach((x, j) => {
    const n = nb[j] ?? '';
    const at = stay.has(n) ? na.indexOf(n) : -1;
    if (at < 0)
      out.push({
        op: 'add',
        path: (ctx.appends(path, n) ?? j > lastKept) ? `${path}/-` : pointer(path, j),
        value: x,
      });
    else if (!equal(a[at], x)) {
      out.push({ op: 'test', path: pointer(pointer(path, j), 'name'), value: n });
      diffValue(a[at] ?? null, x, pointer(path, j), out, ctx);
    }
  });
  return true;
}

/**
 * Where injection puts a new item of a named list beside one an upstream adds at the end later: `appends(path,
 * name)` is true when after it (the operation appends, `/-`), false when before (added at its index), undefined
 * when not known (appended when it follows every kept item). Learnt by injecting the input again with such an
 * item at the end of each list (see `patchComponent`).
 */
export interface DiffContext {
  appends(path: string, name: string): boolean | undefined;
}

const NO_PROBE: DiffContext = { appends: () => undefined };

/** Appends the RFC 6902 operations that turn `a` into `b` at `path` (maps key by key, named lists by name). */
export function diffValue(a: J, b: J, path: string, out: PatchOp[], ctx: DiffContext = NO_PROBE): void {
  if (equal(a, b)) return;
  if (isObj(a) && isObj(b)) {
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) out.push({ op: 'remove', path: pointer(path, k) });
    for (const [k, v] of Object.entries(b)) {
      const old = Object.hasOwn(a, k) ? a[k] : undefined;
      if (old === undefined) out.push({ op: 'add', path: pointer(path, k), value: v });
      else diffValue(old, v, pointer(path, k), out, ctx);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (diffNamed(a, b, path, out, ctx)) return;
    if (a.length === b.length) {
      for (const [i, x] of a.entries())
        diffValue(x, defined(b[i], 'an item of a list as long'), pointer(path, i), out, ctx);
      return;
    }
  }
  out.push({ op: 'replace', path, value: b });
}

/** The resource's own annotations and labels (see `splitChanges`). */
const ROOT_META = new Set(['/metadata/annotations', '/metadata/labels']);

/**
 * The changes from resource `a` to `b` in two parts: `merge`, a strategic merge patch of the maps reached from
 * the root through maps only (a key set, a key `null` to remove it, a map or list the input lacks as a whole),
 * which kustomize merges key by key and creates where missing; and `ops`, RFC 6902 operations for every list
 * the input has (see `diffNamed`), since kustomize's strategic merge moves the items a patch names to the front
 * of a list; a named list the input lacks is made empty by the merge and filled by operations, one the
 * output lacks is emptied item by item (left as `[]`, which Kubernetes reads as no list), a map the output
 * lacks key by key. Undefined
 * `merge` when no map changes.
 */
function splitChanges(
  a: { [k: string]: J },
  b: { [k: string]: J },
  path: string,
  ops: PatchOp[],
  ctx: DiffContext,
): { [k: string]: J } | undefined {
  const merge: { [k: string]: J } = {};
  let any = false;
  for (const [k, old] of Object.entries(a)) {
    if (Object.hasOwn(b, k)) continue;
    // A named list emptied (uninject): its items go one by one, so one an upstream adds later stays.
    if (Array.isArray(old) && old.length > 0 && names(old)) diffValue(old, [], pointer(path, k), ops);
    else if (ROOT_META.has(path) || (ROOT_META.has(pointer(path, k)) && isObj(old))) {
      // kustomize writes a strategic-merge `null` among the resource's own annotations and labels as the
      // string "null": those keys are removed by operations.
      if (ROOT_META.has(path)) ops.push({ op: 'remove', path: pointer(path, k) });
      else
        for (const x of Object.keys(old as { [k: string]: J }))
          ops.push({ op: 'remove', path: pointer(pointer(path, k), x) });
    } else if (isObj(old) && Object.keys(old).length > 0) {
      // A map emptied (uninject's annotations): its keys go one by one, so one an upstream adds later stays.
      setOwn(merge, k, Object.fromEntries(Object.keys(old).map((x) => [x, null])));
      any = true;
    } else {
      setOwn(merge, k, null);
      any = true;
    }
  }
  for (const [k, v] of Object.entries(b)) {
    const old = Object.hasOwn(a, k) ? a[k] : undefined;
    if (old !== undefined && equal(old, v)) continue;
    if (isObj(old) && isObj(v)) {
      const sub = splitChanges(old, v, pointer(path, k), ops, ctx);
      if (sub === undefined) continue;
      setOwn(merge, k, sub);
    } else if (Array.isArray(old) && Array.isArray(v)) {
      diffValue(old, v, pointer(path, k), ops, ctx);
      continue;
    } else if (old === undefined && Array.isArray(v) && v.length > 0 && names(v)) {
      // A named list the input lacks: the merge makes it (an empty list leaves one an upstream adds later as it
      // is), the operations add its items where injection puts them beside an upstream's.
      setOwn(merge, k, []);
      diffValue([], v, pointer(path, k), ops, ctx);
    } else {
      if (old === undefined && v === null) continue;
      setOwn(merge, k, v);
    }
    any = true;
  }
  return any ? merge : undefined;
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
    if (d.errors.length > 0)
      throw new Error(`--output patches: cannot read a document: ${d.errors[0]?.message.split('\n')[0]}`);
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

/** What one input became: its text and meshinject's output for it. */
export interface PatchedFile {
  input: string;
  output: string;
}

/**
 * The kustomize Component (`kustomization.yaml` of a component directory) whose patches turn the resources of
 * the inputs into those of the outputs (`files`: per input file, its text and meshinject's output for it).
 * Resources are matched by identity; one meshinject left out of the output (local config) gets no patch.
 * `reinject` runs the same injection on other input texts (one per file, in order; undefined when it fails):
 * it tells where injection puts its new list items beside an item an upstream adds at the end of the list later
 * (see {@link DiffContext}); without it an item that follows every kept item is appended.
 *
 * @throws Error when a resource identity appears twice in the input (a patch target would be ambiguous)
 */
export function patchComponent(
  files: ReadonlyArray<PatchedFile>,
  reinject?: (inputs: string[]) => PatchedFile[] | undefined,
): string {
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
      if (seen.has(key))
        throw new Error(
          `--output patches: ${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} appears twice in the input, so a patch could not name which one it changes`,
        );
      seen.add(key);
      before.push([key, t, r]);
    }
  }
  const positions = reinject ? probePositions(files, after, reinject) : new Map<string, boolean>();
  const patches: J[] = [];
  for (const [key, target, r] of before) {
    const next = after.get(key);
    if (!next) continue;
    const ops: PatchOp[] = [];
    const ctx: DiffContext = { appends: (path, name) => positions.get(`${key}\u0000${path}\u0000${name}`) };
    const merge = splitChanges(r, next, '', ops, ctx);
    if (merge) patches.push({ target, patch: emitMapLines(mergeDocument(r, merge), 0, STYLE) });
    if (ops.length > 0) patches.push({ target, patch: emitSeqLines(ops, 0, STYLE) });
  }
  return [
    '# A kustomize Component written by `meshinject --output patches`: patches that apply the injection to the input',
    '# resources (strategic merge for map keys, JSON 6902 for list items). Save it as kustomization.yaml in a',
    '# directory and list that directory under `components:` of the kustomization that holds those resources.',
    emitMapLines({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component', patches }, 0, STYLE),
  ].join('\n');
}

/** The name of the item `probePositions` adds at the end of each list (not a name any mesh injects). */
const PROBE_NAME = 'meshinject-position-probe';

/**
 * The named lists, reached from `b`'s root through maps only, that hold items `a`'s list lacks: JSON pointer
 * and the new names.
 */
function gainedLists(a: J | undefined, b: J, path: string, out: Array<[string, string[]]>): void {
  if (!isObj(b)) return;
  for (const [k, v] of Object.entries(b)) {
    const old = isObj(a) && Object.hasOwn(a, k) ? a[k] : undefined;
    const gained = Array.isArray(v) ? names(v) : undefined;
    if (isObj(v)) gainedLists(old, v, pointer(path, k), out);
    else if (gained && (old === undefined || (Array.isArray(old) && names(old)))) {
      const had = new Set(names(old ?? []));
      const added = gained.filter((n) => !had.has(n));
      if (added.length > 0) out.push([pointer(path, k), added]);
    }
  }
}

/** The value at a JSON pointer, or undefined. */
function at(v: J | undefined, path: string): J | undefined {
  for (const part of path.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    if (isObj(v)) v = Object.hasOwn(v, key) ? v[key] : undefined;
    else if (Array.isArray(v)) v = v[Number(key)];
    else return undefined;
  }
  return v;
}

/**
 * Injects the input again with an upstream-like item at the end of every list injection added to (a copy of
 * the list's last item, or of the first new one when the input has no list, named {@link PROBE_NAME}; an item
 * with an image gets only its name and an image), and answers, per resource key, list pointer and new name,
 * whether injection put the new item after that item (true) or before it (false). Empty when nothing was added
 * or the injection fails.
 */
function probePositions(
  files: ReadonlyArray<PatchedFile>,
  after: Map<string, { [k: string]: J }>,
  reinject: (inputs: string[]) => PatchedFile[] | undefined,
): Map<string, boolean> {
  const lists = new Map<string, Array<[string, string[]]>>();
  const texts = files.map((f) => {
    const docs = resourcesOf(f.input).map((r) => {
      const t = targetOf(r);
      const next = t && after.get(JSON.stringify(t));
      if (!t || !next) return r;
      const found: Array<[string, string[]]> = [];
      gainedLists(r, next, '', found);
      if (found.length === 0) return r;
      const copy = JSON.parse(JSON.stringify(r)) as { [k: string]: J };
      const kept: Array<[string, string[]]> = [];
      for (const [path, added] of found) {
        const cut = path.lastIndexOf('/');
        const parent = at(copy, path.slice(0, cut));
        if (!isObj(parent)) continue;
        const key = path
          .slice(cut + 1)
          .replace(/~1/g, '/')
          .replace(/~0/g, '~');
        if (!Array.isArray(parent[key])) parent[key] = [];
        const list = parent[key];
        const model = (
          list.length > 0 ? list[list.length - 1] : (at(next, path) as J[]).find((x) => isObj(x) && x.name === added[0])
        ) as { [k: string]: J };
        list.push(
          typeof model.image === 'string' ? { name: PROBE_NAME, image: PROBE_NAME } : { ...model, name: PROBE_NAME },
        );
        kept.push([path, added]);
      }
      lists.set(JSON.stringify(t), kept);
      return copy;
    });
    return docs.map((d) => JSON.stringify(d)).join('\n---\n');
  });
  const out = new Map<string, boolean>();
  if (lists.size === 0) return out;
  const probed = reinject(texts);
  for (const f of probed ?? []) {
    for (const r of resourcesOf(f.output)) {
      const t = targetOf(r);
      const key = t && JSON.stringify(t);
      for (const [path, added] of (key && lists.get(key)) || []) {
        const list = at(r, path);
        const order = Array.isArray(list) ? names(list) : undefined;
        const probe = order?.indexOf(PROBE_NAME) ?? -1;
        if (order === undefined || probe < 0) continue;
        for (const n of added)
          if (order.includes(n)) out.set(`${key}\u0000${path}\u0000${n}`, order.indexOf(n) > probe);
      }
    }
  }
  return out;
}

/** Block YAML as kustomize's own files are written; `null` kept (a strategic merge `null` removes a key). */
const STYLE: BlockStyle = { seqIndent: 'compact', keepNulls: true };

/** The strategic merge patch document of `merge` for resource `r`: its apiVersion, kind, name and namespace, and the changes. */
function mergeDocument(r: { [k: string]: J }, merge: { [k: string]: J }): { [k: string]: J } {
  const meta = r.metadata as { [k: string]: J };
  const id: { [k: string]: J } = { name: defined(meta.name, 'the name of a patched resource') };
  if (typeof meta.namespace === 'string' && meta.namespace !== '') id.namespace = meta.namespace;
  const { metadata, ...rest } = merge;
  return {
    apiVersion: defined(r.apiVersion, 'the apiVersion of a patched resource'),
    kind: defined(r.kind, 'the kind of a patched resource'),
    metadata: { ...id, ...(isObj(metadata) ? metadata : {}) },
    ...rest,
  };
}
