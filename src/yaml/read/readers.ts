import {
  isMap,
  isScalar,
  parseAllDocuments,
  parseDocument,
  visit,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
  type Tags,
  type ToJSOptions,
} from 'yaml';
import { FLOAT_1_1, FLOAT_EXP_1_1 } from '../scalars.ts';

/**
 * The ways a text is read, and the options meshinject gives the `yaml` package for them.
 *
 * - **Kubernetes reading (YAML 1.1).** What kubectl, kustomize, kpt and the API server read:
 *   sigs.k8s.io/yaml and go-yaml resolve plain scalars with YAML 1.1 number rules (`0644` is the octal 420,
 *   `1_000` is 1000) and apply `<<` merge keys; `yes`/`on`/`off` stay strings (go-yaml v3, and kubectl's
 *   typed decoding of string fields), only `true`/`false` are booleans. Timestamps stay strings (go-yaml
 *   only makes a time of them for a typed time field, and JSON conversion writes them back as text), and so
 *   does base 60 (`1:20`: go-yaml never read it). This is the data meshinject decides and injects on, and
 *   what every output must read back as. The same rules, written for the fast readers and the emitter, are
 *   in `scalars.ts`.
 * - **Template output (YAML 1.1 with 1.1 booleans).** What Istio's injector reads a rendered template as
 *   (`FRAGMENT_YAML_OPTIONS`, used by `fragment-reader.ts`).
 * - **YAML 1.2 core reading.** What `yaml` and other 1.2 readers (yq v4, Python ruamel) read. An output
 *   must read back as the input does in both, except where meshinject changed it.
 *
 * Duplicate keys are checked with a Set (`findKeyProblem`), not with `yaml`'s `uniqueKeys`, whose
 * check is quadratic in the number of keys of a map.
 */

/** The 1.1 float tags with patterns that need a digit (`scalars.ts`; the `.inf`/`.nan` tag is kept as it is). */
function withDigitFloats(t: Tags[number]): Tags[number] {
  if (typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:float' || !('test' in t) || !t.test) return t;
  if (t.format === 'EXP') return { ...t, test: FLOAT_EXP_1_1 } as typeof t;
  if (t.format === 'FLOAT' || (t.format === undefined && !t.test.test('.nan')))
    return { ...t, test: FLOAT_1_1 } as typeof t;
  return t;
}

/**
 * `yaml`'s YAML 1.1 tags made to read plain scalars as Go's go-yaml v2 does (`scalars.ts` has the rules):
 * floats need a digit (`withDigitFloats`), timestamps stay strings, base 60 (`1:20`) is a string (go-yaml
 * never read it), and 1.1 booleans (`yes`, `on`) are booleans only with `yaml11Booleans`.
 */
function goYaml11Tags(yaml11Booleans: boolean): (tags: Tags) => Tags {
  return (tags) => {
    const kept = tags
      .filter((t) =>
        typeof t === 'string' ? t !== 'timestamp' : t.tag !== 'tag:yaml.org,2002:timestamp' && t.format !== 'TIME',
      )
      .filter((t) => yaml11Booleans || typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:bool')
      .map(withDigitFloats);
    return yaml11Booleans ? kept : [...kept, 'bool'];
  };
}

/** Options of the Kubernetes (YAML 1.1) reading. */
export const K8S_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  uniqueKeys: false,
  strict: true,
  prettyErrors: false,
  // YAML 1.1 booleans (`yes`, `on`, `off`) stay strings, `true`/`false` are booleans: kustomize (go-yaml v3)
  // reads them so, and kubectl's typed decoding keeps them as text in string fields (`namespace: off`).
  customTags: goYaml11Tags(false),
};

/**
 * Options of the reading of rendered template output (`parseFragment`): YAML 1.1 as Istio's injector reads
 * it (sigs.k8s.io/yaml `YAMLToJSON`, untyped, go-yaml v2), so `yes`/`on` are booleans, merge keys apply,
 * and a repeated key keeps its last value.
 */
export const FRAGMENT_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  uniqueKeys: false,
  customTags: goYaml11Tags(true),
};

/** Options of the YAML 1.2 core reading. */
export const CORE_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.2',
  uniqueKeys: false,
  strict: true,
  prettyErrors: false,
};

