/**
 * Issue #40: Istio's prometheus merge matches annotation keys by their sanitized label name
 * (`prometheus.io/scrape`, `prometheus.io.scrape`, `prometheus-io/scrape` ... all read as `prometheus_io_scrape`),
 * and skips the sanitizing of a key whose length no label has. The shortcut is sound only because sanitizing
 * keeps the length: over keys that are spelling variants of the labels (one character changed, BMP and astral
 * characters, letters and digits, which sanitizing keeps, the label lengths ±1) and other keys, the merge reads, writes and removes exactly what a model that
 * sanitizes every key (Istio `getPrometheusScrape`, `getPrometheusPort`, `getPrometheusScrapeConfiguration`,
 * `clearPrometheusAnnotations`, `applyPrometheusMerge`, pkg/kube/inject/webhook.go) does: the annotations and the
 * proxy env a user sees, or the refusal of a port Istio will not scrape.
 */
import t from 'tap';
import fc from 'fast-check';
import { applyPrometheusMerge } from '../../../src/drivers/istio/prometheus.ts';
import { InjectError } from '../../../src/results/errors.ts';
import type { JsonObject, PodTemplate } from '../../../src/model.ts';

const LABELS = {
  scrape: 'prometheus.io/scrape',
  port: 'prometheus.io/port',
  path: 'prometheus.io/path',
  targets: 'prometheus.istio.io/scrape-targets',
} as const;
/** Ports Istio keeps for itself (pilot/cmd/pilot-agent/status/server.go `istioReservedPorts`). */
const RESERVED = ['15000', '15001', '15004', '15006', '15008', '15020', '15021', '15053', '15090'];
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);
const STATUS_PORT = 15020;

/** Go's `json.Marshal` of a string (HTML-safe). */
const goString = (s: string) => JSON.stringify(s).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

/** Whether Istio scrapes `port`: `strconv.Atoi`, 1–65535, and its canonical form neither the agent's nor reserved. */
function scrapable(port: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(port)) return false;
  const n = Number(port);
  return n >= 1 && n <= 65535 && !RESERVED.includes(String(n)) && String(n) !== String(STATUS_PORT);
}

/** The merge as Istio writes it, sanitizing every key; `refused` for a scrape port Istio refuses. */
function model(
  annos: Record<string, string>,
): { annotations: Record<string, string>; env: string | undefined } | 'refused' {
  const label = (k: string) => k.replace(/[^a-zA-Z0-9_]/g, '_');
  const first = (l: string) => Object.entries(annos).find(([k]) => label(k) === l)?.[1];
  const out = { ...annos };
  for (const [k, v] of Object.entries(annos)) {
    if (label(k) !== 'prometheus_io_scrape') continue;
    if (GO_FALSE.has(v)) return { annotations: out, env: undefined };
    if (GO_TRUE.has(v)) break;
  }
  const port = first('prometheus_io_port');
  if (port === String(STATUS_PORT)) return { annotations: out, env: undefined };
  const cfg = {
    scrape: first('prometheus_io_scrape') ?? '',
    path: first('prometheus_io_path') ?? '',
    port: port ?? '',
  };
  // ParseScrapeTargets of each key of the label (a value with an empty port is skipped, as Istio only logs it)
  let targets: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(annos)) {
    if (label(k) !== 'prometheus_istio_io_scrape_targets') continue;
    const parsed = v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
      .map((e): [string, string] => [
        e.split(':')[0]?.trim() ?? '',
        e.includes(':') ? e.slice(e.indexOf(':') + 1).trim() : '',
      ]);
    if (parsed.some(([p]) => p === '')) continue;
    targets = parsed.map(([p, path]) => [p, path === '' ? '/metrics' : path]);
  }
  const [head] = targets;
  if (head) {
    [cfg.port, cfg.path] = head;
    if (!targets.every(([p]) => scrapable(p))) return 'refused';
  } else if (cfg.port !== '' && !scrapable(cfg.port)) return 'refused';
  const fields = `"scrape":${goString(cfg.scrape)},"path":${goString(cfg.path)},"port":${goString(cfg.port)}`;
  const list = targets.map(([p, path]) => `{"port":${goString(p)},"path":${goString(path)}}`).join(',');
  const env =
    cfg.scrape !== '' || cfg.path !== '' || cfg.port !== '' || head
      ? `{${fields}${head ? `,"targets":[${list}]` : ''}}`
      : undefined;
  for (const k of Object.keys(out))
    if (
      [
        'prometheus_io_scrape',
        'prometheus_io_port',
        'prometheus_io_path',
        'prometheus_istio_io_scrape_targets',
      ].includes(label(k))
    )
      delete out[k];
  out['prometheus.io/port'] = String(STATUS_PORT);
  out['prometheus.io/path'] = '/stats/prometheus';
  out['prometheus.io/scrape'] = 'true';
  return { annotations: out, env };
}

