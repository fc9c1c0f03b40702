/**
 * Issue #40: `rewriteProbes` (URLs made only for the probes there are) and `modifyContainers` (one pass) give what
 * their earlier versions gave; the earlier versions (main before the change) are kept below as the reference.
 * `dumpAppProbers` writes what Istio's Go writes (`json.Marshal` of `KubeAppProbers`, pkg/kube/inject/app_probe.go):
 * its reference below writes each action by hand in the field order of Kubernetes' Go structs, HTML-escaped, with
 * `omitempty` fields left out and a gRPC action's `service` always there. Generated pod specs hold probes and hooks
 * of every handler kind, actions with their keys in any order, unknown keys, `&`, `<` and `>` in strings, named and
 * numbered ports, repeated and missing container names, non-map handlers.
 */
import t from 'tap';
import fc from 'fast-check';
import { dumpAppProbers, proberUrls, rewriteProbes } from '../../../src/drivers/istio/probes.ts';
import { containersOf, modifyContainers, ownedListed, PROXY_CONTAINER } from '../../../src/drivers/istio/pod-fields.ts';
import { declaredPorts, resolveNamedPort } from '../../../src/drivers/kit/ports.ts';
import { ISTIO_PROBE_PORTS } from '../../../src/drivers/istio/probes.ts';
import { cloneJson, isJsonObject, owned, setOwn } from '../../../src/json.ts';
import type { Json, JsonObject } from '../../../src/model.ts';

// ---- The reference: the earlier code, as it was.
function appContainers(spec: JsonObject): JsonObject[] {
  return [...containersOf(spec, 'initContainers'), ...containersOf(spec, 'containers')].filter(
    (c) => c.name !== PROXY_CONTAINER,
  );
}

