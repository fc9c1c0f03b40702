/**
 * A value quoted in a message is cut (issue 36, section 5): a tenant's annotation, patch or config value, however
 * long, appears in a result at most `QUOTED_DATA_CHARS` characters long, followed by its length; never whole. A
 * generator sends long values down every route that quotes one (each driver's annotations, the custom driver's
 * status record and its fragment merge, a config's kind, a Kuma patch value); a source scan keeps every message in
 * src/ on `quoteValue`/`quoteData` (src/results/quote.ts).
 */
import t from 'tap';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/run.ts';
import { QUOTED_DATA_CHARS } from '../../src/results/quote.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const q = JSON.stringify;
const pod = (annotations: string) =>
  fixtureDeployment('web', { style: 'flow', templateExtra: `, annotations: {${annotations}}` });
const cfg = (mesh: string, section = '') => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: c}
spec:
  mesh: ${mesh}
  policy: enabled
${section}`;

/** Routes that quote a value `v` (a string the tenant wrote) in an error or warning. */
const ROUTES: Record<string, (v: string) => { input: string; functionConfig: string }> = {
  'custom meshinject.dev/inject': (v) => ({
    input: pod(`meshinject.dev/inject: ${q(v)}`),
    functionConfig: cfg('custom', '  custom:\n    templates: {sidecar: "metadata: {}"}\n'),
  }),
  'custom status record': (v) => ({
    input: pod(`meshinject.dev/custom-status: ${q(v)}`),
    functionConfig: cfg('custom', '  custom:\n    templates: {sidecar: "metadata: {}"}\n'),
  }),
  'custom fragment against the pod': (v) => ({
    input: pod('b: pod'),
    functionConfig: cfg(
      'custom',
      `  custom:\n    templates: {sidecar: ${q(`metadata:\n  annotations: {b: ${q(v)}}\n`)}}\n`,
    ),
  }),
  'osm sidecar-injection': (v) => ({
    input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {openservicemesh.io/monitored-by: osm}}\n---\n${pod(`openservicemesh.io/sidecar-injection: ${q(v)}`)}`,
    functionConfig: cfg('osm'),
  }),
  'config kind': (v) => ({
    input: pod(''),
    functionConfig: cfg('istio').replace('kind: SidecarInjection', `kind: ${q(v)}`),
  }),
  'kuma patch value': (v) => ({
    input: pod('kuma.io/container-patches: p'),
    functionConfig: cfg(
      'kuma',
      `  kuma:\n    controlPlane: {caCert: "-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"}\n    containerPatches:\n      p: {sidecarPatch: [{op: add, path: /x, value: ${q(v)}}]}\n`,
    ),
  }),
};

t.test('generated: a long value in any route is quoted cut, with its length', async (t) => {
  const seen = new Set<string>();
  // A long value with a unique tail: the tail must never reach a message.
  const value = fc
    .tuple(fc.stringMatching(/^[a-z]{1,20}$/), fc.integer({ min: QUOTED_DATA_CHARS + 1, max: 20_000 }))
    .map(([w, n]) => `${w.repeat(Math.ceil(n / w.length)).slice(0, n - 9)}TAILxyzzy`);
  fc.assert(
    fc.property(fc.constantFrom(...Object.keys(ROUTES)), value, (route, v) => {
      const r = ROUTES[route]!(v);
      const out = run(r.input, { functionConfig: r.functionConfig });
      const text = `${out.stderr}\n${JSON.stringify(out.results)}`;
      if (!/\[(error|warning)\]/.test(out.stderr))
        throw new Error(`${route}: no error or warning: ${out.stderr.slice(0, 300)}`);
      if (text.includes('TAILxyzzy'))
        throw new Error(`${route}: the value was quoted whole (${v.length} characters): ${out.stderr.slice(0, 600)}`);
      if (!/\(\d+ characters( of JSON)?\)/.test(out.stderr))
        throw new Error(`${route}: the cut value does not give its length: ${out.stderr.slice(0, 600)}`);
      seen.add(route);
    }),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) },
  );
  t.equal(seen.size, Object.keys(ROUTES).length, `every route generated: ${[...seen].join(', ')}`);
});

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');
/** Messages that quote Go's own text for Go's parse errors, byte for byte (a Go error quotes the whole value). */
const GO_TEXT = new Set(['drivers/istio/validate.ts', 'json.ts']);
const MESSAGE =
  /InjectError\(|mergeError\(|refusedRecord\(|message:|warnings\.push\(|issues\.push\(|new Error\(|return say\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

t.test('source scan: messages quote values with quoteValue/quoteData, not JSON.stringify', async (t) => {
  const findings: string[] = [];
  for (const f of sourceFiles(SRC)) {
    const rel = relative(SRC, f);
    if (GO_TEXT.has(rel)) continue;
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (MESSAGE.test(line) && /\$\{JSON\.stringify\(/.test(line)) findings.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  t.same(findings, []);
});
