// End to end: the self-contained examples. `npm run demo` on the shop (examples/shop, written for this
// repository), in this checkout and in a copy of the tracked files with nothing beside it (a fresh clone:
// nothing beside it); and nothing a user runs, nor any test, reads the folder beside the checkout.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT, get, idOf, injectionProblems, makeTempDir, runCli, runTool, skippedProblems, type Obj } from '../helpers/e2e.ts';

const SHOP_FILES = ['namespaces.yaml', 'storefront.yaml', 'data.yaml', 'ops.yaml', 'backoffice.yaml'].map((f) => `examples/shop/${f}`);
const CONFIG = 'examples/shop/injection.yaml';
// What examples/shop is written to show (see the comments in its manifests and injection.yaml).
const EXPECTED: [string, string][] = [
  ['Deployment/storefront/web', 'injected (istio, revision default)'],
  ['CronJob/storefront/nightly-report', 'injected (istio, revision default)'],
  ['Deployment/storefront/payments-legacy', 'skipped (label-false)'],
  ['StatefulSet/data/orders-db', 'injected (istio, revision default)'],
  ['Job/data/migrate-schema', 'injected (istio, revision default)'],
  ['DaemonSet/ops/node-exporter', 'skipped (host-network)'],
  ['Deployment/backoffice/admin', 'skipped (namespace-not-selected)'],
];

function demo(cwd: string) {
  const r = spawnSync(process.execPath, ['scripts/demo.mjs'], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return r;
}

t.test('the shop through the CLI: every workload decided as its comments say', async (t) => {
  const r = runCli(['--config', CONFIG, ...SHOP_FILES]);
  t.equal(r.status, 0, r.stderr);
  const inputs = SHOP_FILES.flatMap((f) => parseAllDocuments(readFileSync(join(ROOT, f), 'utf8')).map((d) => d.toJS() as Obj));
  const outputs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  t.same(outputs.map(idOf), inputs.map(idOf), 'the same resources, in order');
  const decided = outputs.filter((o) => get(o, 'metadata', 'annotations', 'meshinject.dev/injection') !== undefined);
  t.same(
    decided.map((o) => [`${String(o.kind)}/${String(get(o, 'metadata', 'namespace'))}/${String(get(o, 'metadata', 'name'))}`, get(o, 'metadata', 'annotations', 'meshinject.dev/injection')]),
    EXPECTED,
  );
  outputs.forEach((o, i) => {
    const outcome = String(get(o, 'metadata', 'annotations', 'meshinject.dev/injection') ?? '');
    if (outcome.startsWith('injected')) t.same(injectionProblems(o, inputs[i]!, { native: true }), [], `${idOf(o)} injected with native sidecars, valid`);
    else if (outcome) t.same(skippedProblems(o), [], `${idOf(o)} has no sidecar`);
  });
  const again = runCli(['--config', CONFIG, '-'], { input: r.stdout });
  t.equal(again.stdout, r.stdout, 'a second run changes nothing');
  const kustomized = runTool('kubectl', ['kustomize', 'examples/shop']);
  t.equal(kustomized.status, 0, 'examples/shop is a kustomize base');
  t.equal(parseAllDocuments(kustomized.stdout).length, inputs.length, 'with every manifest file');
});

t.test('npm run demo: the injected shop, then a summary', async (t) => {
  const r = demo(ROOT);
  t.equal(r.status, 0, r.stderr);
  const cli = runCli(['--config', CONFIG, ...SHOP_FILES]);
  t.ok(r.stdout.startsWith(cli.stdout), 'the CLI output comes first, unaltered');
  const summary = r.stdout.slice(cli.stdout.length);
  for (const [what, outcome] of EXPECTED) t.match(summary, new RegExp(`#   ${what.replace(/\//g, '\\/')} +${outcome.replace(/[()]/g, '\\$&')}\\n`), what);
  t.match(summary, /# 4 workload\(s\) injected, 3 skipped; 5 other resource\(s\) passed through unchanged/);
});

t.test('a fresh clone with nothing beside it: build and demo', async (t) => {
  const tmp = makeTempDir('fresh-clone');
  t.teardown(tmp.cleanup);
  const clone = join(tmp.dir, 'meshinject'); // nothing next to it
  const tracked = runTool('git', ['ls-files', '-z']).stdout.split('\0').filter(Boolean);
  for (const f of tracked) {
    mkdirSync(dirname(join(clone, f)), { recursive: true });
    cpSync(join(ROOT, f), join(clone, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules')); // what `npm ci` installs
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: clone, encoding: 'utf8' });
  t.equal(build.status, 0, `the build (npm ci's prepare) runs: ${build.stderr}`);
  const r = demo(clone);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, demo(ROOT).stdout, 'the same demo output as in this checkout');
});

t.test('nothing a user runs, and no test, reads the folder beside the checkout', async (t) => {
  const tracked = runTool('git', ['ls-files']).stdout.split('\n').filter(Boolean);
  const checked = tracked.filter((f) => /^(examples|functions|scripts|src|bin|test|bench|\.ci|\.github)\//.test(f) && !f.startsWith('test/vendored/') || f === 'Dockerfile');
  t.ok(checked.length > 60);
  // The sibling folder `shared` (not a file such as ../shared-templates.yaml); built from pieces so that this
  // file does not match itself.
  const outside = new RegExp(`${['\\.\\.', 'shared'].join('/')}(?![\\w.-])`);
  for (const f of checked) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    t.notMatch(text, outside, `${f} names nothing outside the repository`);
  }
});
