// Kuma's webhook reads its annotations with Go's parsers and refuses the pod where Go refuses the value (issue #37,
// item 4): `GetUint32` is `strconv.ParseUint(v, 10, 32)` (no sign: `kuma.io/sidecar-proxy-concurrency: "+4"` is
// refused), the transparent proxy's port lists take `uint16` ports other than 0 (pkg/transparentproxy/config
// `parsePort`), in the exclude-ports annotations and in the transparent-proxy config, and the drain time is a
// `time.ParseDuration`. Values are generated; whether Kuma accepts one is written from Go's documented grammar.
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../../src/run.ts';

const CA = '"-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"';
const config = (tproxy = '') =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n  mesh: kuma\n  kuma:\n    controlPlane: {caCert: ${CA}}${tproxy}\n`;
const input = (annotations: Record<string, string>) =>
  `${[
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', labels: { 'kuma.io/sidecar-injection': 'enabled' } },
    }),
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' }, annotations },
          spec: { containers: [{ name: 'web', image: 'web:1' }] },
        },
      },
    }),
  ].join('\n---\n')}\n`;

/** Go `ParseUint(v, 10, bits)` accepts: digits only, at most 2^bits - 1 (strconv docs). */
const goUint = (v: string, bits: number) => /^[0-9]+$/.test(v) && BigInt(v) <= (1n << BigInt(bits)) - 1n;
/** Kuma `Ports.Set`: comma-separated, items trimmed, empty ones skipped, each a uint16 other than 0. */
const kumaPorts = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')
    .every((x) => goUint(x, 16) && BigInt(x) !== 0n);

const numberish = fc.oneof(
  fc.constantFrom(
    '4',
    '+4',
    '-4',
    ' 4',
    '4 ',
    '0',
    '0x10',
    '1_000',
    '010',
    '4294967295',
    '4294967296',
    '65535',
    '65536',
    '',
    '1e3',
    '٤',
  ),
  fc.bigInt({ min: 0n, max: 1n << 34n }).map(String),
);

t.test("uint32 annotations: refused exactly where Go refuses, with Kuma's message naming the annotation", async (t) => {
  const keys = [
    'kuma.io/sidecar-proxy-concurrency',
    'kuma.io/envoy-admin-port',
    'kuma.io/application-probe-proxy-port',
  ];
  let refused = 0;
  fc.assert(
    fc.property(fc.constantFrom(...keys), numberish, (key, value) => {
      const out = run(input({ [key]: value }), { functionConfig: config() });
      const error = out.results.find((r) => r.severity === 'error');
      if (goUint(value, 32)) return out.exitCode === 0;
      refused++;
      return (
        out.exitCode === 1 &&
        error !== undefined &&
        error.message.endsWith(
          `failed to parse annotation "${key}": strconv.ParseUint: parsing ${JSON.stringify(value)}: ${/^[0-9]+$/.test(value) ? 'value out of range' : 'invalid syntax'}`,
        ) &&
        error.field?.path === `spec.template.metadata.annotations[${key}]`
      );
    }),
    { numRuns: 60 },
  );
  t.ok(refused > 5, `${refused} refusals generated`);
  const plus = run(input({ 'kuma.io/sidecar-proxy-concurrency': '+4' }), { functionConfig: config() });
  t.equal(plus.exitCode, 1, 'the issue\'s case: "+4" is refused');
  t.match(
    plus.results.find((r) => r.severity === 'error')?.message,
    /failed to parse annotation "kuma\.io\/sidecar-proxy-concurrency": strconv\.ParseUint: parsing "\+4": invalid syntax$/,
  );
});

const portList = fc
  .array(
    fc.oneof(
      fc.constantFrom('0', '1', '80', '65535', '65536', '+80', ' 8080 ', '', 'http', '-1'),
      fc.integer({ min: 0, max: 70000 }).map(String),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((xs) => xs.join(','));

t.test('port lists: annotations and the transparent-proxy config take uint16 ports from 1 to 65535', async (t) => {
  const places = [
    'traffic.kuma.io/exclude-inbound-ports',
    'traffic.kuma.io/exclude-outbound-ports',
    'config:inbound',
    'config:outbound',
  ] as const;
  let refused = 0;
  fc.assert(
    fc.property(fc.constantFrom(...places), portList, (place, value) => {
      const inConfig = place.startsWith('config:');
      const kind = place.slice('config:'.length);
      const out = inConfig
        ? run(input({}), {
            functionConfig: config(
              `\n    transparentProxyConfig: {redirect: {${kind}: {excludePorts: ${JSON.stringify(value)}}}}`,
            ),
          })
        : run(input({ [place]: value }), { functionConfig: config() });
      const error = out.results.find((r) => r.severity === 'error');
      if (kumaPorts(value)) return out.exitCode === 0;
      refused++;
      const bad = value
        .split(',')
        .map((x) => x.trim())
        .find((x) => x !== '' && !(goUint(x, 16) && BigInt(x) !== 0n))!;
      const where = inConfig ? `transparentProxyConfig.redirect.${kind}.excludePorts` : place;
      return (
        out.exitCode === 1 &&
        error !== undefined &&
        error.message.endsWith(`${where}: value '${bad}' is not a valid port (uint16 in the range [1, 65535])`)
      );
    }),
    { numRuns: 60 },
  );
  t.ok(refused > 5, `${refused} refusals generated`);
});

t.test("the drain time is a Go duration; Go's error is reported with the annotation", async (t) => {
  for (const [value, ok] of [
    ['30s', true],
    ['1m30s', true],
    ['.5s', true],
    ['1d', false],
    ['30', false],
    ['-', false],
    ['1.5h', true],
    ['9223372036854775808ns', false],
  ] as const) {
    const out = run(input({ 'kuma.io/sidecar-drain-time': value }), { functionConfig: config() });
    t.equal(out.exitCode, ok ? 0 : 1, `${value}: ${ok ? 'accepted' : 'refused'}`);
    if (!ok)
      t.match(
        out.results.find((r) => r.severity === 'error')?.message,
        /annotation "kuma\.io\/sidecar-drain-time": time: (invalid duration|missing unit in duration|unknown unit "d" in duration) /,
      );
  }
});
