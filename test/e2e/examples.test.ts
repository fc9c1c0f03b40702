// End to end: the self-contained examples. `npm run demo` on the shop (examples/shop, written for this
// repository), in this checkout and in a copy of the tracked files with nothing beside it (a fresh clone:
// nothing beside it); and nothing a user runs, nor any test, reads the folder beside the checkout.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  ROOT,
  copyCheckout,
  get,
  idOf,
  injectionProblems,
  makeTempDir,
  runCli,
  runTool,
  skippedProblems,
  type Obj,
} from '../helpers/e2e.ts';

const SHOP_FILES = ['namespaces.yaml', 'storefront.yaml', 'data.yaml', 'ops.yaml', 'backoffice.yaml'].map(
  (f) => `examples/shop/${f}`,
);
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
  const inputs = SHOP_FILES.flatMap((f) =>
    parseAllDocuments(readFileSync(join(ROOT, f), 'utf8')).map((d) => d.toJS() as Obj),
  );
  const outputs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  t.same(outputs.map(idOf), inputs.map(idOf), 'the same resources, in order');
  const decided = outputs.filter((o) => get(o, 'metadata', 'annotations', 'meshinject.dev/injection') !== undefined);
  t.same(
    decided.map((o) => [
      `${String(o.kind)}/${String(get(o, 'metadata', 'namespace'))}/${String(get(o, 'metadata', 'name'))}`,
      get(o, 'metadata', 'annotations', 'meshinject.dev/injection'),
    ]),
    EXPECTED,
  );
  outputs.forEach((o, i) => {
    const outcome = String(get(o, 'metadata', 'annotations', 'meshinject.dev/injection') ?? '');
    if (outcome.startsWith('injected'))
      t.same(injectionProblems(o, inputs[i]!, { native: true }), [], `${idOf(o)} injected with native sidecars, valid`);
    else if (outcome) t.same(skippedProblems(o), [], `${idOf(o)} has no sidecar`);
  });
  const again = runCli(['--config', CONFIG, '-'], { input: r.stdout });
  t.equal(again.status, 0, `the second run exits 0: ${again.stderr}`);
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
  for (const [what, outcome] of EXPECTED)
    t.match(summary, new RegExp(`#   ${what.replace(/\//g, '\\/')} +${outcome.replace(/[()]/g, '\\$&')}\\n`), what);
  t.match(summary, /# 4 workload\(s\) injected, 3 skipped; 5 other resource\(s\) passed through unchanged/);
});

t.test('a fresh clone with nothing beside it: build and demo', async (t) => {
  const tmp = makeTempDir('fresh-clone');
  t.teardown(tmp.cleanup);
  const clone = join(tmp.dir, 'meshinject'); // nothing next to it
  copyCheckout(clone);
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: clone, encoding: 'utf8' });
  t.equal(build.status, 0, `the build (npm ci's prepare) runs: ${build.stderr}`);
  const r = demo(clone);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, demo(ROOT).stdout, 'the same demo output as in this checkout');
});

t.test('nothing a user runs names the test data folder; only the test-data helpers find it', async (t) => {
  const tracked = runTool('git', ['ls-files']).stdout.split('\n').filter(Boolean);
  const checked = tracked.filter(
    (f) => /^(examples|functions|scripts|src|bin|test|bench|\.ci|\.github)\//.test(f) || f === 'Dockerfile',
  );
  t.ok(checked.length > 60);
  // The data root: MESHINJECT_TEST_DATA, else the sibling folder `shared` (docs/internals/test-data.md). Only these files
  // may name it: the helper every test asks (test/helpers/data.ts), the end-of-run notice, a fixture script run as
  // a child process, CI, which passes it on, and the tests of these rules.
  const allowed = new Set([
    'test/helpers/data.ts',
    'test/setup/test-data-notice.mjs',
    'test/fixtures/real-world/online-boutique/render.mjs',
    '.ci/run',
    'test/house/test-data.test.ts',
    'test/e2e/examples.test.ts',
  ]);
  const names = [
    new RegExp(`${['\\.\\.', 'shared'].join('/')}(?![\\w.-])`),
    new RegExp(`join\\('\\.\\.', '${'shared'}'\\)`),
    new RegExp(['MESHINJECT', 'TEST', 'DATA'].join('_')),
  ];
  const naming: string[] = [];
  for (const f of checked) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    if (names.some((re) => re.test(text))) naming.push(f);
  }
  t.same(
    naming.filter((f) => !allowed.has(f) && !/^(scripts\/import-|test\/conformance\/istio-versions)/.test(f)),
    [],
    'no other file names the data root',
  );
  t.ok(naming.includes('test/helpers/data.ts'), 'the check sees the helper that names it');
});
