/**
 * Issue #40: Istio's steps after the merge copy only what they change.
 * - `alignInjectedKeyOrder` keeps a container whose keys already stand in the template's order instead of
 *   copying it: the pod it gives is the one the copy gives (same keys, order and values), for containers and
 *   templates drawn from a pool of keys that holds numeric keys and names a plain object inherits
 *   (`constructor`, `toString`, `__proto__`), in either list.
 * - `postProcessPod` takes a container as its own only when a step writes into it (the proxy's env, an app
 *   container's rewritten probe or hook): on a pod whose containers and init containers are shared
 *   (deep-frozen, as a sidecar plan's parts are) it gives what it gives on an unshared copy of the same pod, and
 *   leaves the shared parts as they were.
 */
import t from 'tap';
import fc from 'fast-check';
import { alignInjectedKeyOrder } from '../../../src/drivers/istio/inject.ts';
import { postProcessPod } from '../../../src/drivers/istio/postprocess.ts';
import { cloneJson, setOwn, share } from '../../../src/json.ts';
import type { Json, JsonObject, PodTemplate } from '../../../src/model.ts';

/** The copy `alignInjectedKeyOrder` made of every injected container before it kept aligned ones (reference). */
function alignByCopy(pod: PodTemplate, templatePod: PodTemplate): void {
  for (const list of ['containers', 'initContainers'] as const) {
    const templ = (templatePod.spec[list] ?? []) as JsonObject[];
    const items = pod.spec[list];
    if (!Array.isArray(items) || templ.length === 0) continue;
    pod.spec[list] = (items as JsonObject[]).map((c) => {
      const tc = templ.find((x) => x.name === String(c.name));
      if (!tc) return c;
      const out: JsonObject = {};
      // Own keys only: a template key named like a prototype member (`constructor`) that the container lacks is absent.
      for (const k of Object.keys(tc)) if (Object.hasOwn(c, k)) setOwn(out, k, c[k]);
      for (const k of Object.keys(c)) if (!Object.hasOwn(out, k)) setOwn(out, k, c[k]);
      return out;
    });
  }
}

