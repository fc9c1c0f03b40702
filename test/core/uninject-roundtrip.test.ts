/**
 * Uninject after inject gives back the input bytes (issue #9 §5): for every case of the conformance corpora
 * that injects (conformance/istio of the test data, test/helpers/data.ts: kube-inject, webhook-only and go-template
 * cases, every template including grpc-simple and grpc-agent; conformance/linkerd: inject, annotate and namespace
 * cases; conformance/kuma: inject and skip cases),
 * every example under examples/ and the real-world apps (real-world/ of the test data), each with its own
 * functionConfig: inject, then the same config with `mode: uninject`, and the output compared with the input
 * whole, byte for byte, with nothing normalised. Both runs use `resultAnnotations: false`: the result annotation
 * records meshinject's own state (`uninjected (istio)`) by design.
 *
 * The cases that cannot give back the bytes are listed in EXCEPTIONS with the reason; each listed case must still
 * differ (a case that starts passing fails here until it is taken off the list), and an already-injected input
 * must at least give uninject(inject(x)) = uninject(x).
 */
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { run } from '../../src/index.ts';
import { corpus as testData, needs } from '../helpers/data.ts';
import { caseFnConfig } from '../../scripts/conformance/runner.ts';

const DATA = {
  istio: testData('conformance/istio'),
  linkerd: testData('conformance/linkerd'),
  kuma: testData('conformance/kuma'),
};
const REAL_WORLD = testData('real-world');
const VERSIONS = testData('conformance/istio-versions');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Obj = Record<string, unknown>;

/** Why a round trip cannot give back the bytes; every reason is a loss in a record the mesh itself writes. */
const ALREADY =
  'the input is already injected: uninject removes that injection too (checked: uninject(inject(x)) = uninject(x))';
/** {@link ALREADY}, with the mesh's own rule for an injected input (at the commit the corpus pins, SOURCE.md). */
const ALREADY_ISTIO = `${ALREADY}; Istio does the same: re-injection first strips the previous injection, removing every container and init container sidecar.istio.io/status lists (\`stripPod\`, pkg/kube/inject/inject.go @86c9f01), so the input's own proxy is not kept either`;
const ALREADY_LINKERD = `${ALREADY}; Linkerd does the same: \`linkerd inject\` runs uninject first (\`uninjectAndInject\`, cli/cmd/inject.go @b24cd40), which drops every linkerd-proxy and linkerd-init container and the identity, xtables-lock and token volumes (\`uninjectPodSpec\`, pkg/inject/uninject.go @b24cd40)`;

const EXCEPTIONS: Record<string, string> = {
  'istio/merge-probers': ALREADY_ISTIO,
  'linkerd/emojivoto-already-injected': ALREADY_LINKERD,
  'linkerd/tap-deployment-debug':
    "the input is a Linkerd control-plane component already injected with an old proxy; uninject removes that proxy too and, as `linkerd uninject`, keeps every linkerd.io/* key of a control-plane component (its metadata is Linkerd's own: `uninjectObjectMeta` skips a pod labelled linkerd.io/control-plane-component, pkg/inject/uninject.go @b24cd40), so the keys the injection rewrote (created-by, trust-root-sha256, workload-ns) keep the new values",
};

/** Istio injection everywhere: the operator manifests carry no opt-in of their own. */
const OPERATOR_CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: operators}\nspec:\n  mesh: istio\n  policy: enabled\n';

interface Trip {
  name: string;
  input: string;
  fnConfig: string;
}

/** The case's functionConfig as `{inject, uninject}` texts (`resultAnnotations: false`). */
function configs(fnConfig: string): { inject: string; uninject: string } {
  const fc = parse(fnConfig) as Obj;
  const spec = { ...((fc.spec ?? {}) as Obj), resultAnnotations: false };
  return {
    inject: stringify({ ...fc, spec: { ...spec, mode: 'inject' } }),
    uninject: stringify({ ...fc, spec: { ...spec, mode: 'uninject' } }),
  };
}

const seen = new Set<string>();
const counts = { bytes: 0, exceptions: 0 };

