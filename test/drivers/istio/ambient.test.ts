// Istio's ambient data plane (issue #38 items 1-3): the data-plane mode of every workload (tag
// meshinject.dev/dataplane) against an oracle written from Istio's CNI rules (cni/README.md: enrolled when the
// namespace or pod label istio.io/dataplane-mode is ambient, the pod has no sidecar.istio.io/status, and its own
// label is not none), spec.istio.ambient coexist|prefer, and the package findings, as the results, explain, the
// check table, JUnit and SARIF show them.
import t from 'tap';
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { run } from '../../../src/run.ts';
import type { KrmResult } from '../../../src/model.ts';
import { runCli, workspace, type Obj } from '../../helpers/e2e.ts';
import { deploymentYaml, docsOf, namespaceYaml } from '../../helpers/fixtures.ts';

const DATAPLANE = 'istio.io/dataplane-mode';
const STATUS = 'sidecar.istio.io/status';

type Labels = Record<string, string>;
interface Ns {
  name: string;
  labels: Labels;
}
interface Wl {
  name: string;
  ns: string;
  labels: Labels;
}

const nsYaml = (n: Ns) => namespaceYaml(n.name, n.labels);
const deployYaml = (w: Wl) => deploymentYaml(w.name, w.ns, w.labels);
const configYaml = (istio: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: x}\nspec: ${JSON.stringify({ ...spec, istio })}\n`;
const docs = docsOf;
const tagOf = (r: KrmResult | undefined, key: string) => r?.tags?.[`meshinject.dev/${key}`];

/** The oracle: Istio's CNI enrolment rules on a pod as written (cni/README.md), and the sidecar taking precedence. */
function oracleDataplane(podLabels: Labels, annotations: Labels, nsLabels: Labels): 'sidecar' | 'ambient' | 'none' {
  if (Object.hasOwn(annotations, STATUS)) return 'sidecar';
  const own = podLabels[DATAPLANE];
  return own === 'ambient' || (own !== 'none' && nsLabels[DATAPLANE] === 'ambient') ? 'ambient' : 'none';
}

const labelChoice = (key: string, values: string[]) =>
  fc.constantFrom<Labels>({}, ...values.map((v) => ({ [key]: v })));
const arbNsLabels = fc
  .tuple(
    labelChoice(DATAPLANE, ['ambient', 'none', 'Ambient']),
    fc.constantFrom<Labels>(
      {},
      { 'istio-injection': 'enabled' },
      { 'istio-injection': 'disabled' },
      { 'istio.io/rev': 'default' },
    ),
  )
  .map(([a, b]) => ({ ...a, ...b }));
const arbPodLabels = fc
  .tuple(labelChoice(DATAPLANE, ['ambient', 'none']), labelChoice('sidecar.istio.io/inject', ['true', 'false']))
  .map(([a, b]) => ({ ...a, ...b }));

/** A package (2 namespaces, 1-4 workloads), a config (ambient mode, selection, policy) and whether to remove skipped sidecars. */
const arbRoute = fc.record({
  namespaces: fc.tuple(arbNsLabels, arbNsLabels).map(([a, b]): Ns[] => [
    { name: 'ns-a', labels: a },
    { name: 'ns-b', labels: b },
  ]),
  workloads: fc
    .array(fc.tuple(fc.constantFrom('ns-a', 'ns-b'), arbPodLabels), { minLength: 1, maxLength: 4 })
    .map((ws) => ws.map(([ns, labels], i): Wl => ({ name: `w${i}`, ns, labels }))),
  ambient: fc.constantFrom<Array<string | undefined>>(undefined, 'coexist', 'prefer'),
  selection: fc.constantFrom('kube-inject', 'webhook'),
  policy: fc.constantFrom('enabled', 'disabled'),
});

t.test(
  'every Istio workload result carries the data-plane mode of the workload as written, and prefer leaves enrolled pods to ztunnel',
  async (t) => {
    let checked = 0;
    fc.assert(
      fc.property(arbRoute, (route) => {
        const input = [...route.namespaces.map(nsYaml), ...route.workloads.map(deployYaml)].join('---\n');
        const istio = { selection: route.selection, ...(route.ambient ? { ambient: route.ambient } : {}) };
        const out = run(input, { functionConfig: configYaml(istio, { policy: route.policy }), inputName: 'in.yaml' });
        if (out.exitCode !== 0) throw new Error(`exit ${out.exitCode}: ${out.stderr}`);
        const written = docs(out.stdout);
        for (const w of route.workloads) {
          const nsLabels = route.namespaces.find((n) => n.name === w.ns)!.labels;
          const doc = written.find((d) => (d.metadata as Obj).name === w.name)!;
          const meta = (doc as { spec: { template: { metadata: { labels?: Labels; annotations?: Labels } } } }).spec
            .template.metadata;
          const expected = oracleDataplane(meta.labels ?? {}, meta.annotations ?? {}, nsLabels);
          const own = out.results.filter((r) => r.resourceRef?.name === w.name);
          const result = own.find((r) => tagOf(r, 'outcome'));
          if (tagOf(result, 'dataplane') !== expected)
            throw new Error(`${w.name}: tag ${tagOf(result, 'dataplane')}, oracle ${expected}`);
          const enrolledByLabels = oracleDataplane(w.labels, {}, nsLabels) === 'ambient';
          if (route.ambient === 'prefer' && enrolledByLabels) {
            if (tagOf(result, 'reason') !== 'ambient-enrolled' || expected !== 'ambient')
              throw new Error(`${w.name}: prefer left a sidecar or another reason (${tagOf(result, 'reason')})`);
          }
          const warned = own.some((r) => r.severity === 'warning' && tagOf(r, 'reason') === 'ambient-sidecar');
          if (warned !== (expected === 'sidecar' && enrolledByLabels))
            throw new Error(
              `${w.name}: ambient-sidecar warning ${warned}, sidecar ${expected}, enrolled by labels ${enrolledByLabels}`,
            );
          checked++;
        }
        for (const n of route.namespaces) {
          const both =
            n.labels[DATAPLANE] === 'ambient' &&
            (n.labels['istio-injection'] === 'enabled' || n.labels['istio.io/rev'] !== undefined);
          const warned = out.results.some(
            (r) =>
              r.resourceRef?.kind === 'Namespace' &&
              r.resourceRef.name === n.name &&
              tagOf(r, 'reason') === 'ambient-injection-label',
          );
          if (warned !== both)
            throw new Error(`namespace ${n.name} ${JSON.stringify(n.labels)}: ambient-injection-label ${warned}`);
        }
      }),
      { numRuns: 60 },
    );
    t.ok(checked > 60, `${checked} workloads checked against the oracle`);
  },
);

const AMBIENT_NS: Ns = { name: 'shop', labels: { [DATAPLANE]: 'ambient' } };

t.test('prefer with removeWhenSkipped takes an existing sidecar off an enrolled pod; uninject does too', async (t) => {
  const base = [nsYaml({ name: 'shop', labels: {} }), deployYaml({ name: 'web', ns: 'shop', labels: {} })].join(
    '---\n',
  );
  const injected = run(base, { functionConfig: configYaml({}) });
  t.equal(injected.exitCode, 0, injected.stderr);
  t.match(injected.stdout, STATUS, 'the sidecar is in');
  const moved = injected.stdout.replace(
    '  name: shop\n  labels: {}',
    `  name: shop\n  labels: {"${DATAPLANE}": "ambient"}`,
  );
  t.not(moved, injected.stdout, 'the namespace is now labelled ambient');
  const kept = run(moved, { functionConfig: configYaml({ ambient: 'prefer' }) });
  t.match(kept.stdout, STATUS, 'without removeWhenSkipped the sidecar stays');
  t.ok(
    kept.results.some((r) => r.severity === 'warning' && /already injected/.test(r.message)),
    'with a warning',
  );
  t.ok(
    kept.results.some((r) => tagOf(r, 'reason') === 'ambient-sidecar'),
    'and the ambient-sidecar warning',
  );
  const removed = run(moved, { functionConfig: configYaml({ ambient: 'prefer' }, { removeWhenSkipped: true }) });
  t.equal(removed.exitCode, 0, removed.stderr);
  t.notMatch(removed.stdout, STATUS, 'removeWhenSkipped takes the sidecar off');
  t.notMatch(removed.stdout, /istio-proxy/);
  const r = removed.results.find((x) => x.resourceRef?.name === 'web' && tagOf(x, 'outcome'));
  t.equal(tagOf(r, 'outcome'), 'uninjected');
  t.equal(tagOf(r, 'dataplane'), 'ambient', 'the workload is now served by ztunnel');
  const un = run(moved, { functionConfig: configYaml({}, { mode: 'uninject' }) });
  t.equal(
    tagOf(
      un.results.find((x) => tagOf(x, 'outcome')),
      'dataplane',
    ),
    'ambient',
    'uninject results carry the mode too',
  );
});

/** A security.istio.io AuthorizationPolicy selecting app=web with the given rule. */
const policyYaml = (name: string, rule: Obj, extra = '') => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: ${name}
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  rules: [${JSON.stringify(rule)}]
${extra}`;

