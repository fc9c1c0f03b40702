// The subcommands as a user runs them (built CLI): check (fails, passes, drift, policy rules, spec.mode:
// check in a ResourceList), explain (text and JSON), diff and --in-place, completion, -o yaml|json,
// reports to files and stdout, and the istioctl-compatible flags.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { XMLValidator } from 'fast-xml-parser';
import { BIN, runCli, workspace, type Obj } from '../helpers/e2e.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const NS =
  'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {mesh: "on"}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ops\n';
const deployment = (name: string, ns = 'shop') => fixtureDeployment(name, { namespace: ns, style: 'block-labels' });
const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n';

t.test('check: fails on uninjected manifests, passes on injected ones, writes nothing', async (t) => {
  const dir = workspace(t, {
    'injection.yaml': CONFIG,
    'manifests/ns.yaml': NS,
    'manifests/web.yaml': deployment('web'),
  });
  const before = readFileSync(join(dir, 'manifests/web.yaml'), 'utf8');
  const fail = runCli(['check', '-c', 'injection.yaml', 'manifests', '--report', 'junit=junit.xml'], { cwd: dir });
  t.equal(fail.status, 1);
  t.equal(fail.stdout, '', 'nothing on stdout');
  t.match(fail.stderr, /\[error\] apps\/v1\/Deployment\/shop\/web spec\.template: not-injected: /);
  t.equal(readFileSync(join(dir, 'manifests/web.yaml'), 'utf8'), before, 'the input is not changed');
  const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
  t.equal(XMLValidator.validate(junit), true);
  t.match(
    junit,
    /<failure message="not-injected: [^"]*" type="not-injected">manifests\/web\.yaml:8:3: spec\.template: /,
  );

  const injected = runCli(['-c', 'injection.yaml', 'manifests', '--output-file', 'out.yaml'], { cwd: dir });
  t.equal(injected.status, 0, injected.stderr);
  t.equal(injected.stdout, '', '--output-file: nothing on stdout');
  const pass = runCli(['check', '-c', 'injection.yaml', 'out.yaml', '--report', 'table'], { cwd: dir });
  t.equal(pass.status, 0, pass.stderr);
  t.match(pass.stderr, /^shop\s+Deployment\s+web\s+injected\s+policy-enabled\s+istio\s+sidecar$/m);
  t.match(pass.stderr, /1 workload\(s\): 1 injected; 0 failing finding\(s\)/);
});