function roundTrip(t: Test, trip: Trip): void {
  seen.add(trip.name);
  const cfg = configs(trip.fnConfig);
  const injected = run(trip.input, { functionConfig: cfg.inject });
  t.equal(injected.exitCode, 0, `${trip.name}: inject succeeds`);
  const un = run(injected.stdout, { functionConfig: cfg.uninject });
  const why = EXCEPTIONS[trip.name];
  if (why === undefined) {
    t.equal(
      un.exitCode,
      0,
      `${trip.name}: uninject succeeds ${JSON.stringify(un.results.filter((r) => r.severity === 'error').map((r) => r.message))}`,
    );
    t.equal(un.stdout, trip.input, `${trip.name}: uninject after inject gives back the input, byte for byte`);
    counts.bytes++;
    return;
  }
  counts.exceptions++;
  t.not(un.stdout, trip.input, `${trip.name}: still an exception (take it off the list when it passes): ${why}`);
  if (why.startsWith(ALREADY)) {
    t.equal(
      un.stdout,
      run(trip.input, { functionConfig: cfg.uninject }).stdout,
      `${trip.name}: uninject(inject(x)) = uninject(x)`,
    );
  }
  if (why.startsWith('refused') && why.includes('sidecar.istio.io/status')) {
    t.equal(un.exitCode, 1, `${trip.name}: refused with an error result`);
    t.match(
      un.results.find((r) => r.severity === 'error')?.field?.path,
      /metadata\.annotations\[sidecar\.istio\.io\/status\]$/,
      `${trip.name}: the error names the status annotation`,
    );
  } else if (why.startsWith('refused')) {
    t.equal(un.exitCode, 1, `${trip.name}: refused with an error result`);
  } else {
    t.equal(un.exitCode, 0, `${trip.name}: uninject succeeds`);
  }
}

/** The cases of a corpus in the given categories (with an expected output: the error cases do not inject). */
function corpus(mesh: string, categories: readonly string[]): Trip[] {
  const dir = `${DATA[mesh as keyof typeof DATA].path}/cases`;
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const c = `${dir}/${name}`;
      const category = String((parse(readFileSync(`${c}/case.yaml`, 'utf8')) as Obj).category ?? '');
      if (!categories.includes(category) || !existsSync(`${c}/expected.yaml`)) return [];
      return [
        {
          name: `${mesh}/${name}`,
          input: readFileSync(`${c}/input.yaml`, 'utf8'),
          fnConfig: readFileSync(`${c}/fn-config.yaml`, 'utf8'),
        },
      ];
    });
}

t.test('Istio corpus: every case that injects, every template', needs(DATA.istio), async (t) => {
  const trips = corpus('istio', ['kube-inject', 'webhook-only', 'go-template']);
  t.ok(trips.length >= 96, `all the injecting cases (${trips.length})`);
  for (const trip of trips) roundTrip(t, trip);
});

t.test('Linkerd corpus: every inject, annotate and namespace case', needs(DATA.linkerd), async (t) => {
  const trips = corpus('linkerd', ['inject', 'annotate', 'namespace']);
  t.ok(trips.length >= 30, `all the injecting cases (${trips.length})`);
  for (const trip of trips) roundTrip(t, trip);
});

t.test('Kuma corpus: every inject and skip case', needs(DATA.kuma), async (t) => {
  const trips = corpus('kuma', ['inject', 'skip']);
  t.ok(trips.length >= 36, `all the injecting cases (${trips.length})`);
  for (const trip of trips) roundTrip(t, trip);
});

