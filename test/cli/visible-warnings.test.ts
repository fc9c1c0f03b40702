// Warnings are visible on the command line (issue #23, item 2) and the summary counts what happened (item 5):
// with stream input, warning and error results go to stderr, one line each, on a non-terminal stderr too;
// -q silences the warnings; a ResourceList's results travel in the list. Runs the built CLI (stderr is a pipe).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { BIN, runCli, workspace, type Obj } from '../helpers/e2e.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const deployment = (name: string, ns: string, extra = '') =>
  fixtureDeployment(name, { namespace: ns, style: 'flow', templateExtra: extra });
const SELECTOR =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: sel}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n';
const HOSTNET = deployment('agent', 'ops').replace('    spec:\n', '    spec:\n      hostNetwork: true\n');
// The issue's case: the namespace's labels are unknown, so every workload is skipped.
const STOREFRONT = `${deployment('web', 'storefront')}---\n${deployment('api', 'storefront')}`;

const lines = (s: string) => s.split('\n').filter((l) => l !== '');

t.test('stream input: every warning on stderr, one line each, without a terminal or LOG_TO_STDERR', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'storefront.yaml': STOREFRONT });
  const r = runCli(['-c', 'cfg.yaml', 'storefront.yaml'], { cwd: dir });
  t.equal(r.status, 0, 'warnings do not fail the run');
  const got = lines(r.stderr);
  t.equal(
    got.filter((l) => l.startsWith('[warning] apps/v1/Deployment/storefront/')).length,
    2,
    'one line per skipped workload',
  );
  t.ok(
    got.some(
      (l) =>
        l.startsWith('[warning] namespace storefront is neither a Namespace object') &&
        l.includes('labels are unknown'),
    ),
    'the reason, once',
  );
  t.equal(got.length, 3, 'nothing else (no info lines, no summary off a terminal)');
  t.ok(
    got.every((l) => /^\[(warning|error)\] /.test(l)),
    'each line is one result',
  );
});

