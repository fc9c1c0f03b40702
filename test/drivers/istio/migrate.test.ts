// meshinject migrate --to ambient|sidecar for Istio (issue #38 item 4), checked against the order of Istio's
// "Migrate from Sidecar to Ambient" guide (istio.io/latest/docs/ambient/migrate/enable-ambient-mode/): waypoint
// first (a sync wave before its namespace), the namespace labelled istio.io/dataplane-mode=ambient with its
// injection labels gone, sidecars off the manifests, one roll of every workload; what cannot move is a note.
import t from 'tap';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, runMigration } from '../../../src/run.ts';
import { ROOT, runCli, workspace, type Obj } from '../../helpers/e2e.ts';
import { deploymentYaml, docsOf, namespaceYaml } from '../../helpers/fixtures.ts';

type Labels = Record<string, string>;
const DATAPLANE = 'istio.io/dataplane-mode';
const nsYaml = namespaceYaml;
const deployYaml = deploymentYaml;
const L7 = (ns: string) =>
  `apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: l7\n  namespace: ${ns}\nspec:\n  selector: {matchLabels: {app: w0}}\n  rules: [{to: [{operation: {paths: [/admin]}}]}]\n`;
const docs = docsOf;
const meta = (d: Obj) => d.metadata as { name: string; namespace?: string; labels?: Labels; annotations?: Labels };
const podMeta = (d: Obj) =>
  (d as { spec: { template: { metadata: { labels?: Labels; annotations?: Labels } } } }).spec.template.metadata;
const migrate = (text: string, to: string, namespaces: string[], options: Record<string, string> = {}) =>
  runMigration([{ text, name: 'in.yaml' }], {}, { to, namespaces, options });

const arbRoute = fc.record({
  injection: fc.constantFrom<Labels>({ 'istio-injection': 'enabled' }, { 'istio.io/rev': 'stable' }, {}),
  wave: fc.constantFrom<Array<number | undefined>>(undefined, 0, 3),
  pods: fc.array(
    fc.constantFrom<Labels>(
      {},
      { [DATAPLANE]: 'none' },
      { 'sidecar.istio.io/inject': 'true' },
      { 'istio.io/rev': 'stable' },
    ),
    { minLength: 1, maxLength: 3 },
  ),
  kubeInjected: fc.boolean(),
  l7: fc.boolean(),
  waypoint: fc.constantFrom<Array<string | undefined>>(undefined, 'wp'),
  other: fc.boolean(),
});