t.test('examples', async (t) => {
  const ex = (f: string) => readFileSync(`${ROOT}examples/${f}`, 'utf8');
  const stream = (...files: string[]) => files.map((f) => ex(f).replace(/\n*$/, '\n')).join('---\n');
  const plain = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: defaults}\n';
  const shop = stream(
    'shop/namespaces.yaml',
    'shop/storefront.yaml',
    'shop/data.yaml',
    'shop/ops.yaml',
    'shop/backoffice.yaml',
  );
  const trips: Trip[] = [
    { name: 'example/shop', input: shop, fnConfig: ex('shop/injection.yaml') },
    { name: 'example/shop (flux config)', input: shop, fnConfig: ex('flux/injection.yaml') },
    { name: 'example/shop (kustomize exec config)', input: shop, fnConfig: ex('kustomize/exec/injection.yaml') },
    {
      name: 'example/shop (kustomize container config)',
      input: shop,
      fnConfig: ex('kustomize/container/injection.yaml'),
    },
    {
      name: 'example/meshinject-simple',
      input: ex('meshinject-simple/catalog.yaml'),
      fnConfig: ex('meshinject-simple/injection.yaml'),
    },
    {
      name: 'example/meshinject-exec',
      input: ex('meshinject-exec/batch.yaml'),
      fnConfig: ex('meshinject-exec/injection.yaml'),
    },
    { name: 'example/meshinject-imperative', input: ex('meshinject-imperative/workloads.yaml'), fnConfig: plain },
    {
      name: 'example/custom',
      input: stream('custom/app.yaml', 'custom/log-shipper-templates.yaml'),
      fnConfig: ex('custom/injection.yaml'),
    },
    { name: 'example/osm', input: stream('osm/namespace.yaml', 'osm/bookstore.yaml'), fnConfig: ex('osm/mesh.yaml') },
    {
      name: 'example/kuma',
      input: stream('kuma/namespace.yaml', 'kuma/app.yaml'),
      fnConfig: ex('kuma/injection.yaml'),
    },
    {
      name: 'example/argocd directory app',
      input: stream('argocd/apps/directory/ledger.yaml', 'argocd/apps/directory/reconcile-job.yaml'),
      fnConfig: ex('argocd/apps/directory/injection.yaml'),
    },
  ];
  for (const trip of trips) roundTrip(t, trip);
});

t.test('real-world apps', needs(REAL_WORLD), async (t) => {
  const rw = (f: string) => readFileSync(`${REAL_WORLD.path}/${f}`, 'utf8');
  const fixture = (app: string) => readFileSync(`${ROOT}test/fixtures/real-world/${app}/injection.yaml`, 'utf8');
  const boutique = readdirSync(`${REAL_WORLD.path}/online-boutique`)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
  const trips: Trip[] = [
    { name: 'real-world/bookinfo', input: rw('bookinfo/bookinfo.yaml'), fnConfig: fixture('bookinfo') },
    {
      name: 'real-world/podinfo production',
      input: rw('podinfo/production.rendered.yaml'),
      fnConfig: fixture('podinfo'),
    },
    ...boutique.map((f) => ({
      name: `real-world/online-boutique/${f}`,
      input: rw(`online-boutique/${f}`),
      fnConfig: fixture('online-boutique'),
    })),
    // Operators (issue #21): a user's default-container annotation, `volumes: []`, trailing comment blocks.
    {
      name: 'real-world/kubebuilder manager',
      input: rw('kubebuilder-manager/manager.yaml'),
      fnConfig: OPERATOR_CONFIG,
    },
    { name: 'real-world/rook operator', input: rw('rook-operator/operator.yaml'), fnConfig: OPERATOR_CONFIG },
  ];
  for (const trip of trips) roundTrip(t, trip);
});

/** The Istio cases whose round trip is listed, by case name, for the version-exact corpora too. */
const ISTIO_LISTED = Object.keys(EXCEPTIONS).flatMap((k) => (k.startsWith('istio/') ? [k.slice('istio/'.length)] : []));

/** Cases of one release only. */
const VERSION_EXCEPTIONS: Record<string, string> = {};