/** `toJS` options: aliases capped (billion-laughs safe). */
export const TO_JS_OPTIONS: ToJSOptions = { maxAliasCount: 100 };

/** A key Kubernetes cannot read: a duplicate, or a collection used as a key (`? [a, b]`). */
export interface KeyProblem {
  problem: 'duplicate' | 'complex';
  /** The key as text (YAML flow form for a collection key). */
  key: string;
  /** Offset of the key in the source. */
  offset: number;
}

/**
 * The first key problem of any mapping in the document, or undefined: a duplicate scalar key, or a
 * mapping or sequence used as a key (sigs.k8s.io/yaml refuses such keys: "Unsupported map key"). Linear in
 * the size of the document (a Set per mapping). Merge keys (`<<`) may repeat.
 */
export function findKeyProblem(doc: Document): KeyProblem | undefined {
  let found: KeyProblem | undefined;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map) || found) return visit.BREAK;
      const seen = new Set<string>();
      for (const p of map.items) {
        const k = p.key;
        if (isScalar(k) && typeof k.value === 'symbol') continue;
        if (!isScalar(k)) {
          if (k === null || k === undefined) continue;
          found = {
            problem: 'complex',
            key: String(k),
            offset: (k as { range?: [number, number, number] }).range?.[0] ?? 0,
          };
          return visit.BREAK;
        }
        const id = `${typeof k.value}:${String(k.value)}`;
        if (seen.has(id)) {
          found = { problem: 'duplicate', key: String(k.value), offset: k.range?.[0] ?? 0 };
          return visit.BREAK;
        }
        seen.add(id);
      }
      return undefined;
    },
  });
  return found;
}

/** A one-line message for a key problem (without the place). */
export function keyProblemMessage(p: KeyProblem): string {
  return p.problem === 'duplicate'
    ? `Map keys must be unique (duplicate key \`${p.key}\`)`
    : `a mapping or sequence used as a key (\`? ${p.key}\`): Kubernetes reads only scalar keys`;
}

/** The result of reading a text: the documents' data, or the first problem (syntax error, duplicate key). */
export type ReadResult = { ok: true; values: unknown[] } | { ok: false; error: string };

function readAll(text: string, options: ParseOptions & DocumentOptions & SchemaOptions, bigInts: boolean): ReadResult {
  const docs = parseAllDocuments(text, { ...options, intAsBigInt: bigInts });
  if (!Array.isArray(docs)) return { ok: false, error: 'not a YAML stream' };
  const values: unknown[] = [];
  for (const d of docs) {
    const err = d.errors[0];
    if (err) return { ok: false, error: err.message.split('\n', 1)[0] ?? '' };
    const problem = findKeyProblem(d);
    if (problem) return { ok: false, error: keyProblemMessage(problem) };
    try {
      values.push(d.toJS(TO_JS_OPTIONS));
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }
  return { ok: true, values };
}

/**
 * Reads every document of a text as Kubernetes does (YAML 1.1, merge keys applied). With `bigInts`,
 * integers are `bigint`s, so digits beyond 2^53 are compared exactly.
 */
export function readKubernetes(text: string, bigInts = false): ReadResult {
  return readAll(text, K8S_YAML_OPTIONS, bigInts);
}

/** Reads every document of a text with the YAML 1.2 core schema (no merge keys). */
export function readCore(text: string, bigInts = false): ReadResult {
  return readAll(text, CORE_YAML_OPTIONS, bigInts);
}

/**
 * Reads a functionConfig given as text (CLI `--config`): one YAML document, YAML 1.2 core schema as before,
 * duplicate keys refused in linear time (a 40 000-key `spec.istio.values` is read in well under a second).
 *
 * @throws Error with a one-line message for a syntax error, a duplicate or complex key, or an alias bomb
 */
export function readConfigText(text: string): unknown {
  const doc = parseDocument(text, CORE_YAML_OPTIONS);
  const err = doc.errors[0];
  if (err) throw new Error(err.message.split('\n')[0]);
  const problem = findKeyProblem(doc);
  if (problem) throw new Error(keyProblemMessage(problem));
  return doc.toJS(TO_JS_OPTIONS);
}