t.test('the stderr lines are the warning results a ResourceList carries, in the same order', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'in.yaml': `${STOREFRONT}---\n${HOSTNET}` });
  const plain = runCli(['-c', 'cfg.yaml', 'in.yaml'], { cwd: dir });
  const list = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${parseAllDocuments(
    `${STOREFRONT}---\n${HOSTNET}`,
  )
    .map((d) => `- ${JSON.stringify(d.toJS())}`)
    .join('\n')}\n`;
  const rl = runCli(['-c', 'cfg.yaml'], { cwd: dir, input: list });
  t.equal(rl.status, 0, rl.stderr);
  t.equal(rl.stderr, '', 'a ResourceList run keeps its contract: nothing on stderr');
  const results = (parseAllDocuments(rl.stdout)[0]!.toJS() as { results: Array<{ severity: string; message: string }> })
    .results;
  const warnings = results.filter((x) => x.severity === 'warning').map((x) => x.message);
  t.equal(warnings.length, 4, 'two unknown-namespace skips, host network, the namespace note');
  const shown = lines(plain.stderr);
  t.equal(shown.length, warnings.length, 'as many stderr lines as warning results');
  for (const [i, m] of warnings.entries()) t.ok(shown[i]?.includes(m), `line ${i + 1} carries: ${m.slice(0, 60)}...`);
});

t.test('-q silences the warnings, not the errors', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'storefront.yaml': STOREFRONT });
  const quiet = runCli(['-q', '-c', 'cfg.yaml', 'storefront.yaml'], { cwd: dir });
  t.equal(quiet.status, 0);
  t.equal(quiet.stderr, '', 'no warning lines with -q');
  t.match(quiet.stdout, /kind: Deployment/, 'the output is unchanged');
  const bad = workspace(t, {
    'bad.yaml': deployment('web', 'shop', ', annotations: {sidecar.istio.io/proxyCPU: lots}'),
  });
  const err = runCli(['-q', 'bad.yaml'], { cwd: bad });
  t.equal(err.status, 1);
  t.match(err.stderr, /^\[error\] apps\/v1\/Deployment\/shop\/web.*proxyCPU/m, 'an error is still shown with -q');
});

t.test('LOG_TO_STDERR keeps its lines; the summary counts warnings (and errors)', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'storefront.yaml': STOREFRONT });
  const r = runCli(['-c', 'cfg.yaml', 'storefront.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0);
  t.equal(lines(r.stderr).filter((l) => l.startsWith('[warning]')).length, 3, 'each warning once (not printed twice)');
  t.match(r.stderr, /\nmeshinject: 0 injected, 2 skipped, 3 warning\(s\), 0 error\(s\)\n$/);
});

t.test('under Argo CD (a plugin: stderr is its log) the plugin switch decides, as before', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'storefront.yaml': STOREFRONT });
  const r = runCli(['-c', 'cfg.yaml', 'storefront.yaml'], {
    cwd: dir,
    env: { ARGOCD_APP_NAME: 'shop', ARGOCD_APP_NAMESPACE: 'storefront' },
  });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
});

t.test('a control character in a result cannot break the one-line rule', async (t) => {
  // An invalid annotation value with an escape sequence and a newline (YAML "\e[2J\n") ends up in the message.
  // The resource name carries an OSC sequence (a YAML "\e]0;x\a": retitles a terminal).
  const dir = workspace(t, {
    'a.yaml': deployment('web', 'shop', ', annotations: {sidecar.istio.io/proxyCPU: "x\\e[2J\\nfake"}').replace(
      'name: web,',
      'name: "we\\e]0;x\\ab",',
    ),
  });
  const r = runCli(['a.yaml'], { cwd: dir });
  t.equal(r.status, 1);
  t.match(r.stderr, /Deployment\/shop\/we\\x1b\]0;x\\x07b/, 'the name is there, its control characters escaped');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a raw control character on stderr is what the test rules out
  t.notMatch(r.stderr, /[\u0000-\u0009\u000b-\u001f]/, 'no raw control character on stderr');
  t.equal(lines(r.stderr).filter((l) => !l.startsWith('[')).length, 0, 'every line starts a result');
});

t.test('uninject: the summary counts what it removed', async (t) => {
  const dir = workspace(t, { 'app.yaml': deployment('web', 'shop') });
  const injected = runCli(['app.yaml'], { cwd: dir });
  t.equal(injected.status, 0, injected.stderr);
  const cfg = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec: {mode: uninject}\n';
  const d2 = workspace(t, { 'cfg.yaml': cfg, 'in.yaml': `${injected.stdout}---\n${deployment('plain', 'shop')}` });
  const r = runCli(['-c', 'cfg.yaml', 'in.yaml'], { cwd: d2, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stderr,
    /\nmeshinject: 0 injected, 1 uninjected, 1 skipped, 0 error\(s\)\n$/,
    'one uninjected, one with nothing to remove',
  );
  const out = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  t.notMatch(JSON.stringify(out[0]), /istio-proxy/, 'the sidecar is gone');
});

t.test('a misspelt config field gets a "did you mean", as a misspelt flag does', async (t) => {
  const dir = workspace(t, {
    'cfg.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  namespaceSelectr: {}\n  istio: {revison: canary}\n',
    'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {polcy: disabled}\n',
    'app.yaml': deployment('web', 'shop'),
  });
  const r = runCli(['-c', 'cfg.yaml', 'app.yaml'], { cwd: dir });
  t.equal(r.status, 1);
  t.match(r.stderr, /spec\.namespaceSelectr is not a known field \(did you mean spec\.namespaceSelector\?\)/);
  t.match(r.stderr, /spec\.istio\.revison is not a known field \(did you mean spec\.istio\.revision\?\)/);
  const cm = runCli(['-c', 'cm.yaml', 'app.yaml'], { cwd: dir });
  t.match(cm.stderr, /data\.polcy is not a known key \(did you mean data\.policy\?\)/);
  const flag = runCli(['--confg', 'cfg.yaml'], { cwd: dir });
  t.match(flag.stderr, /did you mean --config\?/, 'as for flags');
  const far = workspace(t, {
    'cfg.yaml': 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  zzzzzz: 1\n',
    'app.yaml': deployment('web', 'shop'),
  });
  t.notMatch(
    runCli(['-c', 'cfg.yaml', 'app.yaml'], { cwd: far }).stderr,
    /did you mean/,
    'no guess for a name near nothing',
  );
});

t.test('on a terminal: the warning lines, then a summary that counts them', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'storefront.yaml': STOREFRONT });
  const tty = (args: string) =>
    spawnSync(
      'script',
      ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args} 2>&1 >/dev/null`, '/dev/null'],
      { cwd: dir, encoding: 'utf8' },
    );
  const got = tty('-c cfg.yaml storefront.yaml')
    .stdout.split(/\r?\n/)
    .filter((l) => l !== '');
  t.equal(got.filter((l) => l.startsWith('[warning]')).length, 3);
  t.match(got.at(-1), /^meshinject: 0 injected, 2 skipped, 3 warning\(s\), 0 error\(s\) \(\d+ ms\)$/);
  t.equal(tty('-q -c cfg.yaml storefront.yaml').stdout, '', '-q: neither');
});
