// End to end: the kustomize overlays of examples/kustomize.
// - container: the real `kubectl kustomize --enable-alpha-plugins` with the stand-in docker of
//   runner-helpers.ts (bin/meshinject.js in place of the image). The stand-in records the ResourceList
//   kustomize sent, which must have the shape of the one recorded from a real run
//   (krm-inputs/kustomize-container.yaml of the test data, test/helpers/data.ts).
// - exec: the standalone kustomize is not on these machines and `kubectl kustomize` skips exec functions
//   silently (checked below). Both transformer kinds go through the same kyaml FunctionFilter, so the
//   exec function is fed exactly that ResourceList, with the exec overlay's config as functionConfig (as
//   kustomize sends it, local-config added), and the recorded ResourceList itself.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { ROOT, get, idOf, injectionProblems, makeTempDir, runTool, skippedProblems, type Obj } from '../helpers/e2e.ts';
import { makeStandIns, runWith } from '../helpers/runners.ts';
import { corpus, needs } from '../helpers/data.ts';

const KRM_INPUTS = corpus('krm-inputs');

const EXAMPLES = join(ROOT, 'examples/kustomize');
const INJECTED = [
  'Deployment/storefront/web',
  'CronJob/storefront/nightly-report',
  'StatefulSet/data/orders-db',
  'Job/data/migrate-schema',
];
const SKIPPED = ['Deployment/storefront/payments-legacy', 'DaemonSet/ops/node-exporter', 'Deployment/backoffice/admin'];

function annotationKeys(o: Obj): string[] {
  return Object.keys((get(o, 'metadata', 'annotations') ?? {}) as Obj).sort();
}

/** The exec overlay's function path, resolved as kustomize does: against the kustomization directory. */
function execPath(): string {
  const config = parse(readFileSync(join(EXAMPLES, 'exec/injection.yaml'), 'utf8')) as Obj;
  const fn = parse(String(get(config, 'metadata', 'annotations', 'config.kubernetes.io/function'))) as Obj;
  return join(EXAMPLES, 'exec', String(get(fn, 'exec', 'path')));
}

function checkShop(t: Test, objs: Obj[]) {
  const byId = new Map(objs.map((o) => [idOf(o), o]));
  for (const id of INJECTED)
    t.same(
      injectionProblems(byId.get(id)!, byId.get(id)!, { native: true }).filter((p) => !/app containers/.test(p)),
      [],
      `${id} injected (native)`,
    );
  for (const id of SKIPPED) t.same(skippedProblems(byId.get(id)!), [], `${id} skipped`);
}

/** `kubectl kustomize --enable-alpha-plugins` of the container overlay, the stand-in docker recording what it got. */
function buildContainerOverlay(t: Test) {
  const tmp = makeTempDir('kustomize-container');
  t.teardown(tmp.cleanup);
  const tools = makeStandIns(tmp.dir);
  const r = runWith('kubectl', ['kustomize', '--enable-alpha-plugins', join(EXAMPLES, 'container')], {
    cwd: tmp.dir,
    env: tools.env,
  });
  t.equal(r.status, 0, r.stderr);
  return { r, tools };
}

t.test('container overlay: kubectl kustomize --enable-alpha-plugins runs the image', needs(KRM_INPUTS), async (t) => {
  const { r, tools } = buildContainerOverlay(t);
  const argv = readFileSync(tools.dockerLog, 'utf8').trim().split('\n').at(-1)!;
  t.match(
    argv,
    /^run --rm -i .*--network none --user nobody .*-e LOG_TO_STDERR=true .*ghcr\.io\/meshinject\/meshinject:v\d+\.\d+\.\d+$/,
    'the released image, sandboxed',
  );
  const objs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  t.equal(objs.length, 12, "the shop's twelve resources");
  t.notMatch(
    r.stdout,
    /SidecarInjection|internal\.config\.kubernetes\.io|config\.k8s\.io\/id/,
    'no function config or runner annotations in the output',
  );
  checkShop(t, objs);

  // The ResourceList kustomize sent has the shape of the recorded one.
  const sent = parse(readFileSync(tools.dockerStdin, 'utf8')) as Obj;
  const recorded = parse(readFileSync(`${KRM_INPUTS.path}/kustomize-container.yaml`, 'utf8')) as Obj;
  t.equal(sent.kind, 'ResourceList');
  const sentDeployment = (sent.items as Obj[]).find((o) => o.kind === 'Deployment')!;
  const recordedDeployment = (recorded.items as Obj[]).find((o) => o.kind === 'Deployment')!;
  // previousKinds/Names/Namespaces appear only when a built-in transformer renamed the resource (the
  // recorded run had a namespace transformer; this overlay has none).
  const previous = /^internal\.config\.kubernetes\.io\/previous/;
  t.same(
    annotationKeys(sentDeployment),
    annotationKeys(recordedDeployment).filter((k) => !previous.test(k)),
    'the same runner annotations on a Deployment as the recorded run',
  );
  t.same(
    annotationKeys(sent.functionConfig as Obj),
    annotationKeys(recorded.functionConfig as Obj),
    'functionConfig: the transformer config with function + local-config annotations',
  );
  t.equal(get(sent, 'functionConfig', 'kind'), 'SidecarInjection');
});

