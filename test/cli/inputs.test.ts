// The command line as a user meets it: several inputs as one, directories, stdin, size limits, output
// errors, option errors, layered configs and Argo CD's build environment. Runs the built CLI.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BIN, runCli, workspace, type Obj } from '../helpers/e2e.ts';

const NS = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {mesh: "on"}\n';
const deployment = (name: string, ns = 'shop') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
${ns ? `  namespace: ${ns}\n` : ''}spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: ${name}
        image: ${name}:1
`;
const SELECTOR =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: sel}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n';

function docs(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);
}
const proxied = (o: Obj) => JSON.stringify(o).includes('"istio-proxy"');

t.test('several files are one input: a Namespace in ns.yaml selects a Deployment in app.yaml', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': SELECTOR, 'ns.yaml': NS, 'app.yaml': deployment('web') });
  const r = runCli(['-c', 'cfg.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  const out = docs(r.stdout);
  t.same(
    out.map((d) => d.kind),
    ['Namespace', 'Deployment'],
    'one output stream, in order',
  );
  t.ok(proxied(out[1]!), 'the Deployment is injected');
  t.match(r.stderr, /meshinject: 1 injected, 0 skipped, 0 error\(s\)\n$/, 'one summary for the run');
  t.match(r.stderr, /\(app\.yaml\)/, 'results name the file');
});

t.test('one invalid file among several: exit 2 and nothing written', async (t) => {
  const dir = workspace(t, { 'ns.yaml': NS, 'app.yaml': deployment('web'), 'bad.yaml': 'kind: [unclosed\n' });
  const r = runCli(['ns.yaml', 'app.yaml', 'bad.yaml'], { cwd: dir });
  t.equal(r.status, 2);
  t.equal(r.stdout, '');
  t.match(r.stderr, /bad\.yaml.*line \d/);
  const errs = workspace(t, {
    'a.yaml': deployment('web'),
    'b.yaml': deployment('api').replace(
      '  template:\n    metadata: {labels: {app: api}}',
      '  template:\n    metadata: {labels: {app: api}, annotations: {sidecar.istio.io/proxyCPU: "lots"}}',
    ),
  });
  const one = runCli(['a.yaml', 'b.yaml'], { cwd: errs });
  t.equal(one.status, 1, 'an error result in one file');
  t.equal(one.stdout, '', 'the good file is not printed either');
});

t.test('directories: recursive, sorted, manifests only, file.path per document', async (t) => {
  const dir = workspace(t, {
    'm/b.yaml': deployment('b'),
    'm/a/z.yml': deployment('z'),
    'm/a/c.json': JSON.stringify(docs(deployment('c'))[0], null, 2),
    'm/README.md': '# not a manifest\n',
    'm/.git/config.yaml': 'not: read\n',
    'm/a.txt': 'nope\n',
  });
  const r = runCli(['m'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  const names = [...r.stderr.matchAll(/Deployment\/shop\/(\w+).*\((m\/[^)#]+)/g)].map((m) => `${m[1]}@${m[2]}`);
  t.same(names, ['c@m/a/c.json', 'z@m/a/z.yml', 'b@m/b.yaml'], 'sorted by path; each result names its file');
  t.notMatch(r.stdout, /not: read/, 'dot-directories are skipped');
});

t.test('stdin as -, and -- ends options', async (t) => {
  const dir = workspace(t, { '-odd.yaml': deployment('odd'), 'ns.yaml': NS });
  const r = runCli(['ns.yaml', '-', '--', '-odd.yaml'], { cwd: dir, input: deployment('web') });
  t.equal(r.status, 0, r.stderr);
  t.same(
    docs(r.stdout).map((d) => (d.metadata as Obj).name),
    ['shop', 'web', 'odd'],
  );
  const twice = runCli(['-', '-'], { cwd: dir, input: deployment('web') });
  t.equal(twice.status, 2);
  t.match(twice.stderr, /stdin\) is given twice/);
});

t.test('paths that are not manifests: named errors, no raw EISDIR/ENOENT', async (t) => {
  const dir = workspace(t, { 'empty/notes.txt': 'x\n' });
  for (const [args, re] of [
    [['missing.yaml'], /^meshinject: error: missing\.yaml: no such file or directory\n$/],
    [['empty'], /^meshinject: error: empty: a directory without manifests/],
    [['https://example.com/app.yaml'], /^meshinject: error: https:\/\/example\.com\/app\.yaml: URLs are not read/],
    [['-c', 'nope.yaml'], /^meshinject: error: --config nope\.yaml: no such file or directory\n$/],
    [['chek'], /^meshinject: error: chek: no such file or directory \(did you mean meshinject check\?\)\n$/],
  ] as const) {
    const r = runCli([...args], { cwd: dir, input: deployment('web') });
    t.equal(r.status, 2, args.join(' '));
    t.equal(r.stdout, '');
    t.match(r.stderr, re);
    t.notMatch(r.stderr, /ENOENT|EISDIR|at .*\.js:\d+/);
  }
});

t.test('input size limit: regular files, /dev/zero and FIFOs', async (t) => {
  const dir = workspace(t, { 'app.yaml': deployment('web') });
  const small = runCli(['--max-input-bytes', '100', 'app.yaml'], { cwd: dir });
  t.equal(small.status, 2);
  t.match(small.stderr, /app\.yaml: input larger than the limit of 100 bytes \(--max-input-bytes\)/);
  const zero = runCli(['--max-input-bytes', '4MiB', '/dev/zero'], { cwd: dir });
  t.equal(zero.status, 2);
  t.match(zero.stderr, /\/dev\/zero: input larger than the limit of 4 MiB/);
  t.equal(zero.stdout, '');
  const stdin = runCli(['--max-input-bytes', '1KiB'], {
    cwd: dir,
    input: deployment('web')
      .repeat(20)
      .replace(/^apiVersion/gm, '---\napiVersion'),
  });
  t.equal(stdin.status, 2);
  t.match(stdin.stderr, /stdin: input larger than the limit of 1 KiB/);
  const fifo = join(dir, 'pipe.yaml');
  if (spawnSync('mkfifo', [fifo]).status === 0) {
    const r = spawnSync(
      'sh',
      ['-c', `cat app.yaml > pipe.yaml & ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} pipe.yaml`],
      { cwd: dir, encoding: 'utf8' },
    );
    t.equal(r.status, 0, r.stderr);
    t.ok(proxied(docs(r.stdout)[0]!), 'a FIFO is read as a stream');
  }
  const bad = runCli(['--max-input-bytes', 'lots'], { cwd: dir });
  t.match(bad, { status: 2, stderr: /--max-input-bytes must be a positive size/ });
});

t.test('output errors: a closed pipe ends quietly, /dev/full is one line', async (t) => {
  const dir = workspace(t, { 'app.yaml': Array.from({ length: 200 }, (_, i) => deployment(`w${i}`)).join('---\n') });
  const head = spawnSync(
    'sh',
    ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} app.yaml | head -c 10`],
    { cwd: dir, encoding: 'utf8' },
  );
  t.equal(head.stdout, 'apiVersion');
  t.equal(head.stderr, '', 'no message, no stack trace');
  const full = spawnSync(
    'sh',
    ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} app.yaml > /dev/full`],
    { cwd: dir, encoding: 'utf8' },
  );
  t.equal(full.status, 2);
  t.equal(full.stderr, 'meshinject: error: cannot write the output: no space left on device\n');
});

t.test('option errors name the option; unknown ones get "did you mean"', async (t) => {
  for (const [args, re] of [
    [['--config='], /^meshinject: option --config needs a value \(got an empty one\)/],
    [['--confg', 'x.yaml'], /^meshinject: unknown option --confg \(did you mean --config\?\)/],
    [['--revison', 'x'], /did you mean --revision\?/],
    [['-c'], /option -c needs a value \(FILE\)/],
    [['--quiet=yes'], /option --quiet takes no value/],
    [['--zzzzzz'], /unknown option --zzzzzz; to name a file that starts with '-', put it after '--'/],
    [['-o', 'xml'], /option -o must be one of yaml, json, patches; got "xml"/],
    [
      ['--in-place'],
      /option --in-place does not apply to meshinject \(it is for: meshinject diff, meshinject migrate\)/,
    ],
  ] as const) {
    const r = runCli([...args]);
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, re);
    t.equal(r.stdout, '');
  }
});

t.test('repeated --config layers; a conflict names both files and writes nothing', async (t) => {
  const dir = workspace(t, {
    'base.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  policy: disabled\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n',
    'app.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  alwaysInjectSelector: [{matchLabels: {app: web}}]\n',
    'flat.yaml': 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  namespaceSelector: "mesh=on"\n',
    'ns.yaml': NS,
    'web.yaml': deployment('web'),
    'api.yaml': deployment('api'),
  });
  const r = runCli(['-c', 'base.yaml', '--config', 'app.yaml', 'ns.yaml', 'web.yaml', 'api.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  const out = docs(r.stdout);
  t.ok(proxied(out[1]!), "web injected by app.yaml's alwaysInjectSelector");
  t.notOk(proxied(out[2]!), "api skipped: base.yaml's policy: disabled still holds");
  const bad = runCli(['-c', 'base.yaml', '-c', 'flat.yaml', 'web.yaml'], { cwd: dir });
  t.equal(bad.status, 1);
  t.equal(bad.stdout, '');
  t.match(
    bad.stderr,
    /spec\.namespaceSelector: --config flat\.yaml sets a string where --config base\.yaml sets a map/,
  );
});

t.test(
  'Argo CD: ARGOCD_APP_NAMESPACE is the default namespace; local-config dropped; never an empty stream',
  async (t) => {
    const local =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {}\n';
    const cfg = `${SELECTOR}  namespaces: [{name: shop, labels: {mesh: "on"}}]\n`;
    const dir = workspace(t, {
      'cfg.yaml': cfg,
      'app.yaml': `${local}---\n# the app\n${deployment('web', '')}---\n${local.replace('name: local', 'name: local2')}`,
      'only.yaml': local,
    });
    const argo = { ARGOCD_APP_NAME: 'shop', ARGOCD_APP_NAMESPACE: 'shop' };
    const r = runCli(['-c', 'cfg.yaml', 'app.yaml'], { cwd: dir, env: argo });
    t.equal(r.status, 0, r.stderr);
    const out = docs(r.stdout);
    t.same(
      out.map((d) => d.kind),
      ['Deployment'],
      'local-config objects dropped',
    );
    t.ok(proxied(out[0]!), 'injected: its namespace is the app namespace shop');
    t.match(r.stdout, /# the app\n/, 'the kept document keeps its comment');
    const flag = runCli(['-c', 'cfg.yaml', '--default-namespace', 'other', 'app.yaml'], { cwd: dir, env: argo });
    t.notOk(proxied(docs(flag.stdout)[0]!), '--default-namespace wins over ARGOCD_APP_NAMESPACE');
    const outside = runCli(['-c', 'cfg.yaml', 'app.yaml'], { cwd: dir });
    t.same(
      docs(outside.stdout).map((d) => d.kind),
      ['ConfigMap', 'Deployment', 'ConfigMap'],
      'outside Argo CD nothing is dropped',
    );
    const empty = runCli(['only.yaml'], { cwd: dir, env: argo });
    t.equal(empty.status, 2);
    t.equal(empty.stdout, '');
    t.match(empty.stderr, /no resources.*Argo CD/);
  },
);
