import { parseAllDocuments } from 'yaml';
import { quoteData } from '../results/quote.ts';
import { findKeyProblem, keyProblemMessage } from '../yaml/read/readers.ts';
import type { Json, JsonObject } from '../model.ts';
import type { SectionOverride } from '../contract/driver.ts';
import { isJsonObject, setOwn } from '../json.ts';

/**
 * Configuration layering: several functionConfig files (`--config a.yaml --config b.yaml`) and the CLI's
 * override flags become one functionConfig, as Helm merges values files (`helm -f a.yaml -f b.yaml`):
 * - maps are merged key by key, recursively; a later file's field wins;
 * - lists and scalars are replaced whole by a later file (never appended);
 * - a later `null` removes the field (Helm's rule for deleting a default);
 * - a map against a scalar or a list at the same path cannot be merged (Helm warns "cannot overwrite table"
 *   and keeps one side; here it is an error naming both files and the field), and layers of different
 *   `kind` or `apiVersion` (a ConfigMap over a SidecarInjection) are an error naming both files.
 * Override layers (CLI flags, `ARGOCD_APP_NAMESPACE`) merge the same way, but they win conflicts: the flag's
 * value replaces whatever the files hold there.
 */

/** One functionConfig layer: its name for messages (`--config base.yaml`) and its content. */
export interface ConfigLayer {
  name: string;
  value: JsonObject;
  /** An override (a CLI flag): wins a map/non-map conflict instead of failing. */
  override?: boolean;
}

/** The merged functionConfig, or the one message explaining why the layers cannot be merged. */
export type MergeResult = { ok: true; value: JsonObject } | { ok: false; message: string };

/** `a list`, `a string`, `a map`, ... for messages about the shape of a value. */
export function describeShape(v: unknown): string {
  if (v === null || v === undefined) return 'nothing (null)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return `a ${typeof v}`;
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The `yaml` package's error codes, in the user's terms. */
const YAML_MESSAGES: Record<string, string> = {
  DUPLICATE_KEY: 'a key appears twice in the same map',
  TAB_AS_INDENT: 'a tab is used for indentation (YAML indents with spaces)',
};

/**
 * Reads one functionConfig file: exactly one YAML (or JSON) document holding a map.
 *
 * @param text the file's content (UTF-8 decoded)
 * @param name how to name it in messages, e.g. `--config base.yaml`
 * @returns the document as data, or a message naming the file, the line and the problem in YAML terms
 *   ("holds 2 YAML documents", "got a list", "a key appears twice in the same map"); `syntax` is false
 *   when the file is YAML but not a map (a wrong functionConfig rather than unreadable input)
 */
export function parseConfigLayer(
  text: string,
  name: string,
): { ok: true; value: JsonObject } | { ok: false; message: string; syntax: boolean } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Duplicate keys are found with a Set per map (`findKeyProblem`): `yaml`'s own check is quadratic in a
  // map's size (a 40 000-key `values` took 40 s).
  const list = [...parseAllDocuments(body, { uniqueKeys: false, prettyErrors: false, strict: true })];
  for (const d of list) {
    const err = d.errors[0];
    if (err) {
      const what =
        YAML_MESSAGES[err.code] ?? (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+.*$/, '');
      return { ok: false, syntax: true, message: `${name}, line ${lineOf(body, err.pos[0])}: ${what}` };
    }
    const dup = findKeyProblem(d);
    if (dup) {
      const what =
        dup.problem === 'duplicate' ? `${YAML_MESSAGES.DUPLICATE_KEY} (\`${dup.key}\`)` : keyProblemMessage(dup);
      return { ok: false, syntax: true, message: `${name}, line ${lineOf(body, dup.offset)}: ${what}` };
    }
  }
  const nonEmpty = list.filter((d) => d.contents !== null);
  const [only] = nonEmpty;
  if (only === undefined)
    return { ok: false, syntax: false, message: `${name}: is empty; expected a SidecarInjection or a ConfigMap` };
  if (nonEmpty.length > 1) {
    return {
      ok: false,
      syntax: true,
      message: `${name}: holds ${nonEmpty.length} YAML documents; a functionConfig is one document (pass each file with its own --config to layer them)`,
    };
  }
  let value: unknown;
  try {
    value = only.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, syntax: true, message: `${name}: ${(e as Error).message.split('\n')[0]}` };
  }
  if (!isJsonObject(value)) {
    return {
      ok: false,
      syntax: false,
      message: `${name}: a functionConfig must be a map (a SidecarInjection or a ConfigMap); got ${describeShape(value)}`,
    };
  }
  return { ok: true, value: value as JsonObject };
}

function clone(v: Json): Json {
  if (Array.isArray(v)) return v.map(clone);
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, clone(x));
    return out;
  }
  return v;
}