/** A pod as the user sees it written: own keys in order with their values, at every level. */
function shown(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(shown).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.getOwnPropertyNames(v)
      .map((k) => `${JSON.stringify(k)}:${shown((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/** A plain copy of container `c` with its own keys in order (an own `__proto__` too, which `cloneJson` drops). */
function copyByKey(c: JsonObject): JsonObject {
  const o: JsonObject = {};
  for (const k of Object.keys(c)) setOwn(o, k, c[k] as Json);
  return o;
}

const KEY_POOL = [
  'name',
  'image',
  'args',
  'env',
  'ports',
  'resources',
  '0',
  '7',
  'constructor',
  'toString',
  '__proto__',
];

/** A container named `name` with keys from `KEY_POOL` in the drawn order (`__proto__` as an own key). */
const containerNamed = (name: string): fc.Arbitrary<JsonObject> =>
  fc.tuple(fc.uniqueArray(fc.constantFrom(...KEY_POOL), { maxLength: 7 }), fc.boolean()).map(([keys, nameFirst]) => {
    const c: JsonObject = {};
    if (nameFirst) c.name = name;
    for (const k of keys) if (k !== 'name') setOwn(c, k, `${k}-value`);
    if (!nameFirst) c.name = name;
    return c;
  });

const NAMES = ['istio-proxy', 'istio-init', 'app'];
const containerList = fc
  .uniqueArray(fc.constantFrom(...NAMES), { maxLength: 3 })
  .chain((names) => fc.tuple(...names.map(containerNamed)));

t.test('alignInjectedKeyOrder gives the pod its copy of every container gives', (t) => {
  fc.assert(
    fc.property(
      containerList,
      containerList,
      containerList,
      containerList,
      fc.boolean(),
      (cs, inits, tcs, tinits, templateFromPod) => {
        const pod: PodTemplate = { metadata: {}, spec: { containers: cs, initContainers: inits } };
        // A template pod of the same containers (a fresh injection: the keys already aligned) or of others.
        const templatePod: PodTemplate = templateFromPod
          ? cloneJson(pod)
          : { metadata: {}, spec: { containers: tcs, initContainers: tinits } };
        const expected: PodTemplate = {
          metadata: {},
          spec: { containers: cs.map(copyByKey), initContainers: inits.map(copyByKey) },
        };
        alignByCopy(expected, templatePod);
        alignInjectedKeyOrder(pod, templatePod);
        t.equal(shown(pod.spec.containers), shown(expected.spec.containers));
        t.equal(shown(pod.spec.initContainers), shown(expected.spec.initContainers));
      },
    ),
    { numRuns: 300 },
  );
  t.end();
});

/** A probe (or hook) of each kind Istio rewrites, or none. */
const handler = fc.oneof(
  fc.constant(undefined),
  fc.constant({ httpGet: { path: '/ready', port: 8080, scheme: 'HTTPS' } }),
  fc.constant({ tcpSocket: { port: 'http' } }),
  fc.constant({ grpc: { port: 9090 }, timeoutSeconds: 3 }),
);

/** An app container with optional probes and hooks. */
const appContainer = (name: string): fc.Arbitrary<JsonObject> =>
  fc.record({ ready: handler, live: handler, start: handler, pre: handler, post: handler }).map((h) => {
    const c: JsonObject = { name, image: 'app', ports: [{ name: 'http', containerPort: 8080 }] };
    if (h.ready) c.readinessProbe = h.ready;
    if (h.live) c.livenessProbe = h.live;
    if (h.start) c.startupProbe = h.start;
    if (h.pre || h.post) {
      const lifecycle: JsonObject = {};
      if (h.pre) lifecycle.preStop = h.pre;
      if (h.post) lifecycle.postStart = h.post;
      c.lifecycle = lifecycle;
    }
    return c;
  });

const proxy = fc.record({ env: fc.boolean(), secure: fc.boolean() }).map(({ env, secure }): JsonObject => {
  const c: JsonObject = { name: 'istio-proxy', image: 'proxyv2' };
  if (env) c.env = [{ name: 'ISTIO_META_X', value: 'x' }];
  if (secure)
    c.env = [...((c.env as Json[] | undefined) ?? []), { name: 'ENVOY_SECURE_MERGED_METRICS_PORT', value: '15443' }];
  return c;
});

const postProcessCase = fc.record({
  apps: fc.tuple(appContainer('app'), appContainer('side')),
  initApp: fc.option(appContainer('prepare'), { nil: undefined }),
  proxy,
  native: fc.boolean(),
  network: fc.boolean(),
  scrape: fc.boolean(),
  rewriteProbes: fc.boolean(),
  holdApplication: fc.boolean(),
  reinjected: fc.boolean(),
});

t.test('postProcessPod on shared containers gives what it gives on an unshared copy', (t) => {
  fc.assert(
    fc.property(postProcessCase, (k) => {
      const init: JsonObject = { name: 'istio-init', image: 'proxyv2', args: ['istio-iptables'] };
      const inits = [init, ...(k.initApp ? [k.initApp] : []), ...(k.native ? [k.proxy] : [])];
      const containers = [...k.apps, ...(k.native ? [] : [k.proxy])];
      const annotations: Record<string, string> = {};
      if (k.scrape) annotations['prometheus.io/scrape'] = 'true';
      if (k.reinjected) annotations['sidecar.istio.io/status'] = '{"containers":["istio-proxy"]}';
      const make = (): PodTemplate => ({
        metadata: { labels: { app: 'a' }, annotations: { ...annotations } },
        spec: { containers: cloneJson(containers), initContainers: cloneJson(inits) },
      });
      const params = (pod: PodTemplate) => ({
        proxyEnvs: k.network ? { ISTIO_META_NETWORK: 'net1' } : {},
        meshConfig: {},
        statusPort: 15020,
        rewriteProbes: k.rewriteProbes,
        holdApplication: k.holdApplication,
        templateSpec: cloneJson(pod.spec),
        revision: '',
      });
      const plain = make();
      postProcessPod(plain, params(plain));
      const sharedPod = make();
      sharedPod.spec.containers = share(sharedPod.spec.containers as Json[]);
      sharedPod.spec.initContainers = share(sharedPod.spec.initContainers as Json[]);
      const frozenParts = [...(sharedPod.spec.containers as Json[]), ...(sharedPod.spec.initContainers as Json[])];
      postProcessPod(sharedPod, params(make()));
      t.equal(shown(sharedPod), shown(plain));
      t.equal(shown(frozenParts), shown([...containers, ...inits]), 'the shared parts are as they were');
    }),
    { numRuns: 200 },
  );
  t.end();
});
