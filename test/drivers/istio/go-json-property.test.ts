/**
 * The JSON Istio's Go code writes into a pod is written as Go's `encoding/json` writes it: struct fields in their
 * declaration order whatever order the user wrote them in, `omitempty` fields left out, a gRPC action's `service`
 * always there, and `<`, `>`, `&` escaped (`\u003c`, `\u003e`, `\u0026`). Routes: `ISTIO_KUBE_APP_PROBERS` (every
 * probe and lifecycle hook of every app container and init container: httpGet, tcpSocket, gRPC),
 * `ISTIO_PROMETHEUS_ANNOTATIONS` (legacy annotations and scrape targets), `proxy.istio.io/overrides` (a user's
 * own `istio-proxy`). Generated Deployments write each action's keys in any order; each must be injected, injected
 * again byte for byte and uninjected byte for byte (with every driver, as their probe rewrites differ), and Istio's
 * values must not depend on the order of the user's keys.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { run } from '../../../src/index.ts';
import { faithfulEveryDriver } from '../../helpers/round-trip-drivers.ts';

type Fields = Array<[string, string]>;

/** `[key, YAML value]` pairs in a generated order. */
const ordered = (fields: fc.Arbitrary<Fields>): fc.Arbitrary<Fields> =>
  fields.chain((fs) => fc.shuffledSubarray(fs, { minLength: fs.length, maxLength: fs.length }));

const text = fc.constantFrom("'/healthz'", "'/a?x=1&y=<2>'", "'/m&n'");
const httpGet = ordered(
  fc
    .record(
      {
        path: text,
        port: fc.constantFrom('8080', 'http'),
        host: fc.constantFrom("'h&h'", 'localhost'),
        scheme: fc.constantFrom('HTTP', 'HTTPS'),
        httpHeaders: fc.constantFrom("[{name: X-A, value: 'a&b'}]"),
      },
      { requiredKeys: ['port'] },
    )
    .map((r) => Object.entries(r)),
).map((fs) => ['httpGet', fs] as const);
const tcpSocket = ordered(
  fc
    .record({ port: fc.constantFrom('8080', 'http'), host: fc.constantFrom("'h<1>'") }, { requiredKeys: ['port'] })
    .map((r) => Object.entries(r)),
).map((fs) => ['tcpSocket', fs] as const);
const grpc = ordered(
  fc
    .record(
      { port: fc.constantFrom('9090'), service: fc.constantFrom("'svc&1'", 'health') },
      { requiredKeys: ['port'] },
    )
    .map((r) => Object.entries(r)),
).map((fs) => ['grpc', fs] as const);

/** A probe or hook: its action (block, or a flow map), and for a probe maybe a timeout. */
const handler = (probe: boolean) =>
  fc.record({
    action: probe ? fc.oneof(httpGet, tcpSocket, grpc) : fc.oneof(httpGet, tcpSocket),
    flow: fc.boolean(),
    timeout: probe ? fc.constantFrom(undefined, 3) : fc.constant(undefined),
  });
type Handler = { action: readonly [string, Fields]; flow: boolean; timeout: number | undefined };

function handlerLines(h: Handler, col: number): string {
  const pad = ' '.repeat(col);
  const [kind, fields] = h.action;
  const body = h.flow
    ? `${pad}${kind}: {${fields.map(([k, v]) => `${k}: ${v}`).join(', ')}}\n`
    : `${pad}${kind}:\n${fields.map(([k, v]) => `${pad}  ${k}: ${v}\n`).join('')}`;
  return `${body}${h.timeout === undefined ? '' : `${pad}timeoutSeconds: ${h.timeout}\n`}`;
}

const container = fc.record(
  {
    readinessProbe: handler(true),
    livenessProbe: handler(true),
    startupProbe: handler(true),
    preStop: handler(false),
    postStart: handler(false),
  },
  { requiredKeys: [] },
);

function containerText(name: string, c: Partial<Record<string, Handler>>): string {
  let out = `      - name: ${name}\n        image: nginx\n        ports:\n        - name: http\n          containerPort: 8080\n`;
  for (const p of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
    const h = c[p];
    if (h) out += `        ${p}:\n${handlerLines(h, 10)}`;
  }
  const hooks = (['preStop', 'postStart'] as const).filter((k) => c[k]);
  if (hooks.length > 0) {
    out += '        lifecycle:\n';
    for (const k of hooks) out += `          ${k}:\n${handlerLines(c[k] as Handler, 12)}`;
  }
  return out;
}

