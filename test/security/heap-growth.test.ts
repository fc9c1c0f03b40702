/**
 * Issue #36 §5: tenant-controlled growth under a small heap ends in the documented heap error (exit 2, naming
 * `NODE_OPTIONS=--max-old-space-size`, nothing on stdout, no file written) or in a documented error of the
 * route (a template budget, the Kuma copy budget), never in V8's `FATAL ERROR` (exit 134). The generator picks
 * a route by which a tenant makes one resource grow (a driver's config: Kuma `containerPatches` adding a large
 * list or copying a value again and again; a template value rendered by the Go-template engine (Istio) or by
 * Handlebars (custom); a large list in the workload itself, through every driver), its size, and an output
 * flag, and runs the built CLI under `--max-old-space-size=64` (NODE_OPTIONS, as the issue's repro).
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, workspace } from '../helpers/e2e.ts';

const q = JSON.stringify;
const list = (n: number): string[] => Array.from({ length: n }, (_, i) => `m${i}`);
const head = (mesh: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n  mesh: ${mesh}\n  policy: enabled\n`;
const KUMA_CP = '    controlPlane: {caCert: "-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"}\n';
const MESHES = ['istio', 'linkerd', 'osm', 'fsm', 'kuma', 'custom'] as const;
const CUSTOM_SIDECAR = `  custom:\n    templates:\n      sidecar: ${q('spec:\n  containers:\n  - {name: helper, image: helper:1}\n')}\n`;
const BASE: Record<(typeof MESHES)[number], string> = {
  istio: '',
  linkerd: '',
  osm: '',
  fsm: '',
  kuma: `  kuma:\n${KUMA_CP}`,
  custom: CUSTOM_SIDECAR,
};

/** A workload in a namespace every driver injects, with pod annotations `annotations` and container args `args`. */
const workload = (annotations: string, args: readonly string[] = []) => `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {kuma.io/sidecar-injection: enabled, istio-injection: enabled}
  annotations: {linkerd.io/inject: enabled, openservicemesh.io/sidecar-injection: enabled, flomesh.io/sidecar-injection: enabled}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {${annotations}}}
    spec:
      containers:
      - name: web
        image: web:1
        args: ${q(args)}
`;

/** A way to make one resource grow: the input, the functionConfig, and the marker a complete output holds. */
interface Route {
  input: string;
  config: string;
  marker?: string;
}

const ROUTES: Record<string, (n: number) => Route> = {
  'kuma containerPatches add of a large list': (n) => ({
    input: workload('kuma.io/container-patches: p'),
    config: `${head('kuma')}  kuma:\n${KUMA_CP}    containerPatches:\n      p: {sidecarPatch: [{op: add, path: /args, value: ${q(q(list(n)))}}]}\n`,
    marker: `m${n - 1}`,
  }),
  'kuma containerPatches copying a value again and again': (n) => ({
    input: workload('kuma.io/container-patches: p'),
    config: `${head('kuma')}  kuma:\n${KUMA_CP}    containerPatches:\n      p: {sidecarPatch: [{op: add, path: /args, value: ${q(q([`x${'y'.repeat(n % 200)}`]))}}${', {op: copy, from: /args, path: /args/-}'.repeat(40)}]}\n`,
  }),
  'Go template (istio) rendering a large value': (n) => ({
    input: workload('inject.istio.io/templates: t'),
    config: `${head('istio')}  istio:\n    values:\n      big: ${q(list(n))}\n      sidecarInjectorWebhook:\n        templates:\n          t: ${q('spec:\n  containers:\n  - name: helper\n    image: helper:1\n    args: {{ toJson .Values.big }}\n')}\n`,
    marker: `m${n - 1}`,
  }),
  'Handlebars (custom) rendering a large value': (n) => ({
    input: workload(''),
    config: `${head('custom')}  custom:\n    values:\n      big: ${q(list(n))}\n    templates:\n      sidecar: ${q('spec:\n  containers:\n  - name: helper\n    image: helper:1\n    args: {{json values.big}}\n')}\n`,
    marker: `m${n - 1}`,
  }),
  ...Object.fromEntries(
    MESHES.map((mesh) => [
      `a large list in the workload (${mesh})`,
      (n: number): Route => ({
        input: workload('', list(n)),
        config: `${head(mesh)}${BASE[mesh]}`,
        marker: `m${n - 1}`,
      }),
    ]),
  ),
};

