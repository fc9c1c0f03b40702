// End to end: what a user sees when the functionConfig is wrong (exit 1, the field named on stderr,
// a ResourceList echoed unchanged with an error result), when the input is not YAML (exit 2, nothing on
// stdout), and that kpt then leaves the package untouched (hazards G2, G3).
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, get, makeTempDir, runCli, runTool, splitItems, type Obj } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const BOOKINFO_DATA = corpus('real-world/bookinfo/bookinfo.yaml');
const KRM_INPUTS = corpus('krm-inputs');
const BOUTIQUE = corpus('real-world/online-boutique');
const BOOKINFO = BOOKINFO_DATA.path ?? '';
const RESOURCE_LIST = KRM_INPUTS.path ? readFileSync(`${KRM_INPUTS.path}/kpt-eval-noargs.yaml`, 'utf8') : '';

/** Bad configs, the field each one must name, and a fragment of the reason. */
const BAD: Array<{ name: string; spec: string; field: string }> = [
  { name: 'unknown policy', spec: 'policy: sometimes', field: 'spec.policy' },
  { name: 'wrong type', spec: 'nativeSidecars: "yes"', field: 'spec.nativeSidecars' },
  { name: 'unknown field', spec: 'polcy: enabled', field: 'polcy' },
  { name: 'unknown mesh', spec: 'mesh: consul', field: 'spec.mesh' },
];

function configText(specLine: string): string {
  return `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: bad\nspec:\n  ${specLine}\n`;
}

for (const bad of BAD) {
  t.test(
    `functionConfig error (${bad.name}): exit 1 and ${bad.field} named`,
    needs(BOOKINFO_DATA, KRM_INPUTS),
    async (t) => {
      const tmp = makeTempDir('config');
      t.teardown(tmp.cleanup);
      const cfg = join(tmp.dir, 'injection.yaml');
      writeFileSync(cfg, configText(bad.spec));

      // A plain stream: nothing on stdout (a partial stream would be applied as is), the error on stderr.
      const stream = runCli(['--config', cfg, BOOKINFO]);
      t.equal(stream.status, 1, 'exit 1');
      t.equal(stream.stdout, '', 'no output for a stream');
      t.match(stream.stderr, /^\[error\]/m, 'an [error] line on stderr without LOG_TO_STDERR');
      t.ok(stream.stderr.includes(bad.field), `stderr names ${bad.field}: ${stream.stderr}`);

      // A ResourceList: items unchanged byte for byte, functionConfig unchanged, an error result.
      const list = runCli(['--config', cfg], { input: RESOURCE_LIST });
      t.equal(list.status, 1, 'exit 1');
      const inp = splitItems(RESOURCE_LIST);
      const out = splitItems(list.stdout);
      t.same(
        out.items.map((x) => x.text),
        inp.items.map((x) => x.text),
        'items unchanged byte for byte',
      );
      t.ok(list.stdout.startsWith(RESOURCE_LIST.trimEnd()), 'the whole input comes back first, then results');
      const results = (parse(list.stdout) as Obj).results as Obj[];
      const errors = results.filter((r) => r.severity === 'error');
      t.ok(errors.length >= 1, 'an error result');
      t.ok(
        errors.some((r) => `${String(get(r, 'field', 'path'))} ${String(r.message)}`.includes(bad.field)),
        `an error result names ${bad.field}`,
      );
      t.notOk(
        results.some((r) => get(r, 'tags', 'meshinject.dev/outcome') === 'injected'),
        'nothing injected',
      );
      t.ok(list.stderr.includes(bad.field), 'stderr names the field too');
    },
  );
}

t.test(
  'a bad functionConfig inside the ResourceList (no --config) is reported the same way',
  needs(KRM_INPUTS),
  async (t) => {
    const input = RESOURCE_LIST.replace(
      /^functionConfig:[\s\S]*$/m,
      `functionConfig:\n${configText('policy: sometimes').replace(/^/gm, '  ').trimEnd()}\n`,
    );
    const r = runCli([], { input, env: { LOG_TO_STDERR: 'true' } });
    t.equal(r.status, 1);
    t.same(
      splitItems(r.stdout).items.map((x) => x.text),
      splitItems(input).items.map((x) => x.text),
      'items unchanged',
    );
    t.match(r.stderr, /^\[error\].*spec\.policy/m);
    t.match(r.stderr, /meshinject: 0 injected, 0 skipped, 1 error\(s\)\n$/);
  },
);

t.test('bad input and usage: exit 2, nothing on stdout', needs(KRM_INPUTS), async (t) => {
  const notYaml = runCli([], { input: 'apiVersion: v1\nkind: [unclosed\n' });
  t.equal(notYaml.status, 2);
  t.equal(notYaml.stdout, '');
  t.match(notYaml.stderr, /line \d+/, 'the line is named');
  // An empty stream is an empty stream (Helm's post-renderer protocol, docs/runners/helm.md), with a warning;
  // under Argo CD, which would apply it and prune everything, it is an error (hazard G2).
  const empty = runCli([], { input: '' });
  t.equal(empty.status, 0, 'empty input: an empty stream');
  t.equal(empty.stdout, '');
  t.match(empty.stderr, /^\[warning\] stdin: no resources/m, 'and a warning saying so');
  const emptyArgo = runCli([], { input: '', env: { ARGOCD_APP_NAME: 'shop' } });
  t.equal(emptyArgo.status, 2, 'under Argo CD an empty stream is an error, never an empty success (hazard G2)');
  t.equal(emptyArgo.stdout, '');
  const option = runCli(['--frobnicate'], { input: 'kind: List\napiVersion: v1\nitems: []\n' });
  t.equal(option.status, 2);
  t.match(option.stderr, /--frobnicate/);
  const missing = runCli(['--config', join(ROOT, 'no-such-config.yaml')], { input: RESOURCE_LIST });
  t.equal(missing.status, 2);
  t.equal(missing.stdout, '');
  t.match(missing.stderr, /no-such-config\.yaml/);
});

t.test('kpt fn render with a bad config: FAIL and the package left untouched', needs(BOUTIQUE), async (t) => {
  const tmp = makeTempDir('config-kpt');
  t.teardown(tmp.cleanup);
  const pkg = join(tmp.dir, 'pkg');
  const setup = runTool(process.execPath, [
    join(ROOT, 'test/fixtures/real-world/online-boutique/render.mjs'),
    '--setup-only',
    '--out',
    pkg,
  ]);
  t.equal(setup.status, 0, setup.stderr);
  writeFileSync(
    join(pkg, 'injection.yaml'),
    `${configText('policy: sometimes').replace('metadata:\n', 'metadata:\n  annotations:\n    config.kubernetes.io/local-config: "true"\n')}`,
  );
  const git = (...a: string[]) =>
    runTool('git', ['-c', 'user.email=e2e@example.com', '-c', 'user.name=e2e', ...a], { cwd: pkg });
  git('init', '-q', '.');
  git('add', '-A');
  git('commit', '-q', '-m', 'setup');
  const r = runTool('kpt', ['fn', 'render', pkg, '--allow-exec']);
  t.not(r.status, 0, 'kpt fails');
  t.match(r.stderr, /\[FAIL\]/);
  t.match(r.stderr, /spec\.policy/, "kpt shows meshinject's message");
  t.equal(git('status', '--porcelain', '--untracked-files=all').stdout, '', 'no file changed, added or deleted');
});
