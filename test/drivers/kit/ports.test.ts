/**
 * Issue #35 item 3: one named-port resolver for every driver (src/drivers/kit/ports.ts), each mesh's reading
 * kept as data. The property compares the kit under each mesh's rule with that mesh's resolver as it was
 * written before the kit (istio/probes.ts and osm/probes.ts `resolvePort` as issue #37 item 4 left them, on
 * Go's readings; kuma/probes.ts `probePort` at commit 177e252), on generated ports and declared ports chosen to collide (names that look like numbers, empty
 * names, zero, signs, non-number container ports), so that no mesh's output moves. The examples state each
 * mesh's rule from its source.
 */
import t from 'tap';
import fc from 'fast-check';
import { isJsonObject } from '../../../src/json.ts';
import type { Json, JsonObject } from '../../../src/model.ts';
import { atoi, atoiIgnoringError, toInt32 } from '../../../src/drivers/go-parse.ts';
import { intOrStringValue, type PortRule, resolveNamedPort } from '../../../src/drivers/kit/ports.ts';
import { ISTIO_PROBE_PORTS } from '../../../src/drivers/istio/probes.ts';
import { KUMA_PROBE_PORTS } from '../../../src/drivers/kuma/probes.ts';
import { OSM_PROBE_PORTS } from '../../../src/drivers/osm/probes.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

const declared = (c: JsonObject): JsonObject[] => (Array.isArray(c.ports) ? c.ports.filter(isJsonObject) : []);

/** istio/probes.ts `resolvePort` before the kit (Istio DumpAppProbers: a string is a name; the last one wins). */
function istioBefore(port: Json | undefined, container: JsonObject): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port !== 'string') return undefined;
  let found: number | undefined;
  for (const p of declared(container)) {
    if (p.name === port && port !== '' && typeof p.containerPort === 'number') found = p.containerPort;
  }
  return found;
}

/** osm/probes.ts `resolvePort` before the kit (OSM getPort: `int32(IntValue())`, 0 meaning a name). */
function osmBefore(port: Json | undefined, container: JsonObject): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port !== 'string') return undefined;
  const n = toInt32(atoiIgnoringError(port));
  if (n !== 0) return n;
  const hit = declared(container).find((p) => typeof p.name === 'string' && p.name !== '' && p.name === port);
  return typeof hit?.containerPort === 'number' ? hit.containerPort : undefined;
}

/** kuma/probes.ts `intValue` + the port part of `probePort` at 177e252. */
function kumaBefore(port: Json | undefined, container: JsonObject): number | undefined {
  const intValue = (v: Json | undefined): number => {
    if (typeof v === 'number') return Math.trunc(v);
    const n = typeof v === 'string' ? atoi(v) : undefined;
    return n?.ok ? Number(n.value) : 0;
  };
  const n = intValue(port);
  if (n !== 0) return n;
  const named = declared(container).find((p) => typeof p.name === 'string' && p.name !== '' && p.name === String(port));
  return named ? intValue(named.containerPort) : undefined;
}

const MESHES: ReadonlyArray<[string, PortRule, (port: Json | undefined, c: JsonObject) => number | undefined]> = [
  ['istio', ISTIO_PROBE_PORTS, istioBefore],
  ['osm', OSM_PROBE_PORTS, osmBefore],
  ['kuma', KUMA_PROBE_PORTS, kumaBefore],
];