const prometheus = fc.record(
  {
    'prometheus.io/scrape': fc.constant('"true"'),
    'prometheus.io/path': fc.constantFrom("'/stats?a=1&b=<2>'", '/metrics'),
    'prometheus.io/port': fc.constantFrom('"8080"'),
    'prometheus.istio.io/scrape-targets': fc.constantFrom("'8080:/a&b,9100'", "'9100: /x '"),
  },
  { requiredKeys: [] },
);

const deployment = fc
  .record({ app: container, init: fc.option(container, { nil: undefined }), annotations: prometheus })
  .filter(({ app }) => Object.keys(app).length > 0)
  .map(({ app, init, annotations }) => {
    const annos = Object.entries(annotations);
    const meta =
      annos.length === 0
        ? ''
        : `    metadata:\n      annotations:\n${annos.map(([k, v]) => `        ${k}: ${v}\n`).join('')}`;
    return (
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n' +
      `${meta}    spec:\n` +
      (init ? `      initContainers:\n${containerText('setup', init)}` : '') +
      `      containers:\n${containerText('app', app)}`
    );
  });

faithfulEveryDriver(t, "probes and prometheus annotations Istio's Go writes as JSON", deployment, 25);

const ISTIO = [
  'apiVersion: meshinject.dev/v1alpha1',
  'kind: SidecarInjection',
  'metadata: {name: prop}',
  'spec: {mesh: istio, policy: enabled, resultAnnotations: false}',
  '',
].join('\n');

/** The `istio-proxy` container's env values by name, and the pod's annotations, of an injected Deployment or Pod. */
function injected(text: string): { env: Record<string, string>; annotations: Record<string, string> } {
  const out = run(text, { functionConfig: ISTIO });
  if (out.exitCode !== 0) throw new Error(`inject failed: ${out.stderr}\n${text}`);
  const doc = parse(out.stdout);
  const pod = doc.kind === 'Pod' ? doc : doc.spec.template;
  const proxy = pod.spec.containers.find((c: { name: string }) => c.name === 'istio-proxy');
  const env: Record<string, string> = {};
  for (const e of proxy.env) if (typeof e.value === 'string') env[e.name] = e.value;
  return { env, annotations: pod.metadata.annotations ?? {} };
}

/** Go's field order of each struct the values hold, by the key that holds it. */
const GO_ORDER: Record<string, string[]> = {
  httpGet: ['path', 'port', 'host', 'scheme', 'httpHeaders'],
  tcpSocket: ['port', 'host'],
  grpc: ['port', 'service'],
  httpHeaders: ['name', 'value'],
};

/** Whether every object in `v` (parsed JSON) under a key of GO_ORDER lists its keys in Go's order. */
function inGoOrder(v: unknown, holder = ''): boolean {
  if (Array.isArray(v)) return v.every((x) => inGoOrder(x, holder));
  if (typeof v !== 'object' || v === null) return true;
  const order = GO_ORDER[holder];
  if (order) {
    const keys = Object.keys(v);
    const positions = keys.map((k) => order.indexOf(k));
    if (positions.some((p, i) => p < 0 || (i > 0 && p < (positions[i - 1] ?? 0)))) return false;
  }
  return Object.entries(v).every(([k, x]) => inGoOrder(x, k));
}