t.test('check rules: each ambient rule fails a check by its own name, and passes once fixed', async (t) => {
  const l7Rules: Array<[string, Obj]> = [
    ['methods', { to: [{ operation: { methods: ['GET'] } }] }],
    ['paths', { to: [{ operation: { paths: ['/admin'] } }] }],
    ['headers', { when: [{ key: 'request.headers[x-user]', values: ['a'] }] }],
    ['request principals', { from: [{ source: { requestPrincipals: ['*'] } }] }],
  ];
  const files: Record<string, string> = {
    'prefer.yaml': configYaml({ ambient: 'prefer' }),
    'ns.yaml': nsYaml({ name: 'shop', labels: { [DATAPLANE]: 'ambient', 'istio.io/use-waypoint': 'waypoint' } }),
    'web.yaml': deployYaml({ name: 'web', ns: 'shop', labels: {} }),
    'l4.yaml': policyYaml('l4-only', { from: [{ source: { principals: ['cluster.local/ns/a/sa/b'] } }] }),
    ...Object.fromEntries(l7Rules.map(([, rule], i) => [`l7-${i}.yaml`, policyYaml(`l7-${i}`, rule)])),
  };
  const dir = workspace(t, files);
  const all = ['ns.yaml', 'web.yaml', 'l4.yaml', ...l7Rules.map((_, i) => `l7-${i}.yaml`)];
  const out = runCli(['check', '-c', 'prefer.yaml', ...all], { cwd: dir });
  t.equal(out.status, 1, 'the check fails');
  for (const [what] of l7Rules) {
    const i = l7Rules.findIndex(([w]) => w === what);
    t.match(
      out.stderr,
      new RegExp(
        `\\[error\\] security\\.istio\\.io/v1/AuthorizationPolicy/shop/l7-${i} spec\\.selector: ambient-l7-policy: `,
      ),
      `an L7 rule on ${what} is found`,
    );
  }
  t.notMatch(out.stderr, /l4-only/, 'an L4-only policy is fine in ambient');
  t.match(
    out.stderr,
    /\[error\] v1\/Namespace\/shop metadata\.labels: waypoint-missing: namespace shop is labelled istio\.io\/use-waypoint=waypoint, but the package holds no waypoint Gateway shop\/waypoint/,
  );
  t.notMatch(out.stderr, /ambient-sidecar|ambient-injection-label/, 'prefer: no sidecar, no injection label');

  const both = workspace(t, {
    'ns.yaml': nsYaml({ name: 'shop', labels: { [DATAPLANE]: 'ambient', 'istio.io/rev': 'stable' } }),
    'web.yaml': deployYaml({ name: 'web', ns: 'shop', labels: {} }),
  });
  const injected = runCli(['ns.yaml', 'web.yaml'], { cwd: both });
  t.equal(injected.status, 0, 'coexist: the injection itself does not fail');
  t.match(
    injected.stderr,
    /\[warning\] v1\/Namespace\/shop metadata\.labels: ambient-injection-label: namespace shop carries both istio\.io\/dataplane-mode=ambient and istio\.io\/rev=stable/,
  );
  t.match(injected.stderr, /\[warning\] apps\/v1\/Deployment\/shop\/web: ambient-sidecar: /);
  const withSidecar = workspace(t, { 'all.yaml': injected.stdout });
  const check = runCli(['check', 'all.yaml', '--report', 'sarif'], { cwd: withSidecar });
  t.equal(check.status, 1);
  const sarif = JSON.parse(check.stdout) as {
    runs: Array<{
      tool: { driver: { rules: Array<{ id: string; shortDescription: { text: string } }> } };
      results: Array<{ ruleId: string; properties?: Labels }>;
    }>;
  };
  const ids = sarif.runs[0]!.results.map((r) => r.ruleId).sort();
  t.same(ids, ['ambient-injection-label', 'ambient-sidecar'], 'one finding per rule');
  t.match(
    sarif.runs[0]!.tool.driver.rules.find((r) => r.id === 'ambient-sidecar')?.shortDescription.text,
    /takes precedence over ztunnel/,
    'described by the driver',
  );
  t.same(
    sarif.runs[0]!.results.find((r) => r.ruleId === 'ambient-sidecar')?.properties,
    { dataplane: 'sidecar' },
    'SARIF results carry the workload tags',
  );

  const fixed = workspace(t, {
    'prefer.yaml': configYaml({ ambient: 'prefer' }),
    'ns.yaml': nsYaml({ name: 'shop', labels: { [DATAPLANE]: 'ambient', 'istio.io/use-waypoint': 'waypoint' } }),
    'gw.yaml':
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: waypoint\n  namespace: shop\nspec:\n  gatewayClassName: istio-waypoint\n  listeners: [{name: mesh, port: 15008, protocol: HBONE}]\n',
    'web.yaml': deployYaml({ name: 'web', ns: 'shop', labels: {} }),
    'l7.yaml': `apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: l7\n  namespace: shop\nspec:\n  targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}]\n  rules: [{to: [{operation: {methods: [GET]}}]}]\n`,
  });
  const ok = runCli(['check', '-c', 'prefer.yaml', 'ns.yaml', 'gw.yaml', 'web.yaml', 'l7.yaml', '--report', 'table'], {
    cwd: fixed,
  });
  t.equal(ok.status, 0, ok.stderr);
  t.match(
    ok.stderr,
    /^shop\s+Deployment\s+web\s+skipped\s+ambient-enrolled\s+istio\s+ambient$/m,
    'the table shows the data-plane mode',
  );
});

