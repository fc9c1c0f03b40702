// End to end: spec.injectedWorkloadAnnotations, the opt-in annotations written on injected workloads of a
// kind: Flux's `kustomize.toolkit.fluxcd.io/force: enabled` and Argo CD's
// `argocd.argoproj.io/sync-options: Replace=true` for Jobs, whose pod template is immutable.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { get, idOf, makeTempDir, runCli, type Obj } from '../helpers/e2e.ts';

const FORCE = 'kustomize.toolkit.fluxcd.io/force';
const SYNC = 'argocd.argoproj.io/sync-options';
const SHOP = ['namespaces', 'storefront', 'data', 'ops', 'backoffice'].map((f) => `examples/shop/${f}.yaml`);

function layer(dir: string, spec: string): string {
  const file = join(dir, 'layer.yaml');
  writeFileSync(
    file,
    `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: layer}\nspec:\n${spec}`,
  );
  return file;
}
const annotations = (stdout: string) =>
  new Map(
    parseAllDocuments(stdout)
      .map((d) => d.toJS() as Obj)
      .map((o) => [idOf(o), (get(o, 'metadata', 'annotations') ?? {}) as Obj]),
  );

t.test('the configured annotations go on injected workloads of the kind, nowhere else', async (t) => {
  const tmp = makeTempDir('job-annotations');
  t.teardown(tmp.cleanup);
  const cfg = layer(
    tmp.dir,
    `  injectedWorkloadAnnotations:\n    Job:\n      ${FORCE}: enabled\n      ${SYNC}: Replace=true\n    DaemonSet:\n      ${FORCE}: enabled\n`,
  );
  const plain = runCli(['--config', 'examples/shop/injection.yaml', ...SHOP]);
  const r = runCli(['--config', 'examples/shop/injection.yaml', '--config', cfg, ...SHOP]);
  t.equal(r.status, 0, r.stderr);
  const before = annotations(plain.stdout);
  const after = annotations(r.stdout);
  t.same(
    after.get('Job/data/migrate-schema'),
    { ...before.get('Job/data/migrate-schema'), [FORCE]: 'enabled', [SYNC]: 'Replace=true' },
    'the injected Job gets both',
  );
  t.same(
    after.get('DaemonSet/ops/node-exporter'),
    before.get('DaemonSet/ops/node-exporter'),
    'a skipped workload of a listed kind (host-network DaemonSet) gets nothing',
  );
  for (const [id, a] of after)
    if (!id.startsWith('Job/') && !id.startsWith('DaemonSet/'))
      t.same(a, before.get(id), `${id}: unchanged annotations`);
  const again = runCli(['--config', 'examples/shop/injection.yaml', '--config', cfg, '-'], { input: r.stdout });
  t.equal(again.stdout, r.stdout, 'a second run changes nothing');
});

t.test('invalid kinds, keys and values are errors naming the field', async (t) => {
  const tmp = makeTempDir('job-annotations-bad');
  t.teardown(tmp.cleanup);
  const cfg = layer(
    tmp.dir,
    `  injectedWorkloadAnnotations:\n    job: {}\n    Job:\n      "not a key!": enabled\n      ${FORCE}: true\n`,
  );
  const r = runCli(['--config', cfg, 'examples/shop/data.yaml']);
  t.equal(r.status, 1);
  t.equal(r.stdout, '');
  t.match(r.stderr, /spec\.injectedWorkloadAnnotations must be a Kubernetes kind such as Job .*got "job"/);
  t.match(r.stderr, /spec\.injectedWorkloadAnnotations\.Job must be an annotation key.*got "not a key!"/);
  t.match(
    r.stderr,
    /spec\.injectedWorkloadAnnotations\.Job\[kustomize\.toolkit\.fluxcd\.io\/force\] must be a string; got boolean true/,
  );
  t.notMatch(r.stderr, /property name must be valid/, 'one message per problem');
});
