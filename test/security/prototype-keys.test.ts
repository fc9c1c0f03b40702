/**
 * Keys named like `Object.prototype` members are valid Kubernetes label and annotation keys and valid keys
 * of Helm values and mesh config. Every map that input reaches must treat them as plain keys: no crash, no
 * bogus validation error, and the key comes out with its value.
 */
import t from 'tap';
import { parseAllDocuments } from 'yaml';
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

t.test('every Object.prototype name as a key in labels, annotations, values, meshConfig and workloadKinds', async (t) => {
  t.ok(NAMES.includes('__proto__') && NAMES.includes('constructor') && NAMES.includes('valueOf'));
  for (const key of NAMES) {
    const out = run(workload(key), { functionConfig: config(key) });
    t.equal(out.exitCode, 0, `${key}: exit 0 (${out.stderr.split('\n')[0]})`);
    t.notMatch(out.stderr, /internal error|TypeError/, `${key}: no crash`);
    const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as Record<string, any>);
    const dep = docs[1]!;
    const own = (o: unknown) => (o !== null && typeof o === 'object' && Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined);
    t.equal(own(dep.spec.template.metadata.labels), 'pod', `${key}: pod label kept`);
    t.equal(own(dep.spec.template.metadata.annotations), 'pod', `${key}: pod annotation kept`);
    t.equal(own(dep.metadata.labels), 'w', `${key}: workload label kept`);
    t.match(JSON.stringify(dep.spec.template.spec.containers), /istio-proxy/, `${key}: injected`);
    t.match(JSON.stringify(own(docs[2]!.spec)), /istio-proxy/, `${key}: a declared kind whose template path uses the name is injected`);
    const other = run(otherApp, { functionConfig: config(key) });
    t.equal(other.exitCode, 1, `${key}: a declared kind without that template path is an error`);
    t.match(other.stderr, new RegExp(`OtherApp "shop/other": spec\\.${key.replace(/[_$]/g, '\\$&')}\\.spec is required`), `${key}: naming the path, not a prototype read`);
  }
});