t.test('Istio version-exact corpora: every case that injects, each release', needs(VERSIONS), async (t) => {
  const root = VERSIONS.path ?? '';
  for (const tag of readdirSync(root)
    .filter((d) => existsSync(`${root}/${d}/cases`))
    .sort()) {
    const dir = `${root}/${tag}/cases`;
    let trips = 0;
    for (const name of readdirSync(dir).sort()) {
      const c = `${dir}/${name}`;
      const caseYaml = parse(readFileSync(`${c}/case.yaml`, 'utf8')) as Obj;
      if (!existsSync(`${c}/expected.yaml`)) continue;
      const key = `istio-versions/${tag}/${name}`;
      const why = VERSION_EXCEPTIONS[key] ?? (ISTIO_LISTED.includes(name) ? EXCEPTIONS[`istio/${name}`] : undefined);
      if (why !== undefined) EXCEPTIONS[key] = why;
      const fnConfig = caseFnConfig(c, caseYaml as never);
      roundTrip(t, { name: key, input: readFileSync(`${c}/input.yaml`, 'utf8'), fnConfig });
      trips++;
    }
    t.ok(trips >= 100, `${tag}: all the injecting cases (${trips})`);
  }
});

/**
 * Every driver over every input: the corpora's inputs, the examples, every manifest of the real-world apps, the
 * hostile fixtures and the inputs of the project's goldens (test/testdata), each injected by each driver with a
 * plain functionConfig (policy enabled; OSM and FSM with the input's namespaces monitored; the custom driver with
 * the example's templates), then uninjected. An input
 * the driver leaves as it is, or refuses, has nothing to give back; an input that already carries the
 * driver's injection must give uninject(inject(x)) = uninject(x). Two things of the input's framing are not
 * part of a document and are compared without: a leading BOM (`run` ignores it) and a ResourceList's
 * `results`, which every run writes anew.
 */
const DRIVER_CONFIGS: Record<string, (namespaces: readonly string[]) => string> = {
  istio: () => plainConfig('istio'),
  'istio ambient': () => `${plainConfig('istio')}  istio:\n    ambient: prefer\n`,
  linkerd: () => plainConfig('linkerd'),
  osm: (ns) => `${plainConfig('osm')}${monitored(ns, 'openservicemesh.io/monitored-by: osm')}`,
  fsm: (ns) => `${plainConfig('fsm')}${monitored(ns, 'flomesh.io/monitored-by: fsm')}`,
  kuma: () => plainConfig('kuma'),
  custom: () =>
    readFileSync(`${ROOT}examples/custom/injection.yaml`, 'utf8').replace(
      /\n {2}namespaceSelector:\n(?: {4}.*\n)+/,
      '\n  policy: enabled\n',
    ),
};
const CUSTOM_TEMPLATES = readFileSync(`${ROOT}examples/custom/log-shipper-templates.yaml`, 'utf8');

function plainConfig(mesh: string): string {
  return `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: round-trip}\nspec:\n  mesh: ${mesh}\n  policy: enabled\n`;
}

function monitored(namespaces: readonly string[], label: string): string {
  return `  namespaces:\n${namespaces.map((n) => `  - name: ${n}\n    labels: {${label}}\n`).join('')}`;
}

/** The namespaces an input names (and `default`). */
function namespacesOf(text: string): string[] {
  const named = [...text.matchAll(/^\s+namespace: ["']?([a-z0-9-]+)["']?\s*$/gm)].map((m) => m[1] ?? 'default');
  return [...new Set(['default', ...named])];
}

/** What a run's output is compared with: without a leading BOM and without the ResourceList's `results`. */
function framing(text: string): string {
  const noBom = text.replace(/^\uFEFF/, '');
  return /^kind: ResourceList\b/m.test(noBom) ? noBom.replace(/^results:[\s\S]*$/m, '') : noBom;
}

const MATRIX_EXCEPTIONS: Record<string, string> = {};
const matrixSeen = new Set<string>();

/** The inputs of the matrix: `[name, text]`. */
function matrixInputs(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const mesh of ['istio', 'linkerd', 'kuma'] as const) {
    const dir = `${DATA[mesh].path}/cases`;
    for (const name of readdirSync(dir).sort())
      if (existsSync(`${dir}/${name}/input.yaml`))
        out.push([`${mesh}/${name}`, readFileSync(`${dir}/${name}/input.yaml`, 'utf8')]);
  }
  const hostile = `${ROOT}test/fixtures/hostile`;
  for (const f of readdirSync(hostile).sort()) out.push([`hostile/${f}`, readFileSync(`${hostile}/${f}`, 'utf8')]);
  for (const f of ['shop/storefront.yaml', 'shop/ops.yaml', 'osm/bookstore.yaml', 'kuma/app.yaml', 'custom/app.yaml'])
    out.push([`examples/${f}`, readFileSync(`${ROOT}examples/${f}`, 'utf8')]);
  // Every manifest of the real-world apps (kustomizations and sources aside), and the project's own golden inputs.
  for (const f of yamlFiles(REAL_WORLD.path ?? ''))
    out.push([`real-world/${f}`, readFileSync(`${REAL_WORLD.path}/${f}`, 'utf8')]);
  const golden = `${ROOT}test/testdata`;
  for (const d of readdirSync(golden).sort())
    if (existsSync(`${golden}/${d}/input.yaml`))
      out.push([`testdata/${d}`, readFileSync(`${golden}/${d}/input.yaml`, 'utf8')]);
  return out;
}

/** The YAML files below `root`, as paths relative to it, sorted (kustomizations left out: not resources). */
function yamlFiles(root: string, dir = ''): string[] {
  return readdirSync(`${root}/${dir}`, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const rel = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.isDirectory()) return yamlFiles(root, rel);
      return /\.ya?ml$/.test(e.name) && !/^(?:kustomization|Kptfile)/.test(e.name) ? [rel] : [];
    });
}

