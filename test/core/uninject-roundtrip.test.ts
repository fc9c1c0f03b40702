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

const DATA = {
  istio: testData('conformance/istio'),
  linkerd: testData('conformance/linkerd'),
  kuma: testData('conformance/kuma'),
};
const REAL_WORLD = testData('real-world');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Obj = Record<string, unknown>;

/** Why a round trip cannot give back the bytes; every reason is a loss in a record the mesh itself writes. */
const OVERRIDDEN =
  "the input customises an injected container (istio-proxy / istio-init); the injection replaces its text with the merged container, and Istio's proxy.istio.io/overrides records it as Go JSON (Go key order, canonical quantities, flow lists in block style, comments dropped)";
const ALREADY =
  'the input is already injected: uninject removes that injection too (checked: uninject(inject(x)) = uninject(x))';

const KUMA_GRPC =
  "a gRPC probe lists `service` before `port`; Kuma's virtual probe (/grpc/<port> with an X-Kuma-Probes-GRPC-Service header) keeps no key order, so the probe comes back as `port`, then `service`";

const EXCEPTIONS: Record<string, string> = {
  'istio/proxy-override': OVERRIDDEN,
  'istio/proxy-override-args': OVERRIDDEN,
  'istio/proxy-override-args-native': OVERRIDDEN,
  'istio/proxy-override-runas': OVERRIDDEN,
  'istio/proxy-override-runas-cni': OVERRIDDEN,
  'istio/proxy-override-runas-tproxy': OVERRIDDEN,
  'istio/hello-openshift-custom-injection': `${OVERRIDDEN}; also \`image: "auto"\` comes back unquoted and the user's \`resources: {}\` absent (Go writes \`resources: {}\` for every container), and Istio drops the proxy's runAsUser equal to the app's before recording (platform openshift)`,
  'istio/merge-probers': ALREADY,
  'linkerd/emojivoto-already-injected': ALREADY,
  'linkerd/tap-deployment-debug':
    "the input is a Linkerd control-plane component already injected with an old proxy; uninject removes that proxy too and, as `linkerd uninject`, keeps every linkerd.io/* key of a control-plane component (its metadata is Linkerd's own), so the keys the injection rewrote (created-by, trust-root-sha256, workload-ns) keep the new values",
  'kuma/inject-21-probe-proxy-named-ports':
    "a probe names its port (`port: liveness-port`); Kuma's virtual probe path (/8080/metrics) carries the port number it resolved the name to, so the probe comes back with the number (the kubelet reads both the same)",
  'kuma/inject-03-generate-name-and-probes': KUMA_GRPC,
  'kuma/inject-40-probe-proxy-enabled-by-annotation': KUMA_GRPC,
  'istio/custom-template':
    'refused: a user Go template adds volume some-injected-file, which no built-in Istio template gives, and uninject does not take sidecar.istio.io/status on trust for names outside the built-in templates (the error names the annotation)',
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
  if (why.startsWith('refused')) {
    t.equal(un.exitCode, 1, `${trip.name}: refused with an error result`);
    t.match(
      un.results.find((r) => r.severity === 'error')?.field?.path,
      /metadata\.annotations\[sidecar\.istio\.io\/status\]$/,
      `${trip.name}: the error names the status annotation`,
    );
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

t.test(
  'the exception list names only cases that ran',
  needs(DATA.istio, DATA.linkerd, DATA.kuma, REAL_WORLD),
  async (t) => {
    t.same(
      Object.keys(EXCEPTIONS).filter((k) => !seen.has(k)),
      [],
      'no stale entries',
    );
    t.comment(`round trips: ${counts.bytes} byte for byte, ${counts.exceptions} listed exceptions`);
  },
);
