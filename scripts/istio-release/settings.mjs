// The injection settings Istio's TestInjection renders per case (pkg/kube/inject/webhook_test.go
// `getInjectionSettings`, tags 1.26+): the operator's `GenerateManifest(iop, setFlags + [installPackagePath,
// profile=empty, components.pilot.enabled=true])`, then the istiod chart's `istio-sidecar-injector` ConfigMap
// (`config`, `values`) and `istio` ConfigMap (`mesh`). Reproduced from the tag's own files; a chart template that
// changed shape stops the import instead of giving wrong settings.
import { parse } from 'yaml';
import { parseFlagValue } from './go-source.mjs';

const isMap = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = (v) => (v === undefined ? undefined : structuredClone(v));

/** Go YAML (sigs.k8s.io/yaml over yaml.v2) as JSON values: YAML 1.1 scalars. */
export function goYaml(text) {
  return parse(text, { version: '1.1', merge: true }) ?? {};
}

/** The operator's `values.Map.MergeFrom`: maps merge recursively, anything else replaces. */
export function mergeFrom(dst, src) {
  for (const [k, v] of Object.entries(src)) {
    if (isMap(v) && isMap(dst[k])) mergeFrom(dst[k], v);
    else dst[k] = clone(v);
  }
  return dst;
}

/** Sprig `mergeOverwrite` (mergo WithOverride): as {@link mergeFrom}; a `null` from `src` overwrites too. */
export function mergeOverwrite(dst, src) {
  return mergeFrom(dst, src);
}

const ALWAYS_STRING = [
  'spec.values.compatibilityVersion',
  'spec.tag',
  'spec.values.global.tag',
  'spec.meshConfig.defaultConfig.proxyMetadata.',
  'spec.values.meshConfig.defaultConfig.proxyMetadata.',
  'spec.compatibilityVersion',
];

/** The operator's `SetPath` for `a.b.c=value` (plain dotted paths only; list selectors are refused). */
export function setPath(m, flag) {
  const eq = flag.indexOf('=');
  const path = flag.slice(0, eq);
  const raw = flag.slice(eq + 1);
  if (/[[\]\\]/.test(path)) throw new Error(`unsupported --set path: ${path}`);
  const value = ALWAYS_STRING.some((p) => path.startsWith(p)) ? raw : parseFlagValue(raw);
  const parts = path.split('.').filter((p) => p !== '');
  let cur = m;
  for (const p of parts.slice(0, -1)) {
    if (!isMap(cur[p])) cur[p] = {};
    cur = cur[p];
  }
  cur[parts.at(-1)] = value;
}

/** The values the operator hands the istiod chart (operator/pkg/render/manifest.go `MergeInputs`). */
function operatorValues(files, setFlags, iopText) {
  const user = { apiVersion: 'install.istio.io/v1alpha1', kind: 'IstioOperator', metadata: {}, spec: {} };
  if (iopText !== undefined) {
    const m = goYaml(iopText);
    if (m.spec === null || m.spec === undefined) delete m.spec;
    mergeFrom(user, m);
  }
  for (const f of [...setFlags, `installPackagePath=manifests`, 'profile=empty', 'components.pilot.enabled=true'])
    setPath(user, `spec.${f}`);
  const profile = user.spec.profile || 'default';
  const base = goYaml(files.profile('default'));
  if (profile !== 'default') mergeFrom(base, goYaml(files.profile(profile)));
  mergeFrom(base, user);
  const spec = base.spec ?? {};
  for (const [from, to] of [
    ['hub', 'global.hub'],
    ['tag', 'global.tag'],
    ['revision', 'revision'],
    ['compatibilityVersion', 'compatibilityVersion'],
  ]) {
    if (spec[from] !== undefined) setPath(base, `spec.values.${to}=${spec[from]}`);
  }
  if (isMap(spec.meshConfig)) mergeFrom(base, { spec: { values: { meshConfig: spec.meshConfig } } });
  setPath(base, `spec.values.pilot.enabled=${spec.components?.pilot?.enabled === true}`);
  setPath(base, `spec.values.pilot.cni.enabled=${spec.components?.cni?.enabled === true}`);
  if (isMap(user.spec.values)) mergeFrom(base, { spec: { values: user.spec.values } });
  return base.spec.values ?? {};
}

/** The chart's `.Values` after zzz_profile.yaml and zzy_descope_legacy.yaml (no helm profile, platform or compatibility version). */
function chartValues(files, userValues) {
  const chart = goYaml(files.chart('values.yaml'));
  const defaults = clone(chart._internal_defaults_do_not_set ?? {});
  for (const k of ['profile', 'compatibilityVersion']) {
    if (userValues[k] || userValues.global?.[k]) throw new Error(`unsupported: the case selects a chart ${k}`);
  }
  if (userValues.global?.platform) throw new Error('unsupported: the case selects a chart platform');
  const values = mergeOverwrite(defaults, userValues);
  if (isMap(values.pilot)) mergeOverwrite(values, values.pilot);
  return values;
}

function pick(o, keys) {
  const out = {};
  for (const k of keys) if (isMap(o) && k in o) out[k] = clone(o[k]);
  return out;
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isMap(v)) return v;
  const out = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
  return out;
}