t.test('explain and JUnit show the data-plane mode', async (t) => {
  const dir = workspace(t, {
    'prefer.yaml': configYaml({ ambient: 'prefer' }),
    'in.yaml': [
      nsYaml(AMBIENT_NS),
      deployYaml({ name: 'web', ns: 'shop', labels: {} }),
      deployYaml({ name: 'keep', ns: 'shop', labels: { [DATAPLANE]: 'none' } }),
    ].join('---\n'),
  });
  const text = runCli(['explain', '-c', 'prefer.yaml', 'in.yaml'], { cwd: dir });
  t.equal(text.status, 0, text.stderr);
  t.match(
    text.stdout,
    /Deployment shop\/web[^]*istio\.ambient\s+decided\s+namespace shop is labelled istio\.io\/dataplane-mode=ambient[^]*\n {2}=> skipped \(ambient-enrolled\): [^\n]*\n {5}dataplane: ambient\n/,
  );
  t.match(
    text.stdout,
    /Deployment shop\/keep[^]*\n {2}=> injected \(policy-enabled\): [^\n]*\n {5}dataplane: sidecar\n/,
  );
  const json = JSON.parse(
    runCli(['explain', '-c', 'prefer.yaml', 'in.yaml', '-o', 'json'], { cwd: dir }).stdout,
  ) as Array<{ name: string; tags?: Labels }>;
  t.same(
    json.map((e) => [e.name, e.tags?.dataplane]),
    [
      ['web', 'ambient'],
      ['keep', 'sidecar'],
    ],
  );
  const junit = runCli(['check', '-c', 'prefer.yaml', 'in.yaml', '--report', 'junit'], { cwd: dir });
  t.equal(XMLValidator.validate(junit.stdout), true, 'well-formed XML');
  t.match(
    junit.stdout,
    /<testcase name="Deployment shop\/web"[^>]*>\n\s*<properties>\n\s*<property name="dataplane" value="ambient"\/>\n\s*<\/properties>/,
  );
});