/** A label spelled another way: one character replaced, inserted or dropped. */
const variant = fc
  .record({
    base: fc.constantFrom(...Object.values(LABELS)),
    at: fc.nat(25),
    edit: fc.constantFrom('replace', 'insert', 'drop'),
    with: fc.constantFrom('.', '/', '-', '_', 'x', 'é', '😀', ' ', '0', '9', 'A', 'Z'),
  })
  .map(({ base, at, edit, with: c }) => {
    const i = at % base.length;
    if (edit === 'drop') return base.slice(0, i) + base.slice(i + 1);
    return base.slice(0, i) + c + base.slice(edit === 'replace' ? i + 1 : i);
  });
const key = fc.oneof(
  fc.constantFrom(
    ...Object.values(LABELS),
    'prometheus_istio.io/scrape_targets',
    'prometheus.istio.io/secure-port',
    'app',
  ),
  { weight: 4, arbitrary: variant },
  fc.string({ maxLength: 22 }),
  fc.string({ minLength: 18, maxLength: 20, unit: 'binary' }),
);
const value = fc.constantFrom(
  'true',
  'false',
  'True',
  '0',
  'yes',
  '',
  '9090',
  '+9090',
  '15020',
  '015020',
  '15090',
  '70000',
  '/metrics',
  '/a&b',
  '9090:/x,9100',
  '9100: m ',
  ':/x',
);

t.test('the merge reads, removes and writes the prometheus annotations as a model sanitizing every key', async (t) => {
  let merged = 0;
  let skipped = 0;
  let refused = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(key, value), { maxLength: 6 }), (pairs) => {
      const annos: Record<string, string> = Object.create(null);
      for (const [k, v] of pairs) annos[k] = v;
      const want = model({ ...annos });
      const pod: PodTemplate = {
        metadata: { annotations: { ...annos } },
        spec: { containers: [{ name: 'app' }, { name: 'istio-proxy', env: [] }] },
      };
      if (want === 'refused') {
        refused++;
        try {
          applyPrometheusMerge(pod, {}, STATUS_PORT);
          return false;
        } catch (e) {
          return e instanceof InjectError;
        }
      }
      applyPrometheusMerge(pod, {}, STATUS_PORT);
      const env = (((pod.spec.containers as JsonObject[])[1]?.env ?? []) as JsonObject[]).find(
        (e) => e.name === 'ISTIO_PROMETHEUS_ANNOTATIONS',
      );
      if (want.env === undefined) skipped++;
      else merged++;
      return JSON.stringify(pod.metadata.annotations) === JSON.stringify(want.annotations) && env?.value === want.env;
    }),
    { numRuns: 500 },
  );
  t.ok(
    merged > 50 && skipped > 50 && refused > 20,
    `${merged} pods merged with a recorded env, ${skipped} without, ${refused} refused`,
  );
});

t.test('spelling variants of the labels are matched; keys one character longer or shorter are not', async (t) => {
  const pod: PodTemplate = {
    metadata: {
      annotations: { 'prometheus-io.scrape': 'true', 'prometheus.io/ports': '1', 'prometheus.io.path': '/m', x: 'y' },
    },
    spec: { containers: [{ name: 'istio-proxy' }] },
  };
  applyPrometheusMerge(pod, {}, STATUS_PORT);
  t.same(pod.metadata.annotations, {
    'prometheus.io/ports': '1',
    x: 'y',
    'prometheus.io/port': '15020',
    'prometheus.io/path': '/stats/prometheus',
    'prometheus.io/scrape': 'true',
  });
  t.same((pod.spec.containers as JsonObject[])[0]?.env, [
    { name: 'ISTIO_PROMETHEUS_ANNOTATIONS', value: '{"scrape":"true","path":"/m","port":""}' },
  ]);
});