t.test('--to ambient follows the guide on generated packages, is idempotent, and --to sidecar undoes it', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(arbRoute, (r) => {
      const parts = [
        nsYaml('shop', r.injection, r.wave),
        ...r.pods.map((labels, i) => deployYaml(`w${i}`, 'shop', labels)),
        ...(r.l7 ? [L7('shop')] : []),
        ...(r.other ? [nsYaml('other', { 'istio-injection': 'enabled' }), deployYaml('x', 'other', {})] : []),
      ];
      let input = parts.join('---\n');
      if (r.kubeInjected) input = run(input, {}).stdout;
      const out = migrate(input, 'ambient', ['shop'], r.waypoint ? { waypoint: r.waypoint } : {});
      if (out.exitCode !== 0) throw new Error(out.stderr);
      const after = docs(out.stdout);
      const ns = after.find((d) => d.kind === 'Namespace' && meta(d).name === 'shop')!;
      const labels = meta(ns).labels ?? {};
      if (
        labels[DATAPLANE] !== 'ambient' ||
        labels['istio-injection'] !== undefined ||
        labels['istio.io/rev'] !== undefined
      )
        throw new Error(`namespace labels ${JSON.stringify(labels)}`);
      const gw = after.filter((d) => d.kind === 'Gateway');
      const wantGw = r.waypoint ?? (r.l7 ? 'waypoint' : undefined);
      if (gw.length !== (wantGw ? 1 : 0)) throw new Error(`${gw.length} Gateways, wanted ${wantGw ?? 'none'}`);
      if (wantGw) {
        const g = gw[0]!;
        if (
          meta(g).name !== wantGw ||
          meta(g).namespace !== 'shop' ||
          (g.spec as Obj).gatewayClassName !== 'istio-waypoint'
        )
          throw new Error('not the waypoint');
        if (labels['istio.io/use-waypoint'] !== wantGw) throw new Error('the namespace does not use the waypoint');
        if (!(Number(meta(g).annotations?.['argocd.argoproj.io/sync-wave']) < (r.wave ?? 0)))
          throw new Error('the waypoint is not in an earlier sync wave than the namespace');
        const order = after.map((d) => d.kind);
        if (order.indexOf('Gateway') !== order.indexOf('Namespace') + 1)
          throw new Error('the waypoint is not written after its namespace');
      }
      for (const d of after.filter((x) => x.kind === 'Deployment' && meta(x).namespace === 'shop')) {
        const pm = podMeta(d);
        const none = pm.labels?.[DATAPLANE] === 'none';
        if (
          !none &&
          (pm.annotations?.['sidecar.istio.io/status'] !== undefined ||
            pm.annotations?.['meshinject.dev/dataplane'] !== 'ambient')
        )
          throw new Error(`${meta(d).name}: sidecar left or no roll annotation`);
        if (
          !none &&
          (pm.labels?.['sidecar.istio.io/inject'] !== undefined || pm.labels?.['istio.io/rev'] !== undefined)
        )
          throw new Error(`${meta(d).name}: a pod injection label is left`);
      }
      if (r.other && out.stdout.split('name: other').length !== input.split('name: other').length)
        throw new Error('another namespace changed');
      const l7Note = out.results.some(
        (x) => x.severity === 'warning' && x.resourceRef?.name === 'l7' && /targetRefs/.test(x.message),
      );
      if (l7Note !== r.l7) throw new Error(`L7 note ${l7Note}`);
      const again = migrate(out.stdout, 'ambient', ['shop'], r.waypoint ? { waypoint: r.waypoint } : {});
      if (again.stdout !== out.stdout) throw new Error('a second migration changes the package');
      const back = migrate(out.stdout, 'sidecar', ['shop']);
      // A namespace that was on sidecars by its label comes back as it was (one without a label gets istio-injection=enabled).
      if (
        !r.kubeInjected &&
        Object.keys(r.injection).length > 0 &&
        JSON.stringify(docs(back.stdout)) !== JSON.stringify(docs(input))
      )
        throw new Error(`--to sidecar does not give the package back:\n${back.stdout}`);
      const backNs =
        meta(docs(back.stdout).find((d) => d.kind === 'Namespace' && meta(d).name === 'shop')!).labels ?? {};
      const restored = Object.keys(r.injection).length ? r.injection : { 'istio-injection': 'enabled' };
      for (const [k, v] of Object.entries(restored))
        if (backNs[k] !== v) throw new Error(`--to sidecar did not restore ${k}=${v}`);
      checked++;
    }),
    { numRuns: 30 },
  );
  t.equal(checked, 30, 'every generated package migrated and back');
});

t.test('the CLI: stdout, --diff, -i (all files or none), notes for what moves by hand, and bad requests', async (t) => {
  const dir = workspace(t, {
    'ns.yaml': nsYaml('shop', { 'istio-injection': 'enabled' }),
    'web.yaml': deployYaml('web', 'shop', {}),
    'prefer.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: x}\nspec:\n  istio: {ambient: prefer}\n',
    'vs.yaml':
      'apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  hosts: [web]\n  http: [{route: [{destination: {host: web}}]}]\n',
  });
  const before = readFileSync(join(dir, 'ns.yaml'), 'utf8');
  const diff = runCli(
    ['migrate', '--to', 'ambient', '-n', 'shop', '-n', 'gone', '--diff', 'ns.yaml', 'web.yaml', 'vs.yaml'],
    { cwd: dir },
  );
  t.equal(diff.status, 1, '--diff: exit 1 when the migration changes something');
  t.match(diff.stdout, /^diff --git a\/ns\.yaml b\/ns\.yaml$/m);
  t.match(diff.stdout, /^- {2}labels: \{"istio-injection":"enabled"\}$/m);
  t.match(diff.stdout, /^\+ {2}labels: \{istio\.io\/dataplane-mode: ambient\}$/m, 'a flow map stays a flow map');
  t.match(diff.stdout, /^\+ {8}meshinject\.dev\/dataplane: ambient$/m);
  t.match(
    diff.stderr,
    /\[warning\] networking\.istio\.io\/v1\/VirtualService\/shop\/web: migrate-virtualservice: .*HTTPRoute/,
  );
  t.match(
    diff.stderr,
    /\[warning\] v1\/Namespace\/gone: migrate-namespace: namespace gone is not a Namespace object in the package/,
  );
  t.equal(readFileSync(join(dir, 'ns.yaml'), 'utf8'), before, '--diff writes nothing');
  const inPlace = runCli(['migrate', '--to', 'ambient', '-n', 'shop', '-i', 'ns.yaml', 'web.yaml', 'vs.yaml'], {
    cwd: dir,
  });
  t.equal(inPlace.status, 0, inPlace.stderr);
  t.match(inPlace.stderr, /2 file\(s\) changed: ns\.yaml, web\.yaml/);
  t.match(readFileSync(join(dir, 'ns.yaml'), 'utf8'), /istio\.io\/dataplane-mode: ambient/);
  const none = runCli(['migrate', '--to', 'ambient', '-n', 'shop', '--diff', 'ns.yaml', 'web.yaml'], { cwd: dir });
  t.equal(none.status, 0, 'a second migration changes nothing');
  t.equal(none.stdout, '');
  const checked = runCli(['check', 'ns.yaml', 'web.yaml', '-c', 'prefer.yaml'], { cwd: dir });
  t.equal(checked.status, 0, `the migrated package passes a check with ambient: prefer: ${checked.stderr}`);

  for (const [args, message] of [
    [['migrate', '-n', 'shop', 'ns.yaml'], /needs --to TARGET/],
    [['migrate', '--to', 'ambient', 'ns.yaml'], /needs at least one --namespace/],
    [['migrate', '--to', 'mars', '-n', 'shop', 'ns.yaml'], /--to must be ambient or sidecar for Istio; got "mars"/],
    [['migrate', '--to', 'sidecar', '--waypoint', 'w', '-n', 'shop', 'ns.yaml'], /--waypoint is for --to ambient/],
    [
      ['migrate', '--to', 'ambient', '-n', 'shop', '--diff', '-i', 'ns.yaml'],
      /--diff and --in-place exclude each other/,
    ],
    [['--to', 'ambient', 'ns.yaml'], /option --to does not apply to meshinject/],
  ] as const) {
    const bad = runCli([...args], { cwd: dir });
    t.equal(bad.status, 2, `${args.join(' ')}: exit 2`);
    t.match(bad.stderr, message);
    t.equal(bad.stdout, '');
  }
  t.match(
    readFileSync(join(dir, 'ns.yaml'), 'utf8'),
    /istio\.io\/dataplane-mode: ambient/,
    'a refused request writes nothing',
  );
});