t.test('exec overlay: kubectl kustomize cannot run it (skipped silently)', async (t) => {
  const r = runTool('kubectl', ['kustomize', '--enable-alpha-plugins', join(EXAMPLES, 'exec')]);
  t.equal(r.status, 0, 'exit 0 ...');
  t.notMatch(
    r.stdout,
    /istio-proxy/,
    '... and nothing injected: the README tells users to use the standalone kustomize or a workaround',
  );
});

t.test('exec overlay: the function fed the exact ResourceList kustomize sends', async (t) => {
  // What kustomize sends any KRM function of this overlay: captured through the container overlay (same
  // resources), the functionConfig replaced by the exec overlay's config as kustomize passes it.
  const { tools } = buildContainerOverlay(t);
  const sent = parse(readFileSync(tools.dockerStdin, 'utf8')) as Obj;
  const config = parse(readFileSync(join(EXAMPLES, 'exec/injection.yaml'), 'utf8')) as Obj;
  (config.metadata as { annotations: Obj }).annotations['config.kubernetes.io/local-config'] = 'true';
  const input = stringify({ ...sent, functionConfig: config });
  const fn = execPath();
  t.ok(fn.endsWith('/bin/meshinject.js'), `the exec path resolves to the repository's bin (${fn})`);
  // kustomize runs an exec function with its own environment (no LOG_TO_STDERR) in the kustomization dir.
  const r = spawnSync(fn, [], {
    cwd: join(EXAMPLES, 'exec'),
    input,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    maxBuffer: 64 << 20,
  });
  t.equal(r.status, 0, r.stderr);
  const out = parse(r.stdout) as Obj;
  t.equal(out.kind, 'ResourceList', 'a ResourceList back');
  const items = out.items as Obj[];
  t.same(
    items.map((o) => get(o, 'metadata', 'annotations', 'internal.config.kubernetes.io/id')),
    (sent.items as Obj[]).map((o) => get(o, 'metadata', 'annotations', 'internal.config.kubernetes.io/id')),
    'every item keeps its kustomize id, in order',
  );
  checkShop(t, items);
});

t.test('exec overlay config on the recorded kustomize ResourceList', needs(KRM_INPUTS), async (t) => {
  const recorded = parse(readFileSync(`${KRM_INPUTS.path}/kustomize-container.yaml`, 'utf8')) as Obj;
  const config = parse(readFileSync(join(EXAMPLES, 'exec/injection.yaml'), 'utf8')) as Obj;
  // The recorded resources live in namespace shop, which has no Namespace object there: label it for the selector.
  (config.spec as Obj).namespaces = [{ name: 'shop', labels: { 'istio-injection': 'enabled' } }];
  const r = spawnSync(execPath(), [], {
    input: stringify({ ...recorded, functionConfig: config }),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  t.equal(r.status, 0, r.stderr);
  const items = (parse(r.stdout) as { items: Obj[] }).items;
  for (const o of items.filter((x) => x.kind !== 'Service')) {
    const original = (recorded.items as Obj[]).find((x) => idOf(x) === idOf(o))!;
    t.same(injectionProblems(o, original, { native: true }), [], `${idOf(o)} injected`);
    t.same(
      annotationKeys(o).filter((k) => !k.startsWith('meshinject.dev/')),
      annotationKeys(original),
      `${idOf(o)}: runner annotations kept`,
    );
  }
  t.same(
    items.find((x) => x.kind === 'Service'),
    (recorded.items as Obj[]).find((x) => x.kind === 'Service'),
    'the Service unchanged',
  );
});