/** Go's string escaping, HTML-safe (`encoding/json`): written here without the product's helper. */
function goString(s: string): string {
  return JSON.stringify(s)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

/** An action's JSON as Go writes its struct (k8s.io/api/core/v1): `[name, value, omitempty]` in field order. */
function goAction(kind: string, a: JsonObject, port: Json): string {
  const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '');
  const fields: Array<[string, string, boolean]> =
    kind === 'httpGet'
      ? [
          ['path', goString(str(a.path)), str(a.path) === ''],
          ['port', typeof port === 'string' ? goString(port) : String(port), false],
          ['host', goString(str(a.host)), str(a.host) === ''],
          ['scheme', goString(str(a.scheme)), str(a.scheme) === ''],
          [
            'httpHeaders',
            `[${(Array.isArray(a.httpHeaders) ? a.httpHeaders : [])
              .map((h) => {
                const o = h as JsonObject;
                return `{"name":${goString(str(o.name))},"value":${goString(str(o.value))}}`;
              })
              .join(',')}]`,
            !Array.isArray(a.httpHeaders) || a.httpHeaders.length === 0,
          ],
        ]
      : kind === 'tcpSocket'
        ? [
            ['port', typeof port === 'string' ? goString(port) : String(port), false],
            ['host', goString(str(a.host)), str(a.host) === ''],
          ]
        : [
            ['port', String(typeof a.port === 'number' ? a.port : 0), false],
            ['service', typeof a.service === 'string' ? goString(a.service) : 'null', false],
          ];
  return `{${fields
    .filter(([, , omit]) => !omit)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
}

/** The prober entry of a probe or hook, as Go's JSON text: `{httpGet|tcpSocket|grpc, timeoutSeconds?}`, port resolved. */
function proberOf(
  handler: Json | undefined,
  container: JsonObject,
  statusPort: number,
  isProbe: boolean,
): string | undefined {
  if (!isJsonObject(handler)) return undefined;
  const timeout =
    isProbe && typeof handler.timeoutSeconds === 'number' && handler.timeoutSeconds !== 0
      ? `,"timeoutSeconds":${handler.timeoutSeconds}`
      : '';
  const kind = isJsonObject(handler.httpGet)
    ? 'httpGet'
    : isJsonObject(handler.tcpSocket)
      ? 'tcpSocket'
      : isProbe && isJsonObject(handler.grpc)
        ? 'grpc'
        : undefined;
  if (!kind) return undefined;
  const action = handler[kind] as JsonObject;
  if (kind === 'grpc') return `{"grpc":${goAction(kind, action, null)}${timeout}}`;
  const given = action.port ?? 0; // Go: an absent or null IntOrString is the number 0
  const port = resolveNamedPort(given, declaredPorts(container), ISTIO_PROBE_PORTS);
  if (port === undefined) return undefined;
  if (typeof given === 'number' && port === statusPort) return undefined; // already rewritten
  return `{"${kind}":${goAction(kind, action, port)}${timeout}}`;
}

/**
 * Istio `DumpAppProbers`: the JSON map (sorted keys) of every app container's readiness/liveness/startup probe
 * (httpGet, tcpSocket, grpc) and preStop/postStart hook (httpGet, tcpSocket), keyed by agent URL; `''` when
 * there are none.
 */
function oldDumpAppProbers(spec: JsonObject, statusPort: number): string {
  const out: Record<string, string> = {};
  for (const c of appContainers(spec)) {
    const name = typeof c.name === 'string' ? c.name : '';
    const urls = proberUrls(name);
    const add = (url: string, v: string | undefined): void => {
      if (v) out[url] = v;
    };
    add(urls.readyz, proberOf(c.readinessProbe, c, statusPort, true));
    add(urls.livez, proberOf(c.livenessProbe, c, statusPort, true));
    add(urls.startupz, proberOf(c.startupProbe, c, statusPort, true));
    if (isJsonObject(c.lifecycle)) {
      add(urls.prestopz, proberOf(c.lifecycle.preStop, c, statusPort, false));
      add(urls.poststartz, proberOf(c.lifecycle.postStart, c, statusPort, false));
    }
  }
  const keys = Object.keys(out).sort();
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${goString(k)}:${out[k]}`).join(',')}}`;
}

/** `rewriteHTTPGetAction` on a probe or hook: httpGet/tcpSocket/grpc → httpGet {path: url, port}, HTTPS → HTTP. */
function convertHandler(
  handler: Json | undefined,
  url: string,
  port: number,
  isProbe: boolean,
): JsonObject | undefined {
  if (!isJsonObject(handler)) return undefined;
  const h = cloneJson(handler);
  if (isJsonObject(h.httpGet)) {
    h.httpGet.port = port;
    h.httpGet.path = url;
    if (h.httpGet.scheme === 'HTTPS') h.httpGet.scheme = 'HTTP';
    return h;
  }
  const other = isJsonObject(h.tcpSocket) ? 'tcpSocket' : isProbe && isJsonObject(h.grpc) ? 'grpc' : undefined;
  if (!other) return undefined;
  delete h[other];
  h.httpGet = { path: url, port };
  return h;
}

/**
 * Istio `patchRewriteProbe`: rewrites the probes and hooks of every non-proxy container and init container. A
 * container is written into only where it has something to rewrite (taken with `ownedListed` first: `spec`'s
 * container lists must be writable, `ownPodFrame`).
 */
function oldRewriteProbes(spec: JsonObject, statusPort: number): void {
  for (const listed of appContainers(spec)) {
    let c = listed;
    const urls = proberUrls(typeof c.name === 'string' ? c.name : '');
    for (const [field, url] of [
      ['readinessProbe', urls.readyz],
      ['livenessProbe', urls.livez],
      ['startupProbe', urls.startupz],
    ] as const) {
      const p = convertHandler(c[field], url, statusPort, true);
      if (p) {
        c = ownedListed(spec, c);
        c[field] = p;
      }
    }
    if (isJsonObject(c.lifecycle)) {
      const pre = convertHandler(c.lifecycle.preStop, urls.prestopz, statusPort, false);
      const post = convertHandler(c.lifecycle.postStart, urls.poststartz, statusPort, false);
      if (pre || post) c = ownedListed(spec, c);
      const lifecycle = pre || post ? owned<JsonObject>(c, 'lifecycle') : undefined;
      if (lifecycle && pre) lifecycle.preStop = pre;
      if (lifecycle && post) lifecycle.postStart = post;
    }
  }
}

function oldModifyContainers(list: readonly JsonObject[], name: string, op: 'first' | 'last' | 'remove'): JsonObject[] {
  const rest = list.filter((c) => c.name !== name);
  const matches = list.filter((c) => c.name === name);
  const match = matches[matches.length - 1];
  if (!match) return rest;
  if (op === 'first') return [match, ...rest];
  if (op === 'last') return [...rest, match];
  return rest;
}

// ---- Generated specs.

const name = fc.constantFrom<Json>('app', 'web', 'istio-proxy', '', 3);
const port = fc.oneof(fc.constantFrom<Json>('http', 'grpc', '', 'nope', 8080, 15020, '8080'), fc.constant(null));
/** A record whose keys come in a shuffled order (Go writes its own order whatever the user's). */
const shuffled = (r: fc.Arbitrary<Record<string, Json>>): fc.Arbitrary<JsonObject> =>
  fc.tuple(r, fc.array(fc.nat(), { minLength: 8, maxLength: 8 })).map(([o, perm]) => {
    const keys = Object.keys(o).sort(
      (a, b) => (perm[a.length % 8] ?? 0) - (perm[b.length % 8] ?? 0) || (a < b ? 1 : -1),
    );
    const out: JsonObject = {};
    for (const k of keys) setOwn(out, k, o[k] as Json);
    return out;
  });
const text = fc.constantFrom('/h', '/', '', '/a?x=1&y=<2>', 'h\u2028');
const action = shuffled(
  fc.record(
    {
      port,
      path: text,
      scheme: fc.constantFrom('HTTP', 'HTTPS', ''),
      host: text,
      httpHeaders: fc.array(fc.record({ name: text, value: text }, { requiredKeys: ['name'] }), { maxLength: 2 }),
      unknown: fc.constant<Json>('dropped'),
    },
    { requiredKeys: [] },
  ),
);
const grpcAction = shuffled(
  fc.record(
    { port: fc.constantFrom<Json>(7000, 0, null), service: fc.constantFrom<Json>('s&t', '', null) },
    { requiredKeys: [] },
  ),
);
const handler: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ httpGet: action, timeoutSeconds: fc.constantFrom<Json>(0, 3) }, { requiredKeys: [] }),
  fc.record({ tcpSocket: action }),
  fc.record({ grpc: grpcAction, timeoutSeconds: fc.constantFrom(1, 0) }, { requiredKeys: ['grpc'] }),
  fc.constant<Json>({ exec: { command: ['x'] } }),
  fc.constantFrom<Json>('x', null, []),
);
const container = fc
  .record(
    {
      name,
      ports: fc.array(
        fc.record(
          { name: fc.constantFrom('http', 'grpc', ''), containerPort: fc.constantFrom<Json>(8080, 9090, 'x') },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      readinessProbe: handler,
      livenessProbe: handler,
      startupProbe: handler,
      lifecycle: fc.oneof(
        fc.record({ preStop: handler, postStart: handler }, { requiredKeys: [] }),
        fc.constant<Json>('x'),
      ),
    },
    { requiredKeys: [] },
  )
  .map((c) => c as JsonObject);
const spec = fc
  .record(
    { containers: fc.array(container, { maxLength: 4 }), initContainers: fc.array(container, { maxLength: 2 }) },
    { requiredKeys: [] },
  )
  .map((s) => s as JsonObject);

t.test("dumpAppProbers writes Istio's Go JSON", async (t) => {
  let some = 0;
  fc.assert(
    fc.property(spec, fc.constantFrom(15020, 8080), (s, statusPort) => {
      const want = oldDumpAppProbers(s, statusPort);
      if (want !== '') some++;
      return dumpAppProbers(s, statusPort) === want;
    }),
    { numRuns: 2000 },
  );
  t.ok(some > 500, `specs with probers: ${some} of 2000`);
  // By hand: two containers of one name (the later wins), keys sorted, hooks and probes.
  const s: JsonObject = {
    containers: [
      { name: 'b', readinessProbe: { httpGet: { port: 1 } }, lifecycle: { preStop: { tcpSocket: { port: 2 } } } },
      { name: 'a', livenessProbe: { grpc: { port: 3 }, timeoutSeconds: 4 } },
      { name: 'b', readinessProbe: { httpGet: { port: 5 } } },
    ],
  };
  t.equal(
    dumpAppProbers(s, 15020),
    '{"/app-health/a/livez":{"grpc":{"port":3,"service":null},"timeoutSeconds":4},"/app-health/b/readyz":{"httpGet":{"port":5}},"/app-lifecycle/b/prestopz":{"tcpSocket":{"port":2}}}',
  );
  t.equal(dumpAppProbers({ containers: [{ name: 'a', readinessProbe: 'x' }] }, 15020), '', 'none: empty');
  // Istio's TestDumpAppGRPCProbers: Go's field order (path, port, host, scheme), whatever the user's.
  t.equal(
    dumpAppProbers(
      {
        containers: [
          {
            name: 'foo',
            lifecycle: { preStop: { httpGet: { scheme: 'HTTP', host: 'foo', port: 1234, path: '/foo' } } },
          },
        ],
      },
      15020,
    ),
    '{"/app-lifecycle/foo/prestopz":{"httpGet":{"path":"/foo","port":1234,"host":"foo","scheme":"HTTP"}}}',
  );
  // What Go's decoder refuses is refused, naming the field; the webhook never sees such a pod.
  for (const [probe, field] of [
    [{ httpGet: { path: 5, port: 1 } }, 'spec.containers[1].readinessProbe.httpGet.path'],
    [{ httpGet: { port: 1.5 } }, 'spec.containers[1].readinessProbe.httpGet.port'],
    [{ tcpSocket: { port: [] } }, 'spec.containers[1].readinessProbe.tcpSocket.port'],
    [{ grpc: { port: '7000' } }, 'spec.containers[1].readinessProbe.grpc.port'],
    [{ grpc: { port: 1, service: 2 } }, 'spec.containers[1].readinessProbe.grpc.service'],
    [
      { httpGet: { port: 1, httpHeaders: [{ name: 'a', value: 1 }] } },
      'spec.containers[1].readinessProbe.httpGet.httpHeaders[0].value',
    ],
    [{ httpGet: { port: 1 }, timeoutSeconds: '3' }, 'spec.containers[1].readinessProbe.timeoutSeconds'],
  ] as const) {
    const pod: JsonObject = {
      containers: [{ name: 'istio-proxy' }, { name: 'a', readinessProbe: probe as unknown as Json }],
    };
    t.throws(() => dumpAppProbers(pod, 15020), { name: 'InjectError', field }, field);
  }
});

t.test('rewriteProbes rewrites as before', async (t) => {
  fc.assert(
    fc.property(spec, fc.constantFrom(15020, 8080), (s, statusPort) => {
      const a = cloneJson(s);
      const b = cloneJson(s);
      oldRewriteProbes(a, statusPort);
      rewriteProbes(b, statusPort);
      return JSON.stringify(a) === JSON.stringify(b);
    }),
    { numRuns: 2000 },
  );
  t.same(proberUrls('c').readyz, '/app-health/c/readyz', 'the URLs of uninject are those of inject');
});

t.test('modifyContainers moves or removes as before', async (t) => {
  const list = fc.array(
    fc.record({ name: fc.constantFrom<Json>('a', 'b', 'c', 1) }).map((c) => c as JsonObject),
    { maxLength: 6 },
  );
  fc.assert(
    fc.property(
      list,
      fc.constantFrom<Json>('a', 'b', 'x', 1),
      fc.constantFrom('first', 'last', 'remove') as fc.Arbitrary<'first' | 'last' | 'remove'>,
      (l, n, op) => {
        const want = oldModifyContainers(l, n as string, op);
        const got = modifyContainers(l, n as string, op);
        return got !== l && got.length === want.length && got.every((c, i) => c === want[i]);
      },
    ),
    { numRuns: 1000 },
  );
  const l: JsonObject[] = [{ name: 'a' }, { name: 'b' }, { name: 'a', x: 1 }];
  t.same(
    modifyContainers(l, 'a', 'first'),
    [{ name: 'a', x: 1 }, { name: 'b' }],
    'the last match, first; the others dropped',
  );
});
