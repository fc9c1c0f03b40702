// End to end: the Flux CI hydration example (examples/flux). The workflow's steps up to the publish step
// run here as GitHub Actions runs them (`bash -e` in a checkout), with `meshinject` and `kustomize` on PATH
// (stand-ins of runner-helpers.ts: the repository's bin, and a wrapper over `kubectl kustomize`). The publish
// step (`flux push artifact`) needs a registry and is checked for its arguments only. Then what Flux does
// with the artifact: kustomize-controller builds a directory without a kustomization.yaml as if it had one
// listing every manifest (plain kustomize, no functions), which must give the hydrated objects unchanged.
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT, get, idOf, injectionProblems, makeTempDir, runTool, skippedProblems, type Obj } from '../helpers/e2e.ts';
import { copyExample, makeStandIns, runWith } from '../helpers/runners.ts';

const FLUX = join(ROOT, 'examples/flux');
interface Step {
  name?: string;
  uses?: string;
  run?: string;
}
const workflow = parse(readFileSync(join(FLUX, 'hydrate-workflow.yaml'), 'utf8')) as {
  env: Record<string, string>;
  jobs: { hydrate: { steps: Step[] } };
};
const steps = workflow.jobs.hydrate.steps;
const publishAt = steps.findIndex((s) => s.name === 'Publish');
const render = steps.find((s) => s.name === 'Render and inject')!;

/** A checkout of the repository's examples (what actions/checkout gives the workflow). */
function checkout(dir: string): string {
  const repo = join(dir, 'repo');
  copyExample(join(ROOT, 'examples'), join(repo, 'examples'));
  return repo;
}

const objects = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as Obj);

t.test('the workflow up to the publish step: render and inject the shop', async (t) => {
  t.ok(publishAt > steps.indexOf(render), 'rendering comes before publishing');
  const tmp = makeTempDir('flux');
  t.teardown(tmp.cleanup);
  const tools = makeStandIns(tmp.dir);
  const repo = checkout(tmp.dir);
  const r = runWith('bash', ['-e', '-c', render.run!], { cwd: repo, env: tools.env });
  t.equal(r.status, 0, r.stderr);
  const out = readFileSync(join(repo, 'hydrated/manifests.yaml'), 'utf8');
  const objs = objects(out);
  t.equal(objs.length, 12, "the shop's twelve resources");
  const byId = new Map(objs.map((o) => [idOf(o), o]));
  for (const id of [
    'Deployment/storefront/web',
    'CronJob/storefront/nightly-report',
    'StatefulSet/data/orders-db',
    'Job/data/migrate-schema',
  ]) {
    t.same(
      injectionProblems(byId.get(id)!, byId.get(id)!, { native: true }).filter((p) => !/app containers/.test(p)),
      [],
      `${id} injected`,
    );
  }
  for (const id of [
    'Deployment/storefront/payments-legacy',
    'DaemonSet/ops/node-exporter',
    'Deployment/backoffice/admin',
  ])
    t.same(skippedProblems(byId.get(id)!), [], `${id} skipped`);
  t.notMatch(out, /SidecarInjection|local-config/, 'no config objects published');
  const force = (id: string) => get(byId.get(id), 'metadata', 'annotations', 'kustomize.toolkit.fluxcd.io/force');
  t.equal(
    force('Job/data/migrate-schema'),
    'enabled',
    "the injected Job carries Flux's force annotation (injection.yaml)",
  );
  t.equal(force('Deployment/storefront/web'), undefined, 'other kinds do not');
  t.match(r.stderr, /hydrate: 12 resources in hydrated\/manifests\.yaml/);

  // The publish step pushes exactly that directory.
  const publish = steps[publishAt]!.run!;
  t.match(
    publish,
    /flux push artifact "\$\{ARTIFACT\}:[^"]+" \\\n\s+--path=hydrated /,
    "flux push artifact --path=hydrated (the render step's OUT_DIR)",
  );
  t.match(render.run!, / hydrated$/);
  t.match(
    publish,
    /--revision="\$\{GITHUB_REF_NAME\}@sha1:\$\{GITHUB_SHA\}"/,
    'Flux revision format <branch>@sha1:<sha>',
  );

  // What Flux's kustomize-controller does with the artifact.
  const artifact = join(tmp.dir, 'artifact');
  mkdirSync(artifact);
  writeFileSync(join(artifact, 'manifests.yaml'), out);
  writeFileSync(join(artifact, 'kustomization.yaml'), 'resources:\n  - manifests.yaml\n');
  const built = runTool('kubectl', ['kustomize', artifact]);
  t.equal(built.status, 0, built.stderr);
  t.same(
    objects(built.stdout).sort((a, b) => idOf(a).localeCompare(idOf(b))),
    [...objs].sort((a, b) => idOf(a).localeCompare(idOf(b))),
    'plain kustomize applies the hydrated objects as they are',
  );
});

