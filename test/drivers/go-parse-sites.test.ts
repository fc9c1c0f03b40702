// The parse sites moved onto src/drivers/go-parse.ts (issue #37, item 4), as a user sees them: OSM's port and IP
// range annotations (strconv.Atoi; net.ParseCIDR, whose prefix length is net.dtoi: leading zeros allowed), Istio's
// scrape-target ports (strconv.Atoi, 1-65535), and the Go helpers behind them, each against Go's documented
// behaviour; then generated CIDRs and ports against a reference written from that behaviour.
import t from 'tap';
import fc from 'fast-check';
import { atoiIgnoringError, netDtoi, toInt32 } from '../../src/drivers/go-parse.ts';
import { parseCidr, trafficLists } from '../../src/drivers/osm/exclusions.ts';
import type { OsmSettings } from '../../src/drivers/osm/config.ts';
import { applyPrometheusMerge } from '../../src/drivers/istio/prometheus.ts';
import type { JsonObject, PodTemplate } from '../../src/model.ts';
import { InjectError } from '../../src/results/errors.ts';
import { loadConfig } from '../helpers/config.ts';

t.test('atoiIgnoringError, toInt32, netDtoi: the values Go code gets when it drops the error', async (t) => {
  t.equal(atoiIgnoringError('+42'), 42n);
  t.equal(atoiIgnoringError(' 42'), 0n, 'a syntax error gives 0');
  t.equal(atoiIgnoringError('99999999999999999999'), (1n << 63n) - 1n, 'overflow gives the int64 bound');
  t.equal(atoiIgnoringError('-99999999999999999999'), -(1n << 63n));
  t.equal(toInt32((1n << 63n) - 1n), -1, 'int32 of the int64 maximum');
  t.equal(toInt32(1n << 32n), 0);
  t.equal(toInt32(8080n), 8080);
  t.same(netDtoi('024'), { ok: true, value: 24, end: 3 }, 'leading zeros');
  t.same(netDtoi('24x'), { ok: true, value: 24, end: 2 });
  t.match(netDtoi(''), { ok: false });
  t.match(netDtoi('+24'), { ok: false }, 'no sign');
  t.match(netDtoi('16777215'), { ok: false }, '0xFFFFFF is too big');
});

const loadedOsm = loadConfig({
  apiVersion: 'meshinject.dev/v1alpha1',
  kind: 'SidecarInjection',
  spec: { mesh: 'osm' },
});
if (!loadedOsm.ok) throw new Error(JSON.stringify(loadedOsm.issues));
const settings = loadedOsm.settings as OsmSettings;

t.test('OSM: IP ranges as net.ParseCIDR reads them, ports as strconv.Atoi reads them', async (t) => {
  const R = 'openservicemesh.io/outbound-ip-range-exclusion-list';
  const P = 'openservicemesh.io/outbound-port-exclusion-list';
  const lists = trafficLists({ [R]: '10.0.0.0/008, fd00::/0128', [P]: '+80, 0443' }, settings);
  t.match(JSON.stringify(lists), /10\.0\.0\.0\/008/, 'a prefix length with leading zeros is a CIDR to Go');
  t.match(JSON.stringify(lists), /"outboundPorts":\[80,443\]/, 'Atoi takes a sign and leading zeros');
  for (const [key, value] of [
    [R, '10.0.0.0/33'],
    [R, '10.0.0.0/+8'],
    [R, '10.0.0.0/ 8'],
    [R, 'fe80::1%eth0/64'],
    [R, '10.0.0.0/'],
    [P, '80_0'],
    [P, '0x50'],
    [P, '-80'],
  ] as const) {
    t.throws(
      () => trafficLists({ [key]: value }, settings),
      InjectError,
      `${key}: ${JSON.stringify(value)} is refused`,
    );
  }
});

t.test('properties: generated CIDRs and port entries against the documented grammar', async (t) => {
  const octet = fc.integer({ min: 0, max: 255 });
  const bits = fc.oneof(
    fc.integer({ min: 0, max: 40 }).map(String),
    fc.tuple(fc.constantFrom('0', '00', '+', '-', ' ', '_'), fc.integer({ min: 0, max: 40 })).map((p) => p.join('')),
    fc.constantFrom('', '1e1', '٣', '3 ', '0x10'),
  );
  fc.assert(
    fc.property(fc.tuple(octet, octet, octet, octet), bits, (ip, b) => {
      const want = /^[0-9]+$/.test(b) && Number.parseInt(b, 10) <= 32;
      return parseCidr(`${ip.join('.')}/${b}`) === want;
    }),
  );
  const entry = fc.oneof(
    fc.integer({ min: -5, max: 70000 }).map(String),
    fc
      .tuple(fc.constantFrom('+', '0', '00', '-0', ' ', '_', '0x'), fc.integer({ min: 0, max: 70000 }))
      .map((p) => p.join('')),
  );
  fc.assert(
    fc.property(entry, (e) => {
      // Atoi: an optional sign, then ASCII digits; OSM refuses <= 0 (and meshinject > 65535, which iptables refuses).
      const digits = /^[+-]?[0-9]+$/.test(e.trim());
      const n = digits ? Number.parseInt(e.trim(), 10) : Number.NaN;
      const want = digits && n > 0 && n <= 65535;
      try {
        const lists = trafficLists({ 'openservicemesh.io/inbound-port-exclusion-list': e }, settings);
        return want && lists.inboundPorts.includes(n);
      } catch (err) {
        return !want && err instanceof InjectError;
      }
    }),
  );
  t.pass('generated CIDRs and ports read as Go reads them');
});

t.test('Istio scrape targets: strconv.Atoi ports, 1-65535; the error names the annotation', async (t) => {
  const proxy = (): JsonObject => ({ name: 'istio-proxy', image: 'proxyv2', env: [] });
  const pod = (targets: string): PodTemplate => ({
    metadata: { annotations: { 'prometheus.io/scrape': 'true', 'prometheus.istio.io/scrape-targets': targets } },
    spec: { containers: [{ name: 'app' }, proxy()] },
  });
  t.doesNotThrow(() => applyPrometheusMerge(pod('+8080:/m,09100'), { enablePrometheusMerge: true }, 15020));
  for (const bad of ['8080x:/m', ' 0x50', '0', '65536', '1_000']) {
    t.throws(
      () => applyPrometheusMerge(pod(bad), { enablePrometheusMerge: true }, 15020),
      {
        name: 'InjectError',
        field: 'metadata.annotations[prometheus.istio.io/scrape-targets]',
        message: `invalid prometheus scrape targets: invalid target port ${JSON.stringify(bad.split(':')[0]?.trim())}`,
      },
      JSON.stringify(bad),
    );
  }
  t.throws(
    () => applyPrometheusMerge(pod('+15020'), { enablePrometheusMerge: true }, 15020),
    { message: 'invalid prometheus scrape targets: target port +15020 conflicts with agent port' },
    'compared in canonical form, as Istio compares strconv.Itoa of the port',
  );
});
