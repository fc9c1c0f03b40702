/**
 * Issue #40: `dumpAppProbers` (written as text without building the sorted map), `rewriteProbes` (URLs made only for
 * the probes there are) and `modifyContainers` (one pass) give what their earlier versions gave. The earlier
 * versions (main before the change) are kept below as the reference; generated pod specs hold probes and hooks of
 * every handler kind, named and numbered ports, repeated and missing container names, non-map handlers.
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

/** The prober entry of a probe or hook: `{httpGet|tcpSocket|grpc, timeoutSeconds?}` with the port resolved. */
function proberOf(
  handler: Json | undefined,
  container: JsonObject,
  statusPort: number,
  isProbe: boolean,
): JsonObject | undefined {
  if (!isJsonObject(handler)) return undefined;
  const timeout =
    isProbe && typeof handler.timeoutSeconds === 'number' && handler.timeoutSeconds !== 0
      ? handler.timeoutSeconds
      : undefined;
  const withTimeout = (o: JsonObject): JsonObject => (timeout === undefined ? o : { ...o, timeoutSeconds: timeout });
  if (isProbe && isJsonObject(handler.grpc)) return withTimeout({ grpc: cloneJson(handler.grpc) });
  const kind = isJsonObject(handler.httpGet) ? 'httpGet' : isJsonObject(handler.tcpSocket) ? 'tcpSocket' : undefined;
  if (!kind) return undefined;
  const action = cloneJson(handler[kind] as JsonObject);
  const port = resolveNamedPort(action.port, declaredPorts(container), ISTIO_PROBE_PORTS);
  if (port === undefined) return undefined;
  if (typeof action.port === 'number' && port === statusPort) return undefined; // already rewritten
  action.port = port;
  return withTimeout({ [kind]: action });
}

/**
 * Istio `DumpAppProbers`: the JSON map (sorted keys) of every app container's readiness/liveness/startup probe
 * (httpGet, tcpSocket, grpc) and preStop/postStart hook (httpGet, tcpSocket), keyed by agent URL; `''` when
 * there are none.
 */
function oldDumpAppProbers(spec: JsonObject, statusPort: number): string {
  const out: Record<string, JsonObject> = {};
  for (const c of appContainers(spec)) {
    const name = typeof c.name === 'string' ? c.name : '';
    const urls = proberUrls(name);
    const add = (url: string, v: JsonObject | undefined): void => {
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
  const sorted: JsonObject = {};
  for (const k of keys) {
    const v = out[k];
    if (v) setOwn(sorted, k, v);
  }
  return JSON.stringify(sorted);
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
const action = fc.record(
  { port, path: fc.constantFrom('/h', '/'), scheme: fc.constantFrom('HTTP', 'HTTPS') },
  { requiredKeys: [] },
);
const handler: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ httpGet: action, timeoutSeconds: fc.constantFrom<Json>(0, 3, '3') }, { requiredKeys: [] }),
  fc.record({ tcpSocket: action }),
  fc.record({ grpc: fc.record({ port }), timeoutSeconds: fc.constantFrom(1, 0) }, { requiredKeys: ['grpc'] }),
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

t.test('dumpAppProbers gives the earlier text', async (t) => {
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
    '{"/app-health/a/livez":{"grpc":{"port":3},"timeoutSeconds":4},"/app-health/b/readyz":{"httpGet":{"port":5}},"/app-lifecycle/b/prestopz":{"tcpSocket":{"port":2}}}',
  );
  t.equal(dumpAppProbers({ containers: [{ name: 'a', readinessProbe: 'x' }] }, 15020), '', 'none: empty');
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