t.test('the cluster side: OCIRepository and Kustomization consume the published artifact', async (t) => {
  const docs = objects(readFileSync(join(FLUX, 'clusters/production/shop.yaml'), 'utf8'));
  const repo = docs.find((o) => o.kind === 'OCIRepository')!;
  const ks = docs.find((o) => o.kind === 'Kustomization')!;
  t.equal(repo.apiVersion, 'source.toolkit.fluxcd.io/v1');
  t.equal(ks.apiVersion, 'kustomize.toolkit.fluxcd.io/v1');
  t.same(
    get(ks, 'spec', 'sourceRef'),
    { kind: 'OCIRepository', name: get(repo, 'metadata', 'name') },
    'the Kustomization reads the OCIRepository',
  );
  const artifactName = workflow.env.ARTIFACT!.split('/').pop();
  t.equal(
    String(get(repo, 'spec', 'url'))
      .split('/')
      .pop(),
    artifactName,
    'the same artifact repository as the workflow pushes',
  );
  t.equal(get(repo, 'spec', 'ref', 'tag'), 'latest');
  t.match(steps[publishAt]!.run!, /flux tag artifact .* --tag latest/, 'the workflow moves the latest tag');
  t.equal(get(ks, 'spec', 'path'), './');
  t.equal(get(ks, 'spec', 'prune'), true);
});

t.test('hydrate.sh refuses to publish what it cannot vouch for', async (t) => {
  const tmp = makeTempDir('flux-fail');
  t.teardown(tmp.cleanup);
  const tools = makeStandIns(tmp.dir);
  const repo = checkout(tmp.dir);
  const script = join(repo, 'examples/flux/hydrate.sh');
  const config = join(repo, 'examples/flux/injection.yaml');
  mkdirSync(join(repo, 'broken'));
  writeFileSync(join(repo, 'broken/kustomization.yaml'), 'resources:\n  - missing.yaml\n');
  mkdirSync(join(repo, 'substituted'));
  writeFileSync(join(repo, 'substituted/kustomization.yaml'), 'resources:\n  - cm.yaml\n');
  writeFileSync(
    join(repo, 'substituted/cm.yaml'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Flux's post-build substitution syntax, which the test leaves in the manifest
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  text: hello ${USER}\n',
  );
  const cases: [string, string, RegExp][] = [
    ['a build error', 'broken', /missing\.yaml/],
    ['text Flux would substitute', 'substituted', /post-build substitution/],
  ];
  for (const [what, src, reason] of cases) {
    const out = join(tmp.dir, `out-${src}`);
    const r = runWith(script, [join(repo, src), config, out], { cwd: repo, env: tools.env });
    t.not(r.status, 0, `${what}: non-zero exit`);
    t.match(r.stderr, reason, `${what}: the reason`);
    t.notOk(existsSync(out), `${what}: nothing to publish`);
  }
  const usage = runWith(script, [], { cwd: repo, env: tools.env });
  t.equal(usage.status, 2);
  t.match(usage.stderr, /usage:/);
});