t.test(
  'the worked example (examples/ambient): migrated to ambient, the policy moved by hand, checked, and back',
  async (t) => {
    const src = (f: string) => readFileSync(join(ROOT, 'examples/ambient', f), 'utf8');
    const files = {
      'namespace.yaml': src('namespace.yaml'),
      'app.yaml': src('app.yaml'),
      'ambient.yaml': src('ambient.yaml'),
    };
    const dir = workspace(t, files);
    const moved = runCli(['migrate', '--to', 'ambient', '--namespace', 'shop', '-i', 'namespace.yaml', 'app.yaml'], {
      cwd: dir,
    });
    t.equal(moved.status, 0, moved.stderr);
    t.match(
      moved.stderr,
      /\[warning\] security\.istio\.io\/v1\/AuthorizationPolicy\/shop\/storefront-read-only spec\.selector: ambient-l7-policy: .*targetRefs/,
    );
    const ns = readFileSync(join(dir, 'namespace.yaml'), 'utf8');
    t.match(
      ns,
      /sync-wave: "-1"[\s\S]*gatewayClassName: istio-waypoint/,
      'the waypoint, one wave before the namespace',
    );
    const failing = runCli(['check', '-c', 'ambient.yaml', 'namespace.yaml', 'app.yaml'], { cwd: dir });
    t.equal(failing.status, 1, 'the selector-based L7 policy fails the check');
    t.match(failing.stderr, /ambient-l7-policy: /);
    const app = readFileSync(join(dir, 'app.yaml'), 'utf8');
    const byHand = app.replace(
      / {2}selector:\n {4}matchLabels:\n {6}app: storefront\n {2}action: ALLOW/,
      '  targetRefs:\n  - {kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}\n  action: ALLOW',
    );
    t.not(byHand, app, 'the hand edit the warning asks for');
    writeFileSync(join(dir, 'app.yaml'), byHand);
    const passing = runCli(['check', '-c', 'ambient.yaml', 'namespace.yaml', 'app.yaml', '--report', 'table'], {
      cwd: dir,
    });
    t.equal(passing.status, 0, passing.stderr);
    t.match(passing.stderr, /^shop\s+Deployment\s+storefront\s+skipped\s+ambient-enrolled\s+istio\s+ambient$/m);
    const back = runCli(['migrate', '--to', 'sidecar', '--namespace', 'shop', '-i', 'namespace.yaml', 'app.yaml'], {
      cwd: dir,
    });
    t.equal(back.status, 0, back.stderr);
    t.equal(
      readFileSync(join(dir, 'namespace.yaml'), 'utf8'),
      files['namespace.yaml'],
      'the namespace file is as it was',
    );
    t.equal(
      readFileSync(join(dir, 'app.yaml'), 'utf8'),
      byHand.replace('      annotations:\n        meshinject.dev/dataplane: ambient\n', ''),
      'the Deployment as it was (the policy keeps the hand edit)',
    );
  },
);
