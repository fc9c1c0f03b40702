// Configuration layering (src/config/layering.ts): several --config files merge as Helm values files do.
import t from 'tap';
import {
  mergeConfigLayers,
  overrideLayers,
  parseConfigLayer,
  type ConfigLayer,
  type ConfigOverrides,
} from '../../src/config/layering.ts';
import { istioDriver } from '../../src/drivers/istio/index.ts';
import { run } from '../../src/run.ts';

const SI = { apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection' };
const layer = (name: string, spec: Record<string, unknown>, head: Record<string, unknown> = SI): ConfigLayer => ({
  name,
  value: { ...head, spec } as ConfigLayer['value'],
});

t.test('maps merge key by key, later scalars and lists replace earlier ones', async (t) => {
  const r = mergeConfigLayers([
    layer('base.yaml', {
      policy: 'disabled',
      ignoredNamespaces: ['a', 'b'],
      istio: { values: { global: { hub: 'h', tag: '1' } } },
    }),
    layer('app.yaml', { ignoredNamespaces: ['c'], istio: { values: { global: { tag: '2' } } } }),
  ]);
  t.same(
    r,
    {
      ok: true,
      value: {
        ...SI,
        spec: { policy: 'disabled', ignoredNamespaces: ['c'], istio: { values: { global: { hub: 'h', tag: '2' } } } },
      },
    },
    'policy kept from base; the list replaced, not appended; tag overridden, hub kept',
  );
});

t.test('a later null removes the field (Helm)', async (t) => {
  const r = mergeConfigLayers([layer('a', { policy: 'disabled', nativeSidecars: true }), layer('b', { policy: null })]);
  t.same(r, { ok: true, value: { ...SI, spec: { nativeSidecars: true } } });
});

t.test('a map against a scalar or a list is an error naming both files and the field', async (t) => {
  const r = mergeConfigLayers([
    layer('base.yaml', { namespaceSelector: { matchLabels: { mesh: 'on' } } }),
    layer('other.yaml', { policy: 'enabled' }),
    layer('app.yaml', { namespaceSelector: ['x'] }),
  ]);
  t.equal(r.ok, false);
  if (!r.ok) {
    t.match(r.message, /^spec\.namespaceSelector: /);
    t.match(r.message, /app\.yaml sets a list where base\.yaml sets a map/);
  }
  const scalarFirst = mergeConfigLayers([
    layer('a.yaml', { istio: { values: '{"global":{}}' } }),
    layer('b.yaml', { istio: { values: { global: {} } } }),
  ]);
  t.match(scalarFirst, { ok: false, message: /spec\.istio\.values: b\.yaml sets a map where a\.yaml sets a string/ });
});

t.test('the file named for a conflict is the one that set the value last', async (t) => {
  const r = mergeConfigLayers([
    layer('one.yaml', { istio: { values: { global: { hub: 'x' } } } }),
    layer('two.yaml', { istio: { values: { global: { proxy: { image: 'p' } } } } }),
    layer('three.yaml', { istio: { values: { global: { proxy: 'flat' } } } }),
  ]);
  t.match(r, { ok: false, message: /three\.yaml sets a string where two\.yaml sets a map/ });
});

t.test('layers of different kinds or apiVersions are an error naming both', async (t) => {
  const r = mergeConfigLayers([
    layer('base.yaml', {}),
    { name: 'cm.yaml', value: { apiVersion: 'v1', kind: 'ConfigMap', data: { policy: 'enabled' } } },
  ]);
  t.match(r, { ok: false, message: /cm\.yaml has kind "ConfigMap" but base\.yaml has kind "SidecarInjection"/ });
  const v = mergeConfigLayers([
    layer('a.yaml', {}),
    layer('b.yaml', {}, { apiVersion: 'meshinject.dev/v1beta9', kind: 'SidecarInjection' }),
  ]);
  t.match(v, { ok: false, message: /b\.yaml has apiVersion "meshinject\.dev\/v1beta9" but a\.yaml/ });
});

t.test('Object.prototype names are ordinary keys', async (t) => {
  const a = parseConfigLayer(
    'kind: SidecarInjection\nspec:\n  istio:\n    values: {__proto__: {x: 1}, constructor: a, toString: b}\n',
    'a',
  );
  const b = parseConfigLayer(
    'kind: SidecarInjection\nspec:\n  istio:\n    values: {__proto__: {y: 2}, hasOwnProperty: c}\n',
    'b',
  );
  t.ok(a.ok && b.ok);
  if (!a.ok || !b.ok) return;
  const r = mergeConfigLayers([
    { name: 'a', value: a.value },
    { name: 'b', value: b.value },
  ]);
  t.ok(r.ok);
  if (!r.ok) return;
  const values = (r.value.spec as Record<string, Record<string, Record<string, unknown>>>).istio!.values!;
  t.same(Object.keys(values).sort(), ['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
  t.same(Object.getOwnPropertyDescriptor(values, '__proto__')?.value, { x: 1, y: 2 }, '__proto__ merged as data');
  t.equal(({} as Record<string, unknown>).x, undefined, 'no prototype pollution');
});

t.test("parseConfigLayer: messages in the user's terms", async (t) => {
  t.match(parseConfigLayer('- a\n- b\n', '--config l.yaml'), {
    ok: false,
    syntax: false,
    message: /--config l\.yaml: .*got a list/,
  });
  t.match(parseConfigLayer('kind: A\n---\nkind: B\n', '--config two.yaml'), {
    ok: false,
    syntax: true,
    message: /holds 2 YAML documents/,
  });
  const dup = parseConfigLayer('kind: A\nspec: {}\nkind: B\n', '--config d.yaml');
  t.match(dup, { ok: false, syntax: true, message: /--config d\.yaml, line 3: a key appears twice/ });
  t.notMatch(JSON.stringify(dup), /parseAllDocuments|YAML\.parse/);
  t.match(parseConfigLayer('', 'e'), { ok: false, message: /is empty/ });
  t.match(parseConfigLayer('"just text"', 's'), { ok: false, message: /got a string/ });
});

/** The overrides the Istio driver's flags make of `values` (its declared flags, `MeshDriver.flags`), as the CLI hands them on. */
function istioFlags(values: Record<string, { name: string; text: string }>): NonNullable<ConfigOverrides['sections']> {
  const r = istioDriver.flags!.overrides(values);
  if (!r.ok) throw new Error(r.message);
  return r.overrides.map((f) => ({ section: istioDriver.name, ...f }));
}

t.test('overrides: spec fields for a SidecarInjection, data keys for a ConfigMap; they win conflicts', async (t) => {
  const o = {
    defaultNamespace: { value: 'shop', from: '--default-namespace' },
    sections: istioFlags({ revision: { name: '--revision', text: 'canary' } }),
  };
  const si = overrideLayers(o, 'SidecarInjection');
  t.ok(si.ok);
  if (!si.ok) return;
  const merged = mergeConfigLayers([
    layer('base.yaml', { defaultNamespace: 'x', istio: { revision: 'stable' } }),
    ...si.layers,
  ]);
  t.same(merged, { ok: true, value: { ...SI, spec: { defaultNamespace: 'shop', istio: { revision: 'canary' } } } });
  const cm = overrideLayers(o, 'ConfigMap');
  t.same(cm.ok && cm.layers.map((l) => l.value), [
    { data: { defaultNamespace: 'shop' } },
    { data: { 'istio.revision': 'canary' } },
  ]);
  const values = overrideLayers(
    { sections: istioFlags({ valuesFile: { name: '--valuesFile v.json', text: '{"global": {}}' } }) },
    'SidecarInjection',
  );
  t.ok(values.ok);
  if (!values.ok) return;
  const win = mergeConfigLayers([layer('base.yaml', { istio: { values: '{"global": {}}' } }), ...values.layers]);
  t.same(
    win,
    { ok: true, value: { ...SI, spec: { istio: { values: { global: {} } } } } },
    'the flag replaces a pasted string',
  );
  t.match(
    overrideLayers(
      { sections: istioFlags({ injectConfigFile: { name: '--injectConfigFile c', text: 'policy: enabled' } }) },
      'ConfigMap',
    ),
    { ok: false, message: /needs a SidecarInjection/ },
  );
});

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
`;

t.test('run: the layers decide together (a later file does not lose the earlier policy)', async (t) => {
  const base = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  policy: disabled\n';
  const app = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  nativeSidecars: true\n';
  const out = run(DEPLOYMENT, {
    functionConfigs: [
      { name: '--config base.yaml', text: base },
      { name: '--config app.yaml', text: app },
    ],
  });
  t.equal(out.exitCode, 0);
  t.match(out.results.find((r) => r.resourceRef?.kind === 'Deployment')?.message, /^skipped \(policy-disabled\)/);
  const conflict = run(DEPLOYMENT, {
    functionConfigs: [
      { name: '--config base.yaml', text: base },
      { name: '--config cm.yaml', text: 'apiVersion: v1\nkind: ConfigMap\ndata: {}\n' },
    ],
  });
  t.equal(conflict.exitCode, 1);
  t.equal(conflict.stdout, '');
  t.match(conflict.stderr, /cm\.yaml has kind "ConfigMap" but --config base\.yaml has kind "SidecarInjection"/);
});

t.test('run: default namespace override; a ResourceList functionConfig that is a list says so', async (t) => {
  const cfg =
    'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  defaultNamespace: other\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n  namespaces: [{name: shop, labels: {mesh: "on"}}]\n';
  const plain = run(DEPLOYMENT, { functionConfig: cfg });
  t.match(
    plain.results.find((r) => r.resourceRef)?.message,
    /namespace-not-selected/,
    'spec.defaultNamespace alone: other',
  );
  const over = run(DEPLOYMENT, {
    functionConfig: cfg,
    overrides: { defaultNamespace: { value: 'shop', from: 'ARGOCD_APP_NAMESPACE' } },
  });
  t.match(
    over.results.find((r) => r.resourceRef)?.message,
    /^injected/,
    'the override wins over spec.defaultNamespace',
  );
  const rl = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- ${DEPLOYMENT.trimEnd().replace(/\n/g, '\n  ')}\nfunctionConfig:\n- a\n- b\n`;
  const listCfg = run(rl);
  t.equal(listCfg.exitCode, 1);
  t.match(listCfg.stderr, /got a list/);
});

t.test(
  'a functionConfig with a 40 000-key map is read, duplicates found by a Set (speed: npm run bench)',
  async (t) => {
    const keys = Array.from({ length: 40000 }, (_, i) => `    k${i}: "v${i}"`).join('\n');
    const text = `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: wide}\nspec:\n  istio:\n    values:\n      global:\n        proxy:\n          x: 1\n      wide:\n${keys.replace(/^ {4}/gm, '        ')}\n`;
    const r = parseConfigLayer(text, '--config wide.yaml');
    t.equal(r.ok, true, 'read');
    const dup = parseConfigLayer(`${text}        k7: "again"\n`, '--config wide.yaml');
    t.match(
      dup,
      { ok: false, message: /line 40011: a key appears twice in the same map \(`k7`\)/ },
      'duplicates still found, with their line',
    );
  },
);