function joinKey(path: string, key: string): string {
  return /^[A-Za-z_][\w-]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${key}]`;
}

/**
 * Merges functionConfig layers in order (see the module comment for the rules). The first layer's
 * `kind`/`apiVersion` fix those of the result; a later layer with another kind or apiVersion is an error
 * naming both layers. Inputs are not modified.
 *
 * @param layers in order, earliest first; an empty array gives `{ ok: true, value: {} }`
 * @returns the merged functionConfig, or the first conflict: the field path and both layers' names
 */
export function mergeConfigLayers(layers: readonly ConfigLayer[]): MergeResult {
  const out: JsonObject = {};
  /** Which layer last set a path (a path without an entry inherits its parent's). */
  const origin = new Map<string, string>();
  const originOf = (path: string): string => {
    for (let p = path; ; ) {
      const o = origin.get(p);
      if (o !== undefined) return o;
      const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
      if (cut <= 0) return origin.get('') ?? '?';
      p = p.slice(0, cut);
    }
  };
  let first: ConfigLayer | undefined;
  for (const layer of layers) {
    if (!first) first = layer;
    else if (!layer.override) {
      for (const key of ['kind', 'apiVersion'] as const) {
        const a = first.value[key];
        const b = layer.value[key];
        if (a !== undefined && b !== undefined && a !== b) {
          return {
            ok: false,
            message: `${layer.name} has ${key} ${quoteData(b)} but ${first.name} has ${key} ${quoteData(a)}; layered functionConfigs must all be of one kind`,
          };
        }
      }
    }
    origin.set('', origin.get('') ?? layer.name);
    const problem = mergeInto(out, layer.value, '', layer, origin, originOf);
    if (problem) return { ok: false, message: problem };
  }
  return { ok: true, value: out };
}

function mergeInto(
  dst: JsonObject,
  src: JsonObject,
  path: string,
  layer: ConfigLayer,
  origin: Map<string, string>,
  originOf: (p: string) => string,
): string | undefined {
  for (const [key, v] of Object.entries(src)) {
    const at = joinKey(path, key);
    const had = Object.hasOwn(dst, key);
    const cur = had ? dst[key] : undefined;
    if (v === null) {
      if (had) delete dst[key];
      continue;
    }
    if (had && isJsonObject(cur) && isJsonObject(v)) {
      const p = mergeInto(cur, v, at, layer, origin, originOf);
      if (p) return p;
      continue;
    }
    if (had && isJsonObject(cur) !== isJsonObject(v) && !layer.override) {
      return `${at}: ${layer.name} sets ${describeShape(v)} where ${originOf(at)} sets ${describeShape(cur)}; a map merges only with a map (write it as a map in both files)`;
    }
    setOwn(dst, key, clone(v));
    origin.set(at, layer.name);
    for (const p of origin.keys()) if (p.startsWith(`${at}.`) || p.startsWith(`${at}[`)) origin.delete(p);
  }
  return undefined;
}

/** Settings given outside the functionConfig files: CLI flags and the Argo CD environment. */
export interface ConfigOverrides {
  /** Namespace for resources without `metadata.namespace`, and where it came from (`--default-namespace`, `ARGOCD_APP_NAMESPACE`). */
  defaultNamespace?: { value: string; from: string };
  /** `spec.mesh` and `spec.policy` set by a flag (`--mesh`, `--policy`), and the flag. */
  core?: ReadonlyArray<{ field: 'mesh' | 'policy'; value: string; from: string }>;
  /** `spec.mode` (data key `mode`) whatever the functionConfig says, and what set it (`meshinject uninject`). */
  mode?: { value: 'uninject'; from: string };
  /** Fields of drivers' sections set by the drivers' flags (`MeshDriver.flags`), each with its section (`spec.<section>`). */
  sections?: ReadonlyArray<SectionOverride & { section: string }>;
}

/**
 * The override layers for a base functionConfig of the given kind, one per override (so a message names the
 * flag). A `ConfigMap` base gets `data` keys (`defaultNamespace`; a driver's field as `<section>.<field>`, its
 * value as text or JSON text as the field's `configMap` says); anything else gets `SidecarInjection` `spec` fields.
 *
 * @returns the layers, or a message for an override the base's kind cannot hold (a field without a ConfigMap form)
 */
export function overrideLayers(
  o: ConfigOverrides,
  baseKind: unknown,
): { ok: true; layers: ConfigLayer[] } | { ok: false; message: string } {
  const layers: ConfigLayer[] = [];
  const configMap = baseKind === 'ConfigMap';
  const add = (from: string, cm: readonly [string, string], spec: JsonObject): void => {
    layers.push({ name: from, override: true, value: configMap ? { data: { [cm[0]]: cm[1] } } : { spec } });
  };
  if (o.defaultNamespace)
    add(o.defaultNamespace.from, ['defaultNamespace', o.defaultNamespace.value], {
      defaultNamespace: o.defaultNamespace.value,
    });
  for (const c of o.core ?? []) add(c.from, [c.field, c.value], { [c.field]: c.value });
  if (o.mode) add(o.mode.from, ['mode', o.mode.value], { mode: o.mode.value });
  for (const f of o.sections ?? []) {
    const key = `${f.section}.${f.field}`;
    if (configMap && !f.configMap)
      return {
        ok: false,
        message: `${f.from} needs a SidecarInjection functionConfig (spec.${key}); the functionConfig is a ConfigMap`,
      };
    const text = f.configMap === 'json' ? JSON.stringify(f.value) : String(f.value);
    add(f.from, [key, text], { [f.section]: { [f.field]: f.value } });
  }
  return { ok: true, layers };
}