const PICK_VALUES = /\{\{ \$vals := pick \.Values ((?:"[^"]+" ?)+) -\}\}/;
const PICK_PILOT = /\{\{ \$pilotVals := pick \.Values ((?:"[^"]+" ?)+) -\}\}/;
const PICK_GATEWAYS = /\{\{ \$gatewayVals := pick \.Values\.gateways ((?:"[^"]+" ?)+) -\}\}/;
const TEMPLATE_FILE =
  /\{\{- if not \(hasKey \.Values\.sidecarInjectorWebhook\.templates "([^"]+)"\) \}\}\n {6}\1: \|\n\{\{ \.Files\.Get "(files\/[^"]+)" \| trim \| indent 8 \}\}\n\{\{- end \}\}/g;
const names = (s) => [...s.matchAll(/"([^"]+)"/g)].map((m) => m[1]);

/**
 * What istiod-injector-configmap.yaml takes from the values: the pick lists and the template files, in order.
 * @throws Error when the chart template does not have the shape this reproduction knows
 */
export function injectorShape(text) {
  const v = PICK_VALUES.exec(text);
  const p = PICK_PILOT.exec(text);
  const g = PICK_GATEWAYS.exec(text);
  const files = [...text.matchAll(TEMPLATE_FILE)].map((m) => ({ name: m[1], file: m[2] }));
  const required = [
    '{{ $vals = set $vals "pilot" $pilotVals -}}',
    '{{ $vals = set $vals "gateways" $gatewayVals -}}',
    '{{- with .Values.sidecarInjectorWebhook.templates }}\n{{ toYaml . | trim | indent 6 }}',
    '  config: |-',
    'policy: {{ .Values.global.proxy.autoInject }}',
    'defaultTemplates: [sidecar]',
  ];
  const missing = required.filter((r) => !text.includes(r));
  if (!v || !p || !g || files.length === 0 || missing.length > 0) {
    throw new Error(
      `istiod-injector-configmap.yaml changed shape (missing: ${[!v && 'values pick', !p && 'pilot pick', !g && 'gateways pick', files.length === 0 && 'template files', ...missing].filter(Boolean).join(', ')}); update scripts/istio-release/settings.mjs`,
    );
  }
  return { values: names(v[1]), pilot: names(p[1]), gateways: names(g[1]), files };
}

/** Helm `trim` (Go strings.TrimSpace). */
const trim = (s) => s.replace(/^[\s\u0085\u00a0]+|[\s\u0085\u00a0]+$/g, '');

/**
 * The `config` of the ConfigMap as UnmarshalConfig keeps it: templates are the chart files trimmed plus one newline,
 * the user templates (values.sidecarInjectorWebhook.templates, sorted) after them; the last entry of the `|-` block
 * has no final newline. Also returns where each template came from, for the corpus' self-check.
 */
function injectorConfig(files, shape, values) {
  const swi = values.sidecarInjectorWebhook ?? {};
  const userTemplates = isMap(swi.templates) ? swi.templates : {};
  const templates = {};
  const origin = {};
  for (const { name, file } of shape.files) {
    if (name in userTemplates) continue;
    const text = files.chart(file);
    templates[name] = `${trim(text)}\n`;
    origin[name] = { kind: 'file', text };
  }
  for (const name of Object.keys(userTemplates).sort()) {
    templates[name] = userTemplates[name];
    origin[name] = { kind: 'iop', text: userTemplates[name] };
  }
  const last = Object.keys(templates).at(-1);
  templates[last] = templates[last].replace(/\n+$/, '');
  const defaultTemplates =
    Array.isArray(swi.defaultTemplates) && swi.defaultTemplates.length > 0 ? swi.defaultTemplates : ['sidecar'];
  return {
    config: {
      policy: values.global?.proxy?.autoInject,
      alwaysInjectSelector: swi.alwaysInjectSelector ?? [],
      neverInjectSelector: swi.neverInjectSelector ?? [],
      injectedAnnotations: isMap(swi.injectedAnnotations) ? { ...swi.injectedAnnotations } : {},
      defaultTemplates,
      templates,
    },
    origin,
  };
}

/** The `mesh` of ConfigMap `istio` (templates/configmap.yaml) for the values the test cases use. */
function meshOf(values) {
  const g = values.global ?? {};
  const unsupported = [
    g.meshID && 'global.meshID',
    (g.proxy?.variant || g.variant) && 'variant',
    g.proxy?.tracer && g.proxy.tracer !== 'none' && 'global.proxy.tracer',
    g.remotePilotAddress && 'global.remotePilotAddress',
    values.revision && 'revision',
    values.telemetry?.v2?.stackdriver?.enabled && 'stackdriver',
  ].filter(Boolean);
  if (unsupported.length > 0) throw new Error(`unsupported mesh inputs: ${unsupported.join(', ')}`);
  const mesh = {
    trustDomain: 'cluster.local',
    rootNamespace: values.meshConfig?.rootNamespace || g.istioNamespace,
    defaultProviders: { metrics: ['prometheus'] },
    defaultConfig: { discoveryAddress: 'istiod.istio-system.svc:15012' },
  };
  return sortKeys(mergeOverwrite(mesh, values.meshConfig ?? {}));
}

/**
 * The settings of one case: `injectorConfig` (ConfigMap `config`), `values` (the picked `data.values`, keys sorted as
 * Helm's toPrettyJson writes them), `meshConfig` (ConfigMap `istio` `mesh`, keys sorted) and the origin of each
 * template.
 * @param files `{ chart(path), profile(name) }`: files of the tag
 */
export function renderSettings(files, setFlags, iopText) {
  const shape = injectorShape(files.chart('templates/istiod-injector-configmap.yaml'));
  const values = chartValues(files, operatorValues(files, setFlags, iopText));
  const picked = pick(values, shape.values);
  picked.pilot = pick(values, shape.pilot);
  picked.gateways = pick(values.gateways, shape.gateways);
  const { config, origin } = injectorConfig(files, shape, values);
  return { injectorConfig: config, values: sortKeys(picked), meshConfig: meshOf(values), origin };
}