t.test("Istio's JSON values: Go's field order and escaping, whatever the order of the user's keys", async (t) => {
  let probers = 0;
  let scrape = 0;
  fc.assert(
    fc.property(deployment, (text) => {
      const { env } = injected(text);
      // The same Deployment with every action's keys in one fixed order gives the same values.
      const sorted = injected(
        text.replace(/^( +)(httpGet|tcpSocket|grpc):\n((?:\1 {2}.*\n)+)/gm, (_, pad, kind, body: string) => {
          const lines = body.split('\n').filter((l) => l !== '');
          return `${pad}${kind}:\n${lines.sort().join('\n')}\n`;
        }),
      ).env;
      for (const name of ['ISTIO_KUBE_APP_PROBERS', 'ISTIO_PROMETHEUS_ANNOTATIONS']) {
        const value = env[name];
        if (value === undefined) continue;
        if (name === 'ISTIO_KUBE_APP_PROBERS') probers++;
        else scrape++;
        if (/[<>&]/.test(value)) throw new Error(`${name} holds an unescaped <, > or &: ${value}`);
        const data = JSON.parse(value);
        if (!inGoOrder(data)) throw new Error(`${name} is not in Go's field order: ${value}`);
        if (
          name === 'ISTIO_PROMETHEUS_ANNOTATIONS' &&
          Object.keys(data).join() !==
            Object.keys(data)
              .filter((k) => k !== 'targets')
              .concat(data.targets ? ['targets'] : [])
              .join()
        )
          throw new Error(`targets last: ${value}`);
        if (sorted[name] !== value)
          throw new Error(`${name} depends on the user's key order:\n${value}\n${sorted[name]}`);
      }
      return true;
    }),
    { numRuns: 60 },
  );
  t.ok(probers >= 30, `most generated pods have probers (${probers} of 60)`);
  t.ok(scrape >= 20, `many have a scrape configuration (${scrape} of 60)`);
});

t.test("facts from Istio's own tests and code", async (t) => {
  const pod = (probe: string, annotations = '') =>
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n' +
    (annotations ? `  annotations:\n${annotations}` : '') +
    `spec:\n  containers:\n  - name: foo\n    image: nginx\n${probe}`;
  // TestDumpAppGRPCProbers (pkg/kube/inject/app_probe_test.go): a gRPC action without a service has "service": null.
  t.equal(
    injected(pod('    livenessProbe:\n      grpc:\n        port: 1234\n')).env.ISTIO_KUBE_APP_PROBERS,
    '{"/app-health/foo/livez":{"grpc":{"port":1234,"service":null}}}',
  );
  // The same test: an HTTP hook in Go's order (path, port, host, scheme), written here in reverse.
  t.equal(
    injected(
      pod(
        '    lifecycle:\n      preStop:\n        httpGet:\n          scheme: HTTP\n          host: foo\n          port: 1234\n          path: /foo\n',
      ),
    ).env.ISTIO_KUBE_APP_PROBERS,
    '{"/app-lifecycle/foo/prestopz":{"httpGet":{"path":"/foo","port":1234,"host":"foo","scheme":"HTTP"}}}',
  );
  // applyPrometheusMerge: with scrape targets, port and path are the first target's, whatever the legacy ones say;
  // a target's path is kept as written (ParseScrapeTargets adds no slash).
  t.equal(
    injected(
      pod(
        '',
        "    prometheus.io/port: '8080'\n    prometheus.io/path: /old\n    prometheus.istio.io/scrape-targets: '9100:metrics,9200'\n",
      ),
    ).env.ISTIO_PROMETHEUS_ANNOTATIONS,
    '{"scrape":"","path":"metrics","port":"9100","targets":[{"port":"9100","path":"metrics"},{"port":"9200","path":"/metrics"}]}',
  );
  // Istio refuses a legacy port it cannot scrape, with its own message.
  for (const [port, message] of [
    ['abc', 'invalid prometheus scrape configuration: invalid port "abc"'],
    [
      '15090',
      'invalid prometheus scrape configuration: port 15090 is reserved for Istio (Envoy Prometheus (already merged)) and cannot be scraped',
    ],
    ['015020', 'invalid prometheus scrape configuration: port 015020 conflicts with agent port'],
  ]) {
    const out = run(pod('', `    prometheus.io/port: '${port}'\n`), { functionConfig: ISTIO });
    t.equal(out.exitCode, 1, `port ${port} refused`);
    t.match(out.stderr, message);
  }
  // An entry with no port makes Istio drop the targets (a logged warning), not refuse the pod.
  t.equal(
    injected(pod('', "    prometheus.io/port: '8080'\n    prometheus.istio.io/scrape-targets: ':/x'\n")).env
      .ISTIO_PROMETHEUS_ANNOTATIONS,
    '{"scrape":"","path":"","port":"8080"}',
  );
});