t.test('check: drift, unwanted sidecars and --fail-on', async (t) => {
  const dir = workspace(t, { 'injection.yaml': CONFIG, 'ns.yaml': NS, 'web.yaml': deployment('web') });
  const out = runCli(['-c', 'injection.yaml', 'ns.yaml', 'web.yaml'], { cwd: dir }).stdout;
  writeFileSync(join(dir, 'stale.yaml'), out.replace(/proxyv2:1\.31\.0/g, 'proxyv2:1.30.2'));
  const drift = runCli(['check', '-c', 'injection.yaml', 'stale.yaml', '--report', 'sarif'], { cwd: dir });
  t.equal(drift.status, 1, 'drift fails by default');
  const sarif = JSON.parse(drift.stdout);
  t.same(
    sarif.runs[0].results.map((r: { ruleId: string }) => r.ruleId),
    ['injection-drift'],
    'the SARIF report goes to stdout',
  );
  t.match(
    sarif.runs[0].results[0].fixes[0].artifactChanges[0].replacements[0].insertedContent.text,
    /proxyv2:1\.31\.0/,
  );
  const lenient = runCli(['check', '--fail-on', 'error', '-c', 'injection.yaml', 'stale.yaml'], { cwd: dir });
  t.equal(lenient.status, 0, '--fail-on error reports drift without failing');
  t.match(lenient.stderr, /\[warning\].*injection-drift/);
  writeFileSync(join(dir, 'moved.yaml'), out.replace(/namespace: shop/g, 'namespace: ops'));
  const unwanted = runCli(['check', '-c', 'injection.yaml', 'moved.yaml'], { cwd: dir });
  t.equal(unwanted.status, 1);
  t.match(unwanted.stderr, /unwanted-sidecar: the config skips it \(namespace-not-selected/);
  const sarifUnwanted = runCli(['check', '-c', 'injection.yaml', 'moved.yaml', '--report', 'sarif'], { cwd: dir });
  const found = JSON.parse(sarifUnwanted.stdout).runs[0].results.map(
    (r: { ruleId: string; level: string }) => `${r.level} ${r.ruleId}`,
  );
  t.same(
    found,
    ['error unwanted-sidecar'],
    'the unwanted sidecar is reported once (no second "already injected" warning)',
  );
  const host = runCli(['check', '-c', 'injection.yaml', 'ns.yaml', '-'], {
    cwd: dir,
    input: out
      .split('---\n')
      .find((d) => d.includes('kind: Deployment'))!
      .replace('    spec:\n', '    spec:\n      hostNetwork: true\n'),
  });
  t.equal(host.status, 1, 'a host-network pod with a sidecar is unwanted');
  const warn = runCli(['check', '--fail-on', 'warning', '-c', 'injection.yaml', 'ns.yaml', '-'], {
    cwd: dir,
    input: deployment('agent').replace('    spec:\n', '    spec:\n      hostNetwork: true\n'),
  });
  t.equal(warn.status, 1, '--fail-on warning: the host-network warning fails');
  const warnOk = runCli(['check', '-c', 'injection.yaml', 'ns.yaml', '-'], {
    cwd: dir,
    input: deployment('agent').replace('    spec:\n', '    spec:\n      hostNetwork: true\n'),
  });
  t.equal(warnOk.status, 0, 'by default a warning does not fail');
});

t.test('check: spec.check.requireInjection and forbidOptOut', async (t) => {
  const dir = workspace(t, {
    'require.yaml': `${CONFIG}  check:\n    requireInjection: [{matchLabels: {mesh: "on"}}]\n`,
    'forbid.yaml': `${CONFIG}  check:\n    forbidOptOut: true\n`,
    'ns.yaml': NS,
    'app.yaml': deployment('legacy').replace(
      '        app: legacy\n',
      '        app: legacy\n      annotations: {sidecar.istio.io/inject: "false"}\n',
    ),
  });
  const inject = runCli(['-c', 'forbid.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
  t.equal(inject.status, 0, 'injecting ignores the check rules');
  t.notMatch(inject.stdout, /istio-proxy/, 'the opt-out holds');
  const plain = runCli(['check', '-c', 'require.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
  t.equal(plain.status, 1);
  t.match(
    plain.stderr,
    /injection-required: skipped \(annotation-false\) in namespace shop, where spec\.check\.requireInjection\[0\] \(mesh=on\) requires injection/,
  );
  const forbid = runCli(['check', '-c', 'forbid.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
  t.equal(forbid.status, 1);
  t.match(forbid.stderr, /opt-out-forbidden: it opts out \(annotation-false/);
});

t.test('spec.mode: check in a ResourceList (a kpt validator): items unchanged, results, exit 1', async (t) => {
  const item = (s: string) => `- ${s.trimEnd().replace(/\n/g, '\n  ')}\n`;
  const rl = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${NS.split('---\n').map(item).join('')}${item(deployment('web'))}functionConfig:\n  ${`${CONFIG}  mode: check\n`.trimEnd().replace(/\n/g, '\n  ')}\n`;
  const r = runCli([], { input: rl });
  t.equal(r.status, 1);
  t.ok(r.stdout.startsWith(rl.trimEnd()), 'the list comes back unchanged, results appended');
  const results = (parse(r.stdout) as Obj).results as Obj[];
  t.ok(results.some((x) => x.severity === 'error' && String(x.message).startsWith('not-injected:')));
});

t.test('explain: the decision trace per workload, as text and JSON', async (t) => {
  const dir = workspace(t, {
    'injection.yaml': CONFIG,
    'ns.yaml': NS,
    'app.yaml': `${deployment('web')}---\n${deployment('tool', 'ops')}`,
  });
  const text = runCli(['explain', '-c', 'injection.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
  t.equal(text.status, 0, text.stderr);
  t.match(
    text.stdout,
    /^Deployment shop\/web \(app\.yaml:1\)\n {3}1\. host-network\s+pass\s+spec\.hostNetwork is false\n/,
  );
  t.match(
    text.stdout,
    /namespace-selector\s+decided\s+namespace ops .*does not match mesh=on\n {2}=> skipped \(namespace-not-selected\)/,
  );
  const json = runCli(['explain', '-o', 'json', '-c', 'injection.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
  const list = JSON.parse(json.stdout) as Array<{
    name: string;
    outcome: string;
    trace: Array<{ rule: string; outcome: string }>;
    line: number;
  }>;
  t.same(
    list.map((e) => [e.name, e.outcome, e.line]),
    [
      ['web', 'injected', 1],
      ['tool', 'skipped', 17],
    ],
  );
  t.equal(list[0]!.trace.at(-1)!.outcome, 'decided', 'the last step decided');
  t.ok(
    list[0]!.trace.slice(0, -1).every((s) => s.outcome !== 'decided'),
    'the ones before passed',
  );
});

t.test('diff: git-style unified diff; --in-place writes only changed files', async (t) => {
  const dir = workspace(t, { 'injection.yaml': CONFIG, 'm/ns.yaml': NS, 'm/web.yaml': deployment('web') });
  const nsBefore = statSync(join(dir, 'm/ns.yaml')).mtimeMs;
  const d = runCli(['diff', '-c', 'injection.yaml', 'm'], { cwd: dir });
  t.equal(d.status, 1, `changes: exit 1, as kubectl diff (${d.stderr})`);
  t.match(
    d.stdout,
    /^diff --git a\/m\/web\.yaml b\/m\/web\.yaml\n--- a\/m\/web\.yaml\n\+\+\+ b\/m\/web\.yaml\n@@ -\d+,\d+ \+\d+,\d+ @@\n/,
  );
  t.notMatch(d.stdout, /m\/ns\.yaml/, 'an untouched file has no section');
  t.notMatch(d.stdout, /\u001b\[/, 'no colour when stdout is not a terminal');
  const coloured = runCli(['diff', '--color', 'always', '-c', 'injection.yaml', 'm'], { cwd: dir });
  t.match(coloured.stdout, /\u001b\[32m\+      - name: istio-proxy\u001b\[m/);
  const patched = spawnSync('git', ['apply', '--check', '-'], { cwd: dir, input: d.stdout, encoding: 'utf8' });
  t.equal(patched.status, 0, `git apply accepts the diff: ${patched.stderr}`);
  const inPlace = runCli(['diff', '-i', '-c', 'injection.yaml', 'm'], { cwd: dir });
  t.equal(inPlace.status, 0, inPlace.stderr);
  t.equal(inPlace.stderr, 'meshinject: 1 file(s) changed: m/web.yaml\n');
  t.equal(statSync(join(dir, 'm/ns.yaml')).mtimeMs, nsBefore, 'the untouched file is not rewritten');
  t.equal(
    readFileSync(join(dir, 'm/web.yaml'), 'utf8'),
    runCli(['-c', 'injection.yaml', 'm/ns.yaml', '-'], { cwd: dir, input: deployment('web') })
      .stdout.split('---\n')
      .pop(),
  );
  const again = runCli(['diff', '-c', 'injection.yaml', 'm'], { cwd: dir });
  t.equal(again.stdout, '', 'after --in-place there is nothing left to change');
  t.equal(again.status, 0, 'no change: exit 0');
  const broken = runCli(['diff', '-c', 'injection.yaml', 'm/ns.yaml', '-'], {
    cwd: dir,
    input: deployment('web').replace(
      '      labels:',
      '      annotations: {sidecar.istio.io/interceptionMode: BOGUS}\n      labels:',
    ),
  });
  t.match(
    broken,
    { status: 2, stdout: '' },
    'an error result: exit 2 (kubectl diff: greater than 1), nothing on stdout',
  );
  t.equal(runCli(['diff', '--no-such-flag'], { cwd: dir }).status, 2, 'a usage error: exit 2');
  const stdin = runCli(['diff', '-i'], { cwd: dir, input: deployment('x') });
  t.match(stdin, { status: 2, stderr: /--in-place needs files/ });
});

t.test('completion scripts: bash completes commands and option values', async (t) => {
  const script = runCli(['completion', 'bash']).stdout;
  t.equal(spawnSync('bash', ['-n'], { input: script }).status, 0, 'valid bash');
  // File names complete too, so the completions run in a directory whose contents the test owns.
  const dir = workspace(t, { 'chart.yaml': 'kind: List\n' });
  const complete = (words: string[]) => {
    const r = spawnSync(
      'bash',
      [
        '-c',
        `${script}\nCOMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}; _meshinject; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8', cwd: dir },
    );
    return r.stdout.trim().split('\n');
  };
  t.same(complete(['meshinject', 'che']), ['check']);
  t.same(complete(['meshinject', 'ch']), ['check', 'chart.yaml'], 'a command and a manifest in the working directory');
  t.same(complete(['meshinject', '-c', 'ch']), ['chart.yaml'], 'a file option completes file names only');
  t.same(complete(['meshinject', 'check', '--fail-on', '']), ['error', 'drift', 'warning']);
  t.same(complete(['meshinject', '--conf']), ['--config']);
  t.same(complete(['meshinject', 'completion', '']), ['bash', 'zsh', 'fish']);
  t.match(runCli(['completion', 'zsh']).stdout, /^#compdef meshinject\n/);
  t.match(runCli(['completion', 'fish']).stdout, /complete -c meshinject -l config -s c -r -F/);
  t.match(runCli(['completion', 'tcsh']), { status: 2, stderr: /needs a shell: bash, zsh or fish; got "tcsh"/ });
});

t.test('-o json / -o yaml convert; the same form is left byte for byte', async (t) => {
  const dir = workspace(t, {
    'ns.yaml': NS,
    'web.yaml': deployment('web').replace(
      'name: web\n  namespace',
      'name: web\n  labels: {enabled: "yes"}\n  namespace',
    ),
  });
  const json = runCli(['-o', 'json', 'ns.yaml', 'web.yaml'], { cwd: dir });
  t.equal(json.status, 0, json.stderr);
  const list = JSON.parse(json.stdout) as Obj;
  t.equal(list.kind, 'List');
  t.same(
    (list.items as Obj[]).map((i) => i.kind),
    ['Namespace', 'Namespace', 'Deployment'],
  );
  t.same(((list.items as Obj[])[2]!.metadata as Obj).labels, { enabled: 'yes' }, 'a quoted "yes" stays a string');
  const back = runCli(['-o', 'yaml', '-'], { cwd: dir, input: json.stdout });
  t.equal(back.status, 0, back.stderr);
  t.match(back.stdout, /enabled: "yes"/, 'YAML output quotes what a YAML 1.1 reader would misread');
  const same = runCli(['-o', 'yaml', 'web.yaml'], { cwd: dir });
  t.equal(same.stdout, runCli(['web.yaml'], { cwd: dir }).stdout, '-o yaml on YAML input changes nothing');
});

t.test(
  'istioctl flags: --revision, --valuesFile, --meshConfigFile (ConfigMap), --operatorFileName; flags win',
  async (t) => {
    const dir = workspace(t, {
      'injection.yaml': `${CONFIG}  istio:\n    revision: stable\n`,
      'ns.yaml': NS,
      'web.yaml': deployment('web'),
      'values.json': '{"global": {"hub": "registry.example.com/istio", "tag": "1.29.9"}}',
      'mesh.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    defaultConfig:\n      discoveryAddress: istiod-x.istio-system.svc:15012\n',
      'iop.yaml':
        'apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  values:\n    global: {tag: 1.28.1}\n',
      'bad-iop.yaml': 'apiVersion: v1\nkind: ConfigMap\n',
    });
    const r = runCli(
      [
        '-c',
        'injection.yaml',
        '--revision',
        'canary',
        '--valuesFile',
        'values.json',
        '--meshConfigFile',
        'mesh.yaml',
        'ns.yaml',
        'web.yaml',
      ],
      { cwd: dir },
    );
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, /istio\.io\/rev: canary/, '--revision wins over spec.istio.revision');
    t.match(r.stdout, /image: registry\.example\.com\/istio\/proxyv2:1\.29\.9/);
    t.match(r.stdout, /istiod-x\.istio-system\.svc:15012/, 'the mesh config from the ConfigMap is used');
    const iop = runCli(['--operatorFileName', 'iop.yaml', 'ns.yaml', 'web.yaml'], { cwd: dir });
    t.match(iop.stdout, /proxyv2:1\.28\.1/);
    const bad = runCli(['--operatorFileName', 'bad-iop.yaml', 'web.yaml'], { cwd: dir });
    t.match(bad, { status: 2, stderr: /--operatorFileName bad-iop\.yaml: expected an IstioOperator/ });
  },
);

t.test('reports: --report PATH errors name the option; inject keeps stdout for manifests', async (t) => {
  const dir = workspace(t, { 'web.yaml': deployment('web') });
  t.match(runCli(['--report', 'junit', 'web.yaml'], { cwd: dir }), {
    status: 2,
    stdout: '',
    stderr: /--report junit needs a path/,
  });
  t.match(runCli(['--report', 'xunit=x.xml', 'web.yaml'], { cwd: dir }), {
    status: 2,
    stderr: /unknown format "xunit" \(did you mean junit\?\)/,
  });
  const r = runCli(['--report', 'github=gh.txt', '--report', 'table', 'web.yaml'], { cwd: dir });
  t.equal(r.status, 0);
  t.match(r.stdout, /istio-proxy/);
  t.equal(readFileSync(join(dir, 'gh.txt'), 'utf8'), '', 'no findings, no annotations');
  t.match(r.stderr, /^shop\s+Deployment\s+web\s+injected/m);
});

t.test('the usage is complete: every command and option is in --help', async (t) => {
  const help = runCli(['--help']).stdout;
  for (const w of [
    'check',
    'explain',
    'diff',
    'completion',
    '--report',
    '--fail-on',
    '--in-place',
    '--default-namespace',
    '--max-input-bytes',
    '--operatorFileName',
    'ARGOCD_APP_NAMESPACE',
  ])
    t.match(help, w);
  t.equal(spawnSync(process.execPath, [BIN, 'check', '--help'], { encoding: 'utf8' }).status, 0);
});

t.test(
  'on a terminal: a one-line summary on stderr (-q silences it)',
  { skip: spawnSync('script', ['--version']).status === 0 ? false : 'no script(1) to make a terminal' },
  async (t) => {
    const dir = workspace(t, { 'web.yaml': deployment('web') });
    const tty = (args: string) =>
      spawnSync(
        'script',
        ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args} 2>&1 >/dev/null`, '/dev/null'],
        { cwd: dir, encoding: 'utf8' },
      );
    t.match(tty('web.yaml').stdout, /^meshinject: 1 injected, 0 skipped, 0 error\(s\) \(\d+ ms\)\r?\n$/);
    t.match(
      tty('check web.yaml').stdout,
      /meshinject check: 1 failing, 0 warning\(s\), 1 workload\(s\) \(\d+ ms\)\r?\n$/,
    );
    t.equal(tty('-q web.yaml').stdout, '');
    t.equal(runCli(['web.yaml'], { cwd: dir }).stderr, '', 'no summary when stderr is not a terminal');
  },
);

t.test('an input too large for the heap is refused up front, naming the flag that lets it run', async (t) => {
  const input = Array.from({ length: 6000 }, (_, i) => deployment(`web-${i}`)).join('---\n');
  t.ok(input.length > 1.2 * 1048576, 'more than 16 bytes of heap per input byte would fit');
  const r = runCli(['-c', '/dev/null', '-'], { input, env: { NODE_OPTIONS: '--max-old-space-size=16' } });
  t.equal(r.status, 2, r.stderr.slice(0, 300));
  t.match(
    r.stderr,
    /^meshinject: error: the input \(\d+ MB\) needs about \d+ MB of heap, more than Node's limit of 16 MB; run again with NODE_OPTIONS=--max-old-space-size=1024 \(megabytes\), or split the input\n$/,
  );
  t.equal(r.stdout, '', 'nothing written');
});
