/**
 * One identity, one resource (issue #20 §3): a resource is identified by its API group, kind, namespace and
 * name, as kustomize's `ResId` identifies it (the version does not count: `apps/v1` and `apps/v1beta1` name the
 * same Deployment; an absent namespace is the run's default namespace). kustomize refuses a second resource of
 * an identity ("may not add resource with an already registered id"); kubectl would apply both, the last one
 * winning, and a Namespace's labels would decide injection by input order. Pure.
 */
import { createHash } from 'node:crypto';
import { isJsonObject } from '../json.ts';
import type { Json } from '../model.ts';

/** A resource's identity: `key` compares, `label` names it in messages (`Deployment "shop/web" (group apps)`). */
export interface Identity {
  key: string;
  label: string;
  kind: string;
}

/**
 * Where a resource was first seen, and a fingerprint of its data (to tell identical duplicates apart; '' when
 * not computed, for an identity the run holds once).
 */
export interface Occurrence {
  place: string;
  fingerprint: string;
}

/**
 * The identity of a resource, or undefined for one without `kind`, `apiVersion` or `metadata.name` (nothing
 * to compare: kustomize's generated names, partial documents).
 *
 * @param value the resource as data
 * @param defaultNamespace the namespace of a resource that names none (the run's default namespace)
 */
export function identityOf(value: Json, defaultNamespace: string): Identity | undefined {
  if (!isJsonObject(value)) return undefined;
  const meta = value.metadata;
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  const name = isJsonObject(meta) ? meta.name : undefined;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string' || typeof name !== 'string' || !kind || !name)
    return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const written = isJsonObject(meta) && typeof meta.namespace === 'string' ? meta.namespace : '';
  const namespace = written || defaultNamespace;
  // A Namespace (or any object without a namespace) keeps the same key whatever the default: only the name counts.
  const ns = kind === 'Namespace' && group === '' ? '' : namespace;
  return {
    key: JSON.stringify([group, kind, ns, name]),
    label: `${kind} "${ns ? `${ns}/` : ''}${name}"${group ? ` (group ${group})` : ''}`,
    kind,
  };
}

/**
 * The annotations that say where a resource was read, not what it is (kyaml `kioutil`: the orchestrator sets them
 * on read, per document): two documents of the same content in one file differ in their index.
 */
export const LOCATION_ANNOTATIONS: readonly string[] = [
  'config.kubernetes.io/path',
  'config.kubernetes.io/index',
  'config.k8s.io/id',
  'kustomize.config.k8s.io/id',
];

/** Whether an annotation key is left out of a fingerprint: a location (`internal.config.kubernetes.io/*` too) or one of `ignored`. */
function ignoredAnnotation(key: string, ignored: ReadonlySet<string>): boolean {
  return ignored.has(key) || key.startsWith('internal.config.kubernetes.io/') || LOCATION_ANNOTATIONS.includes(key);
}

/**
 * The data in one canonical form (keys sorted by UTF-16 code units, as `Array.prototype.sort`), for comparing
 * resources without keeping them; in a map under an `annotations` key, the keys `ignoredAnnotation` names are left
 * out. Built by concatenation, with no intermediate arrays: it runs once per resource.
 */
function canonical(v: Json, ignored: ReadonlySet<string>, inAnnotations = false): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) {
    let s = '[';
    let sep = '';
    for (const x of v) {
      s += sep + canonical(x, ignored);
      sep = ',';
    }
    return `${s}]`;
  }
  const keys = Object.keys(v);
  let prev = '';
  for (const k of keys) {
    if (prev > k) {
      keys.sort();
      break;
    }
    prev = k;
  }
  let s = '{';
  let sep = '';
  for (const k of keys) {
    const x = v[k]; // own key: keys is Object.keys(v)
    if (x === undefined || (inAnnotations && ignoredAnnotation(k, ignored))) continue;
    s += `${sep}${JSON.stringify(k)}:${canonical(x, ignored, k === 'annotations')}`;
    sep = ',';
  }
  return `${s}}`;
}

/**
 * A fingerprint of a resource's data (SHA-256 of its canonical JSON): equal for resources that read the same,
 * whatever their location annotations ({@link LOCATION_ANNOTATIONS}, `internal.config.kubernetes.io/*`) and the
 * annotations of `ignored` (a run's own records of how a resource was written) say.
 */
export function fingerprintOf(value: Json, ignored: ReadonlySet<string> = new Set()): string {
  return createHash('sha256').update(canonical(value, ignored)).digest('base64');
}

/**
 * The identities seen in a run (over every input), each with where it was first seen. Holds a key, a place and
 * a fingerprint per resource, never the resource itself.
 */
export class IdentityTable {
  private readonly seen = new Map<string, Occurrence>();

  /**
   * @param repeated when known, the identity keys that occur more than once in the run (`repeatedKeys`): only
   *   their resources need a fingerprint; undefined: every resource does
   */
  constructor(private readonly repeated?: ReadonlySet<string>) {}

  /** Whether a resource of `id` needs its fingerprint: its identity may occur again in the run. */
  needsFingerprint(id: Identity): boolean {
    return this.repeated === undefined || this.repeated.has(id.key);
  }

  /** Records `id` at `now`; returns the earlier occurrence when the identity was already seen (the first stays recorded). */
  see(id: Identity, now: Occurrence): Occurrence | undefined {
    const before = this.seen.get(id.key);
    if (before) return before;
    this.seen.set(id.key, now);
    return undefined;
  }
}

/**
 * The identity keys that occur more than once among `values` (each the data of a resource of the run, read
 * already), for `IdentityTable`: a fingerprint (a SHA-256 of the canonical data, 4 % of an injection run) is
 * then computed only for resources whose identity repeats. A superset is harmless: it only costs fingerprints.
 */
export function repeatedKeys(values: Iterable<Json>, defaultNamespace: string): Set<string> {
  const once = new Set<string>();
  const twice = new Set<string>();
  for (const v of values) {
    const key = identityOf(v, defaultNamespace)?.key;
    if (key === undefined) continue;
    if (once.has(key)) twice.add(key);
    else once.add(key);
  }
  return twice;
}

/**
 * The result of a second resource of an identity: an error when the two differ (for a Namespace, its labels or
 * annotations decide injection, so which one counts would be a guess), a warning when they are identical (both
 * are written and applying them twice gives the same object; Argo CD also only warns, `RepeatedResourceWarning`).
 *
 * @returns severity and message naming both places
 */
export function duplicateMessage(
  id: Identity,
  first: Occurrence,
  second: Occurrence,
): { severity: 'error' | 'warning'; message: string } {
  // The same file given twice (`meshinject dir dir/app.yaml`) reads every resource of it twice.
  const both =
    first.place === second.place ? `${first.place} (an input given twice)` : `${first.place} and ${second.place}`;
  // An empty fingerprint (one not computed) never counts as identical: the safe verdict is the error.
  if (first.fingerprint !== '' && first.fingerprint === second.fingerprint) {
    return {
      severity: 'warning',
      message: `${id.label} appears twice, identical, at ${both}: both are written; remove one (kustomize refuses this: "may not add resource with an already registered id")`,
    };
  }
  const what =
    id.kind === 'Namespace'
      ? ' with different content (its labels and annotations decide injection: which one counts would be a guess)'
      : ' with different content';
  return {
    severity: 'error',
    message: `${id.label} appears twice${what}, at ${both}: one identity (group, kind, namespace, name) must be one resource (kustomize: "may not add resource with an already registered id"); nothing is written`,
  };
}
