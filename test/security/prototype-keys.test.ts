/**
 * Keys named like `Object.prototype` members are valid Kubernetes label and annotation keys and valid keys
 * of Helm values and mesh config. Every map that input reaches must treat them as plain keys: no crash, no
 * bogus validation error, and the key comes out with its value.
 */
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/run.ts';

const NAMES = Object.getOwnPropertyNames(Object.prototype);

const workload = (key: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {${JSON.stringify(key)}: ns, mesh: "on"}
  annotations: {${JSON.stringify(key)}: ns}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {${JSON.stringify(key)}: w}
  annotations: {${JSON.stringify(key)}: w}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, ${JSON.stringify(key)}: pod}
      annotations: {${JSON.stringify(key)}: pod}
    spec:
      containers:
      - name: web
        image: web:1
        env:
        - {name: ${JSON.stringify(key)}, value: v}
---
apiVersion: example.com/v1
kind: WebApp
metadata: {name: app, namespace: shop}
spec:
  ${JSON.stringify(key)}:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - {name: app, image: app:1}
`;

const otherApp = `apiVersion: example.com/v1
kind: OtherApp
metadata: {name: other, namespace: shop}
spec: {replicas: 1}
`;

/** A config reaching every map with `key` (label selectors only where `key` is a valid label key). */
const config = (key: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
  namespaceSelector: {matchLabels: {mesh: "on"}}
  neverInjectSelector: [{matchLabels: {${/^[A-Za-z0-9]/.test(key) ? JSON.stringify(key) : 'x'}: never-matches}}]
  workloadKinds:
  - {kind: WebApp, templatePath: [spec, ${JSON.stringify(key)}]}
  - {kind: OtherApp, templatePath: [spec, ${JSON.stringify(key)}]}
  istio:
    values: {global: {${JSON.stringify(key)}: 1}, ${JSON.stringify(key)}: {a: 1}}
    meshConfig: {${JSON.stringify(key)}: 1, defaultConfig: {proxyMetadata: {${JSON.stringify(key)}: "x"}}}
`;

t.test(
  'every Object.prototype name as a key in labels, annotations, values, meshConfig and workloadKinds',
  async (t) => {
    t.ok(NAMES.includes('__proto__') && NAMES.includes('constructor') && NAMES.includes('valueOf'));
    for (const key of NAMES) {
      const out = run(workload(key), { functionConfig: config(key) });
      t.equal(out.exitCode, 0, `${key}: exit 0 (${out.stderr.split('\n')[0]})`);
      t.notMatch(out.stderr, /internal error|TypeError/, `${key}: no crash`);
      const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as Record<string, any>);
      const dep = docs[1]!;
      const own = (o: unknown) =>
        o !== null && typeof o === 'object' && Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
      t.equal(own(dep.spec.template.metadata.labels), 'pod', `${key}: pod label kept`);
      t.equal(own(dep.spec.template.metadata.annotations), 'pod', `${key}: pod annotation kept`);
      t.equal(own(dep.metadata.labels), 'w', `${key}: workload label kept`);
      t.match(JSON.stringify(dep.spec.template.spec.containers), /istio-proxy/, `${key}: injected`);
      t.match(
        JSON.stringify(own(docs[2]!.spec)),
        /istio-proxy/,
        `${key}: a declared kind whose template path uses the name is injected`,
      );
      const other = run(otherApp, { functionConfig: config(key) });
      t.equal(other.exitCode, 1, `${key}: a declared kind without that template path is an error`);
      t.match(
        other.stderr,
        new RegExp(`OtherApp "shop/other": spec\\.${key.replace(/[_$]/g, '\\$&')}\\.spec is required`),
        `${key}: naming the path, not a prototype read`,
      );
    }
  },
);

/**
 * Issue 36, section 2: a key a tenant writes never reaches a plain object's prototype. The generator picks a key
 * named like an `Object.prototype` member and a route it can travel (every driver's config, template data of both
 * engines, patch paths, annotation maps, the fragment merge) and nests it up to three deep; whatever the route,
 * `Object.prototype` is untouched afterwards, and the run is either an injection (exit 0) or an error result
 * naming the resource (exit 1), never an internal error.
 */
const KEYS = [...NAMES, 'prototype'];
const q = JSON.stringify;
/** `{K: {K: ... leaf}}`, `depth` deep, as YAML flow. */
const nest = (key: string, depth: number, leaf: string): string =>
  depth === 0 ? leaf : `{${q(key)}: ${nest(key, depth - 1, leaf)}}`;