function matrixTrip(t: Test, driver: string, name: string, text: string, tally: number[]): void {
  const key = `${driver}: ${name}`;
  const fnConfig = (DRIVER_CONFIGS[driver] as (ns: readonly string[]) => string)(namespacesOf(text));
  const input = driver === 'custom' ? `${text.replace(/\n*$/, '\n')}---\n${CUSTOM_TEMPLATES}` : text;
  const cfg = configs(fnConfig);
  const injected = run(input, { functionConfig: cfg.inject });
  if (injected.exitCode !== 0 || framing(injected.stdout) === framing(input)) {
    tally[0] = (tally[0] ?? 0) + 1;
    return;
  }
  matrixSeen.add(key);
  const un = run(injected.stdout, { functionConfig: cfg.uninject });
  const why = MATRIX_EXCEPTIONS[key];
  if (why !== undefined) {
    t.not(
      framing(un.stdout),
      framing(input),
      `${key}: still an exception (take it off the list when it passes): ${why}`,
    );
    tally[2] = (tally[2] ?? 0) + 1;
    return;
  }
  const direct = run(input, { functionConfig: cfg.uninject });
  const already = direct.exitCode === 0 && framing(direct.stdout) !== framing(input);
  const want = already ? framing(direct.stdout) : framing(input);
  t.equal(
    framing(un.stdout),
    want,
    `${key}: uninject after inject gives back ${already ? 'uninject(x)' : 'the input'}`,
  );
  tally[1] = (tally[1] ?? 0) + 1;
}

for (const driver of Object.keys(DRIVER_CONFIGS)) {
  t.test(
    `every input through the ${driver} driver`,
    needs(DATA.istio, DATA.linkerd, DATA.kuma, REAL_WORLD),
    async (t) => {
      const tally = [0, 0, 0];
      for (const [name, text] of matrixInputs()) matrixTrip(t, driver, name, text, tally);
      t.ok((tally[1] ?? 0) >= 100, `${driver}: most inputs inject and round-trip (${tally[1]})`);
      t.comment(
        `${driver}: ${tally[1]} round trips exact, ${tally[2]} listed exceptions, ${tally[0]} inputs not injected`,
      );
    },
  );
}

t.test(
  'the exception list names only cases that ran',
  needs(DATA.istio, DATA.linkerd, DATA.kuma, REAL_WORLD, VERSIONS),
  async (t) => {
    t.same(
      Object.keys(EXCEPTIONS).filter((k) => !seen.has(k)),
      [],
      'no stale entries',
    );
    t.same(
      Object.keys(MATRIX_EXCEPTIONS).filter((k) => !matrixSeen.has(k)),
      [],
      'no stale entries in the driver matrix',
    );
    t.comment(`round trips: ${counts.bytes} byte for byte, ${counts.exceptions} listed exceptions`);
  },
);