// Texts that are names, numbers, both or neither, so that ports and declared names collide.
const text = fc.constantFrom(
  'http',
  'health',
  '8080',
  '0',
  '+80',
  '-1',
  '007',
  '',
  ' 80',
  '99999999999999999999',
  'null',
);
const portValue: fc.Arbitrary<Json | undefined> = fc.oneof(
  text,
  fc.constantFrom(0, 80, 8080, -3, 1.5, -0.5, null, true, undefined),
  fc.integer({ min: -2, max: 70000 }),
);
/** A container whose declared ports are often named after `port` itself (its text, or `String(port)`). */
const containerFor = (port: Json | undefined): fc.Arbitrary<JsonObject> => {
  const name = fc.oneof(
    fc.constantFrom(String(port), typeof port === 'string' ? port : 'http', ''),
    text,
    fc.constant(null),
  );
  const declaredPort: fc.Arbitrary<Json> = fc.oneof(
    fc.record(
      {
        name,
        containerPort: fc.oneof(
          portValue.map((v) => v ?? null),
          fc.constantFrom(0, 9090, '9090'),
        ),
      },
      { requiredKeys: [] },
    ),
    fc.constant('not an object'),
  );
  return fc.oneof(
    fc.record({ name: fc.constant('app'), ports: fc.array(declaredPort, { maxLength: 4 }) }),
    fc.constant({ name: 'app' }),
    fc.constant({ name: 'app', ports: 'none' }),
  );
};
const portAndContainer = portValue.chain((port) => containerFor(port).map((c) => [port, c] as const));

for (const [mesh, rule, before] of MESHES) {
  t.test(`${mesh}: the kit resolves every port as the driver did before the kit`, async (t) => {
    fc.assert(
      fc.property(portAndContainer, ([port, c]) => {
        const kit = resolveNamedPort(port, declared(c), rule);
        const old = before(port, c);
        return Object.is(kit, old);
      }),
      { numRuns: RUNS },
    );
    t.pass(`${RUNS} generated ports and containers`);
  });
}

t.test("each mesh's rule, from its source", async (t) => {
  const ports = [
    { name: '8080', containerPort: 9090 },
    { name: 'http', containerPort: 0 },
    { name: 'http', containerPort: 8081 },
  ];
  // Istio reads a string port only as a name (a port named "8080" wins; the last port of a name wins).
  t.equal(resolveNamedPort('8080', ports, ISTIO_PROBE_PORTS), 9090);
  t.equal(resolveNamedPort('http', ports, ISTIO_PROBE_PORTS), 8081);
  t.equal(resolveNamedPort('http', [...ports, { name: 'http', containerPort: 0 }], ISTIO_PROBE_PORTS), 0);
  t.equal(resolveNamedPort('+80', ports, ISTIO_PROBE_PORTS), undefined, 'Istio: no name +80');
  t.equal(resolveNamedPort('9000', ports, ISTIO_PROBE_PORTS), undefined, 'Istio: a string is never a number');
  t.equal(resolveNamedPort(9000, ports, ISTIO_PROBE_PORTS), 9000);
  // OSM and Kuma read IntValue() first; the first port of the name decides.
  t.equal(resolveNamedPort('8080', ports, OSM_PROBE_PORTS), 8080);
  t.equal(resolveNamedPort('8080', ports, KUMA_PROBE_PORTS), 8080);
  t.equal(resolveNamedPort('http', ports, OSM_PROBE_PORTS), 0);
  t.equal(resolveNamedPort('http', ports, KUMA_PROBE_PORTS), 0);
  t.equal(resolveNamedPort('+80', ports, OSM_PROBE_PORTS), 80);
  t.equal(resolveNamedPort('missing', ports, OSM_PROBE_PORTS), undefined);
  // Kuma: Go strconv.Atoi (out of int64 range: no number), a JSON number truncated, a named port's IntValue().
  t.equal(resolveNamedPort('99999999999999999999', ports, KUMA_PROBE_PORTS), undefined);
  t.equal(
    resolveNamedPort('99999999999999999999', ports, OSM_PROBE_PORTS),
    -1,
    'OSM: Atoi clamps to int64 max, cut to int32',
  );
  t.equal(resolveNamedPort(80.7, ports, KUMA_PROBE_PORTS), 80);
  t.equal(resolveNamedPort('web', [{ name: 'web', containerPort: '81' }], KUMA_PROBE_PORTS), 81);
  t.equal(resolveNamedPort('web', [{ name: 'web', containerPort: '81' }], OSM_PROBE_PORTS), undefined);
  t.equal(intOrStringValue('-12'), -12);
  t.equal(intOrStringValue('1_000'), 0, 'Atoi takes no underscores');
  t.equal(intOrStringValue(null), 0);
});