const pod = (meta: string) => `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kuma.io/sidecar-injection: enabled, istio-injection: enabled}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}${meta}}
    spec:
      containers:
      - {name: web, image: web:1, ports: [{containerPort: 8080}]}
`;
const cfg = (mesh: string, section: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
  mesh: ${mesh}
  policy: enabled
${section}`;
const KUMA_CP = '    controlPlane: {caCert: "-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"}\n';

interface Route {
  input: string;
  functionConfig: string;
}
const ROUTES: Record<string, (key: string, depth: number) => Route> = {
  'kuma containerPatches add path': (k, d) => ({
    input: pod(', annotations: {kuma.io/container-patches: p}'),
    functionConfig: cfg(
      'kuma',
      `  kuma:\n${KUMA_CP}    containerPatches:\n      p: {sidecarPatch: [{op: add, path: ${q(`/${Array(d).fill(k).join('/')}/z/x`)}, value: '"1"'}], initPatch: [{op: add, path: ${q(`/${k}/y`)}, value: '{"a": 1}'}]}\n`,
    ),
  }),
  'kuma controlPlaneConfig': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'kuma',
      `  kuma:\n${KUMA_CP}    controlPlaneConfig: {runtime: {kubernetes: {injector: ${nest(k, d, '1')}}}, ${q(k)}: ${nest(k, d, '1')}}\n`,
    ),
  }),
  'istio values': (k, d) => ({
    input: pod(''),
    functionConfig: cfg('istio', `  istio:\n    values: {global: ${nest(k, d, '1')}, ${q(k)}: ${nest(k, d, '1')}}\n`),
  }),
  'istio meshConfig': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'istio',
      `  istio:\n    meshConfig: {defaultConfig: {proxyMetadata: {${q(k)}: x}}, ${q(k)}: ${nest(k, d, '1')}}\n`,
    ),
  }),
  'istio proxy.istio.io/config annotation': (k, d) => ({
    input: pod(`, annotations: {proxy.istio.io/config: ${q(nest(k, d, '1'))}}`),
    functionConfig: cfg('istio', ''),
  }),
  'istio Go template dict/pick/index': (k, d) => ({
    input: pod(', annotations: {inject.istio.io/templates: t}'),
    functionConfig: cfg(
      'istio',
      `  istio:\n    values:\n      sidecarInjectorWebhook:\n        templates:\n          t: ${q(`{{- $d := dict ${q(k)} (dict ${q(k)} ${d}) }}{{ $p := pick $d ${q(k)} }}metadata:\n  annotations:\n    a: '{{ toJson $p }}'\n    b: '{{ index $d ${q(k)} ${q(k)} }}'\n    c: '{{ hasKey $d "x" }}'\n`)}\n`,
    ),
  }),
  'custom values and fragment maps': (k, d) => ({
    input: pod(`, annotations: {${q(k)}: pod}`),
    functionConfig: cfg(
      'custom',
      `  custom:\n    values: ${nest(k, d, 'v')}\n    templates:\n      sidecar: ${q(`metadata:\n  labels: {${q(k)}: '{{json values}}'}\n  annotations: {b: x}\nspec:\n  containers:\n  - name: s\n    image: s:1\n    env: [{name: A, value: '{{json values}}'}]\n`)}\n`,
    ),
  }),
  // A list entry new to the pod, merged by key (session 47: `mergeMap` read `{}[k]` and merged into Object.prototype).
  'custom fragment list entries': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'custom',
      `  custom:\n    templates:\n      sidecar: ${q(`spec:\n  containers:\n  - name: s\n    image: s:1\n    ${q(k)}: ${nest(k, d, '{a: v}')}\n  volumes:\n  - name: v\n    emptyDir: {}\n    ${q(k)}: ${nest(k, d, '{b: v}')}\n`)}\n`,
    ),
  }),
  'istio template list entries': (k, d) => ({
    input: pod(', annotations: {inject.istio.io/templates: t}'),
    functionConfig: cfg(
      'istio',
      `  istio:\n    values:\n      sidecarInjectorWebhook:\n        templates:\n          t: ${q(`spec:\n  containers:\n  - name: web\n    ${q(k)}: ${nest(k, d, '{a: v}')}\n  - name: s\n    image: s:1\n    ${q(k)}: ${nest(k, d, '{a: v}')}\n`)}\n`,
    ),
  }),
  'linkerd values': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'linkerd',
      `  linkerd:\n    values: {proxy: ${nest(k, d, '1')}, ${q(k)}: ${nest(k, d, '1')}}\n`,
    ),
  }),
  'osm meshConfig': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'osm',
      `  osm:\n    meshConfig: {spec: {sidecar: ${nest(k, d, '1')}, ${q(k)}: ${nest(k, d, '1')}}}\n`,
    ),
  }),
  'fsm meshConfig': (k, d) => ({
    input: pod(''),
    functionConfig: cfg(
      'fsm',
      `  fsm:\n    meshConfig: {spec: {sidecar: ${nest(k, d, '1')}, ${q(k)}: ${nest(k, d, '1')}}}\n`,
    ),
  }),
  'pod labels and annotations': (k) => ({
    input: pod(`, annotations: {${q(k)}: a}`).replace('labels: {app: web}', `labels: {app: web, ${q(k)}: l}`),
    functionConfig: cfg('istio', ''),
  }),
};

/** Object.prototype's own properties, each with its value or accessors. */
function prototypeSnapshot(): Map<string | symbol, unknown> {
  const out = new Map<string | symbol, unknown>();
  for (const k of Reflect.ownKeys(Object.prototype)) {
    const d = Object.getOwnPropertyDescriptor(Object.prototype, k)!;
    out.set(k, [d.value, d.get, d.set, d.writable, d.enumerable]);
  }
  return out;
}

t.test(
  'generated: a tenant key on any route never reaches Object.prototype; the run injects or names an error',
  async (t) => {
    const before = prototypeSnapshot();
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.constantFrom(...KEYS),
        fc.constantFrom(...Object.keys(ROUTES)),
        fc.integer({ min: 1, max: 3 }),
        (key, route, depth) => {
          const r = ROUTES[route]!(key, depth);
          const out = run(r.input, { functionConfig: r.functionConfig });
          const what = `${route}, key ${q(key)}, depth ${depth}`;
          const after = prototypeSnapshot();
          const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
            (k) => JSON.stringify(before.get(k)) !== JSON.stringify(after.get(k)) || before.has(k) !== after.has(k),
          );
          if (changed.length > 0)
            throw new Error(`${what}: Object.prototype changed: ${changed.map(String).join(', ')}`);
          if (out.exitCode !== 0 && out.exitCode !== 1)
            throw new Error(`${what}: exit ${out.exitCode}: ${out.stderr.slice(0, 400)}`);
          if (/internal error|TypeError|RangeError|\n\s+at \S+ \(/.test(out.stderr))
            throw new Error(`${what}: not a clean error: ${out.stderr.slice(0, 600)}`);
          if (out.exitCode === 1 && !/Deployment "shop\/web"|spec\.|functionConfig/.test(out.stderr))
            throw new Error(`${what}: the error names nothing: ${out.stderr.slice(0, 400)}`);
          seen.add(`${route}: exit ${out.exitCode}`);
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
    t.pass(`routes and outcomes seen: ${[...seen].sort().join('; ')}`);
    t.equal(
      new Set([...seen].map((s) => s.replace(/: exit \d$/, ''))).size,
      Object.keys(ROUTES).length,
      'every route was generated',
    );
  },
);

/**
 * The scan that keeps the class closed (issue 36, section 2), over every source file in src/:
 * - a key read out of another object (a loop over `Object.keys`, `Object.entries`, `sortedKeys` or `keys`) is
 *   written with `setOwn`/`assignOwn` (src/json.ts), never `out[k] = ...` (which, for `__proto__`, changes `out`'s
 *   prototype instead); a line may say `// fixed key:` when its keys come from a constant list;
 * - a walk down a path (`node = node[key]`) checks `Object.hasOwn` on the same line, so `__proto__` or
 *   `constructor` never leads it to a prototype, whose keys the next step would write;
 * - `Object.assign` copies only objects the program made itself (the lines listed here), never data;
 * - in such a loop, and in a `for...in` loop, another object is read at the key (`x[k]`, `k in x`) only as an own key
 *   (`Object.hasOwn(x, k)` on the line or on a line before it in the loop, or `// own key:` / `// fixed key:` saying
 *   why the key cannot name a prototype member): for `__proto__` a plain read gives `Object.prototype`, and a merge
 *   that goes on into it writes the data's keys into every object of the process (session 47: `mergeMap` of
 *   src/patch/strategic-merge.ts, a custom template's list entry with a `__proto__` map).
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');
const ASSIGN_ALLOWED = [
  /out\.push\(Object\.assign\(rangeOf\(item\)/,
  /Object\.assign\(this, range\)/,
  /Object\.assign\(defaults, s\)/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The places in `text` that break the rules above, as `line: text`. */
function keyCopyFindings(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  const header =
    /for \((?:const|let) (?:\[\s*(\w+)\s*,[^\]]*\]|(\w+)) (?:of (?:Object\.(?:keys|entries)\(([\w.]+)|sortedKeys\(|keys\b)|in ([\w.]+))/;
  lines.forEach((line, i) => {
    if (/\b(\w+) = \(?\1\[(?!Number\()/.test(line) && !/Object\.hasOwn|hasOwnProperty/.test(line))
      found.push(`${i + 1}: path walk without Object.hasOwn: ${line.trim()}`);
    if (/Object\.assign\(/.test(line) && !ASSIGN_ALLOWED.some((a) => a.test(line)))
      found.push(`${i + 1}: Object.assign (use assignOwn): ${line.trim()}`);
    const m = header.exec(line);
    if (!m) return;
    const key = (m[1] ?? m[2])!;
    if (key === '_') return;
    const iterated = m[3] ?? m[4];
    const indent = /^\s*/.exec(line)![0].length;
    const write = new RegExp(`[\\w.)\\]]\\[${key}\\]\\s*(=(?!=)|\\?\\?=)`);
    const read = new RegExp(`(delete )?([\\w.]+)\\[${key}\\](?!\\s*=[^=])|\\b${key} in ([\\w.]+)`, 'g');
    const guarded = new Set<string>();
    for (let j = i; j < lines.length; j++) {
      const l = lines[j]!;
      if (j > i && l.trim() !== '' && /^\s*/.exec(l)![0].length <= indent) break;
      const said = l.includes('// fixed key:') || l.includes('// own key:');
      if (write.test(l) && !said) found.push(`${j + 1}: key ${key} copied without setOwn: ${l.trim()}`);
      for (const g of l.matchAll(new RegExp(`Object\\.hasOwn\\(([\\w.]+), ${key}\\)`, 'g'))) guarded.add(g[1]!);
      if (!said && !l.trim().startsWith('//'))
        for (const r of l.matchAll(read)) {
          const obj = r[2] ?? r[3]!;
          if (r[1] || obj === iterated || guarded.has(obj)) continue;
          found.push(`${j + 1}: ${obj} read at key ${key} without Object.hasOwn: ${l.trim()}`);
        }
      if (j === i && !/\{\s*$/.test(line)) break;
    }
  });
  return found;
}

t.test(
  'source scan: keys read from data are written with setOwn, paths walk own keys, no Object.assign of data',
  async (t) => {
    const files = sourceFiles(SRC);
    t.ok(files.length > 100, `${files.length} source files scanned`);
    for (const f of files) t.same(keyCopyFindings(readFileSync(f, 'utf8')), [], relative(SRC, f));
    // The scan finds what it is for (a rule that can never fire proves nothing).
    t.same(
      keyCopyFindings('for (const [k, v] of Object.entries(src)) out[k] = v;').length,
      1,
      'a copy loop on one line',
    );
    t.same(
      keyCopyFindings('  for (const k of Object.keys(src)) {\n    if (x) out[k] = src[k];\n  }').length,
      1,
      'a copy loop body',
    );
    t.same(keyCopyFindings('    node = node[key]!;').length, 1, 'a path walk');
    t.same(keyCopyFindings('Object.assign(out, values);').length, 1, 'Object.assign');
    t.same(keyCopyFindings('for (const k of Object.keys(src)) setOwn(out, k, src[k]);').length, 0, 'setOwn passes');
    t.same(
      keyCopyFindings('  for (const k in patch) {\n    const o = original[k];\n  }').length,
      1,
      'a read of another object at a for...in key',
    );
    t.same(keyCopyFindings('for (const k in patch) original[k] = patch[k];').length, 1, 'a for...in copy');
    t.same(keyCopyFindings('for (const k of Object.keys(t)) if (k in c) setOwn(out, k, c[k]);').length, 2, 'k in c');
    t.same(
      keyCopyFindings('  for (const k in patch) {\n    if (!Object.hasOwn(o, k)) continue;\n    f(o[k]);\n  }').length,
      0,
      'a read after Object.hasOwn passes',
    );
  },
);