const FLAGS: Record<string, (dir: string) => string[]> = {
  stdout: () => [],
  '-o json': () => ['-o', 'json'],
  '-o patches': () => ['-o', 'patches'],
  '--output-file': (dir) => ['--output-file', join(dir, 'out.yaml')],
  '--report junit': (dir) => ['--output-file', join(dir, 'out.yaml'), '--report', `junit=${join(dir, 'report.xml')}`],
};

/** Runs one route under a 64 MB heap and checks that it ends as documented; returns what happened. */
function check(t: Test, name: string, route: Route, flag: string): string {
  const dir = workspace(t, { 'in.yaml': route.input, 'config.yaml': route.config }, 'heap-growth');
  const r = spawnSync(
    process.execPath,
    [BIN, '--config', join(dir, 'config.yaml'), ...(FLAGS[flag]?.(dir) ?? []), join(dir, 'in.yaml')],
    {
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 512 << 20,
      env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=64' },
    },
  );
  const what = `${name}, ${flag}`;
  t.equal(r.signal, null, `${what}: ended by itself`);
  t.notMatch(r.stderr, /FATAL ERROR|heap out of memory|internal error/, `${what}: no V8 abort, no internal error`);
  t.ok(r.status === 0 || r.status === 1 || r.status === 2, `${what}: exit 0, 1 or 2 (got ${r.status})`);
  const outFile = join(dir, 'out.yaml');
  if (/needs more memory than Node's heap limit/.test(r.stderr)) {
    t.equal(r.status, 2, `${what}: the heap error exits 2`);
    t.match(r.stderr, /NODE_OPTIONS=--max-old-space-size=\d+ \(megabytes\)/, `${what}: names the setting`);
    t.equal(r.stdout, '', `${what}: nothing on stdout`);
    t.notOk(existsSync(outFile), `${what}: no output file`);
    t.notOk(existsSync(join(dir, 'report.xml')), `${what}: no report`);
    return 'heap error';
  }
  if (r.status === 0) {
    const out = existsSync(outFile) ? readFileSync(outFile, 'utf8') : r.stdout;
    t.ok(out.length > 0, `${what}: exit 0 writes the output`);
    if (route.marker && flag !== '-o patches') t.ok(out.includes(route.marker), `${what}: the whole value is in it`);
    return 'fit';
  }
  t.match(r.stderr, /^\[error\]|^meshinject: error: /m, `${what}: a documented error line`);
  return `error ${r.status}`;
}

t.test('the issue repro: a Kuma patch adding a 400 000-item list under a 64 MB heap', async (t) => {
  const how = check(t, 'repro', ROUTES['kuma containerPatches add of a large list']?.(400_000) as Route, 'stdout');
  t.equal(how, 'heap error', 'the documented heap error');
});

t.test('a Kuma patch copying a value 40 times is refused by the copy budget', async (t) => {
  const how = check(
    t,
    'copies',
    ROUTES['kuma containerPatches copying a value again and again']?.(100) as Route,
    '--output-file',
  );
  t.equal(how, 'error 1', 'an error result');
});

t.test('growth routes × sizes × output flags under a 64 MB heap end as documented', async (t) => {
  const seen = new Map<string, number>();
  fc.assert(
    fc.property(
      fc.constantFrom(...Object.keys(ROUTES)),
      fc.constantFrom(50_000, 200_000, 400_000),
      fc.constantFrom(...Object.keys(FLAGS)),
      (name, n, flag) => {
        const route = ROUTES[name]?.(n);
        if (!route) return false;
        const how = check(t, `${name} (${n})`, route, flag);
        seen.set(how, (seen.get(how) ?? 0) + 1);
        return true;
      },
    ),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 12) },
  );
  t.comment(`outcomes: ${[...seen].map(([k, v]) => `${k} ${v}`).join(', ')}`);
});
