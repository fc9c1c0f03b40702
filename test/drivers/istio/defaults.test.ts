import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  ISTIO_CHART_VALUES,
  ISTIO_MESH_DEFAULTS,
  ISTIO_VERSION,
  mergeValues,
} from '../../../src/drivers/istio/defaults.ts';
import type { JsonObject } from '../../../src/model.ts';
import { corpus, needs } from '../../helpers/data.ts';

const CHART = corpus('conformance/istio/chart-defaults');
const injectorValues = (
  CHART.url ? JSON.parse(readFileSync(new URL('injector-values.json', CHART.url), 'utf8')) : {}
) as JsonObject;
const chartMesh = (CHART.url ? parse(readFileSync(new URL('mesh.yaml', CHART.url), 'utf8')) : {}) as JsonObject;

t.test('chart values equal the injector values Istio renders, except hub and tag', needs(CHART), async (t) => {
  const expected = structuredClone(injectorValues) as { global: JsonObject };
  expected.global.hub = 'docker.io/istio';
  expected.global.tag = ISTIO_VERSION;
  t.same(ISTIO_CHART_VALUES, expected);
  t.match(ISTIO_VERSION, /^1\.\d+\.\d+$/);
});

t.test('mesh defaults carry the chart mesh on top of DefaultMeshConfig', needs(CHART), async (t) => {
  const merged = mergeValues(ISTIO_MESH_DEFAULTS, chartMesh);
  t.same(merged, ISTIO_MESH_DEFAULTS, 'applying the chart mesh changes nothing');
  const defaultConfig = ISTIO_MESH_DEFAULTS.defaultConfig as JsonObject;
  t.equal(defaultConfig.discoveryAddress, 'istiod.istio-system.svc:15012');
  t.equal(defaultConfig.statusPort, 15020);
  t.equal(defaultConfig.drainDuration, '45s');
  t.same(ISTIO_MESH_DEFAULTS.defaultProviders, { metrics: ['prometheus'] });
  t.equal(ISTIO_MESH_DEFAULTS.enablePrometheusMerge, true);
  t.equal(ISTIO_MESH_DEFAULTS.rootNamespace, 'istio-system');
  t.equal(ISTIO_MESH_DEFAULTS.trustDomain, 'cluster.local');
  t.equal(ISTIO_MESH_DEFAULTS.proxyListenPort, 15001);
  t.equal(ISTIO_MESH_DEFAULTS.proxyInboundListenPort, 15006);
  t.same(ISTIO_MESH_DEFAULTS.inboundTrafficPolicy, { mode: 'PASSTHROUGH' });
});

t.test('mergeValues: objects deep-merged, arrays and scalars replaced, null kept', async (t) => {
  const base: JsonObject = { a: { b: 1, c: [1, 2], d: { e: 'x' } }, keep: true };
  const out = mergeValues(base, { a: { c: [3], d: { f: 'y' }, n: null }, s: 'new' });
  t.same(out, { a: { b: 1, c: [3], d: { e: 'x', f: 'y' }, n: null }, keep: true, s: 'new' });
  t.same(base, { a: { b: 1, c: [1, 2], d: { e: 'x' } }, keep: true }, 'base not modified');
  t.same(mergeValues(base, undefined), base);
  const nulled = mergeValues(ISTIO_CHART_VALUES, { global: { proxy: { resources: { limits: { cpu: null } } } } });
  const resources = ((nulled.global as JsonObject).proxy as JsonObject).resources as JsonObject;
  t.same(resources.limits, { cpu: null, memory: '1024Mi' });
  t.equal(((ISTIO_CHART_VALUES.global as JsonObject).proxy as JsonObject).resources !== resources, true);
});
