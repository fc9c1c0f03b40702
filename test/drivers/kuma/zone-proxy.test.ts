// Kuma lets a zone proxy pod be injected before its Mesh exists, when the mesh is explicit (a `kuma.io/mesh` label
// on the pod or its namespace) and the pod is a zone proxy: it has the label `k8s.kuma.io/zone-proxy-type`, or a
// Service of its namespace with that label selects it (issue #37, item 5; kumahq/kuma precheck.go `preCheck`,
// `hasZoneProxyService`, and injector_test.go "allows zone proxy pods selected by a Service before the mesh exists
// when the mesh is on the namespace"). The routes are generated; the expectation is Kuma's rule written from the
// route.
import t from 'tap';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { run } from '../../../src/run.ts';

type Obj = Record<string, any>;

interface Route {
  meshOn: 'pod' | 'namespace' | 'none';
  podZoneLabel: boolean;
  service:
    | 'none'
    | 'selects'
    | 'selects-no-zone-label'
    | 'selects-other-pods'
    | 'no-selector'
    | 'other-namespace'
    | 'ignored'
    | 'ignore-unreadable';
  form: 'stream' | 'resource-list';
}

const CA = '"-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"';
// Only Mesh `other` exists: the pod's Mesh `default` does not.
const CONFIG = `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n  mesh: kuma\n  resultAnnotations: false\n  kuma:\n    controlPlane: {caCert: ${CA}}\n    meshes: {other: {}}\n`;

function documents(r: Route): Obj[] {
  const nsLabels: Obj = {
    'kuma.io/sidecar-injection': 'enabled',
    ...(r.meshOn === 'namespace' ? { 'kuma.io/mesh': 'default' } : {}),
  };
  const podLabels: Obj = {
    app: 'zone-proxy',
    ...(r.meshOn === 'pod' ? { 'kuma.io/mesh': 'default' } : {}),
    ...(r.podZoneLabel ? { 'k8s.kuma.io/zone-proxy-type': 'ingress' } : {}),
  };
  const docs: Obj[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'edge', labels: nsLabels } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'zone-proxy', namespace: 'edge' },
      spec: {
        selector: { matchLabels: { app: 'zone-proxy' } },
        template: {
          metadata: { labels: podLabels },
          spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    },
  ];
  if (r.service !== 'none') {
    const svc: Obj = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'zone-proxy-svc',
        namespace: r.service === 'other-namespace' ? 'elsewhere' : 'edge',
        labels: { 'k8s.kuma.io/zone-proxy-type': 'ingress' },
      },
      spec: {
        selector: { app: r.service === 'selects-other-pods' ? 'regular' : 'zone-proxy' },
        ports: [{ port: 10001 }],
      },
    };
    if (r.service === 'selects-no-zone-label') svc.metadata.labels = { team: 'edge' };
    if (r.service === 'no-selector') delete svc.spec.selector;
    if (r.service === 'ignored') svc.metadata.annotations = { 'kuma.io/ignore': 'enabled' };
    if (r.service === 'ignore-unreadable') svc.metadata.annotations = { 'kuma.io/ignore': 'sometimes' };
    docs.push(svc);
  }
  return docs;
}

/** Kuma's rule: the mesh is explicit and the pod is a zone proxy by its label or by a selecting zone-proxy Service. */
function injects(r: Route): boolean {
  const byService = r.service === 'selects' || r.service === 'ignore-unreadable';
  return r.meshOn !== 'none' && (r.podZoneLabel || byService);
}

const routeArb: fc.Arbitrary<Route> = fc.record({
  meshOn: fc.constantFrom('pod', 'namespace', 'none'),
  podZoneLabel: fc.boolean(),
  service: fc.constantFrom(
    'none',
    'selects',
    'selects-no-zone-label',
    'selects-other-pods',
    'no-selector',
    'other-namespace',
    'ignored',
    'ignore-unreadable',
  ),
  form: fc.constantFrom('stream', 'resource-list'),
});

function runRoute(r: Route) {
  const docs = documents(r);
  if (r.form === 'stream')
    return run(`${docs.map((d) => JSON.stringify(d)).join('\n---\n')}\n`, { functionConfig: CONFIG });
  const list = {
    apiVersion: 'config.kubernetes.io/v1',
    kind: 'ResourceList',
    items: docs,
    functionConfig: parseAllDocuments(CONFIG)[0]!.toJS(),
  };
  return run(`${JSON.stringify(list, null, 2)}\n`, {});
}

t.test("a zone proxy pod before its Mesh exists: injected exactly where Kuma's preCheck lets it through", async (t) => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(routeArb, (r) => {
      const out = runRoute(r);
      const want = injects(r);
      const errors = out.results.filter((x) => x.severity === 'error');
      const route = JSON.stringify(r);
      if (want) {
        if (out.exitCode !== 0)
          throw new Error(`${route}: exit ${out.exitCode}: ${errors.map((e) => e.message).join('; ')}`);
        if (!/"?name"?: "?kuma-sidecar"?/.test(out.stdout)) throw new Error(`${route}: no kuma-sidecar in the output`);
      } else {
        if (out.exitCode !== 1) throw new Error(`${route}: exit ${out.exitCode}, want 1`);
        if (!errors.some((e) => /meshes\.kuma\.io "default" not found/.test(e.message)))
          throw new Error(`${route}: the error names the missing Mesh: ${errors.map((e) => e.message).join('; ')}`);
      }
      seen.add(`${want}`);
    }),
    { numRuns: 80 },
  );
  t.same([...seen].sort(), ['false', 'true'], 'both outcomes were generated');
});

t.test("Kuma's own case: a Service selects the pod, the mesh is on the namespace", async (t) => {
  const ok = runRoute({ meshOn: 'namespace', podZoneLabel: false, service: 'selects', form: 'stream' });
  t.equal(ok.exitCode, 0, ok.results.map((r) => r.message).join('\n'));
  const noMesh = runRoute({ meshOn: 'none', podZoneLabel: false, service: 'selects', form: 'stream' });
  t.equal(noMesh.exitCode, 1, 'still refused when the mesh is set on neither the pod nor the namespace');
});
