// One identity, one resource (issue #20 §3): the same (API group, kind, namespace, name) twice in one run is an
// error result naming both places when the two differ (nothing written, exit 1), a warning when they are
// identical (both written). Run through the CLI as a user would.
import t from 'tap';
import { parse } from 'yaml';
import { runCli, workspace } from '../helpers/e2e.ts';

const ns = (name: string, labels = '{istio-injection: enabled}') =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels: ${labels}\n`;
const deploy = (
  name: string,
  opts: { ns?: string; apiVersion?: string; image?: string } = {},
) => `apiVersion: ${opts.apiVersion ?? 'apps/v1'}
kind: Deployment
metadata:
  name: ${name}
${opts.ns === undefined ? '  namespace: shop\n' : opts.ns === '' ? '' : `  namespace: ${opts.ns}\n`}spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: ${name}
        image: ${opts.image ?? 'nginx'}
`;
const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  mesh: istio\n  namespaceSelector: {matchLabels: {istio-injection: enabled}}\n';

t.test(
  'the same Deployment in two files, different: an error naming both files and documents, nothing written',
  async (t) => {
    const dir = workspace(t, {
      'c.yaml': CONFIG,
      'a.yaml': `${ns('shop')}---\n${deploy('web')}`,
      'b.yaml': `# team b\n${deploy('api')}---\n${deploy('web', { image: 'nginx:2' })}`,
    });
    const r = runCli(['-c', 'c.yaml', 'a.yaml', 'b.yaml'], { cwd: dir });
    t.equal(r.status, 1, 'error results: exit 1');
    t.equal(r.stdout, '', 'nothing on stdout');
    t.match(
      r.stderr,
      /^\[error\] apps\/v1\/Deployment\/shop\/web: Deployment "shop\/web" \(group apps\) appears twice with different content, at a\.yaml document 2 and b\.yaml document 2: .*may not add resource with an already registered id/m,
    );
    t.equal(r.stderr.match(/appears twice/g)?.length, 1, 'one result, for the second copy');
    const diff = runCli(['diff', '-c', 'c.yaml', 'a.yaml', 'b.yaml'], { cwd: dir });
    t.match(diff, { status: 2, stdout: '' }, 'meshinject diff: an error, exit 2');
  },
);

t.test(
  'the version does not count, the group does; the default namespace is the namespace of one that names none',
  async (t) => {
    const same = workspace(t, {
      'c.yaml': CONFIG,
      'a.yaml': `${ns('shop')}---\n${deploy('web')}---\n${deploy('web', { apiVersion: 'apps/v1beta1' })}`,
    });
    t.match(
      runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: same }).stderr,
      /Deployment "shop\/web" \(group apps\) appears twice with different content, at a\.yaml document 2 and a\.yaml document 3/,
      'apps/v1 and apps/v1beta1: one resource',
    );
    const groups = workspace(t, {
      'c.yaml': CONFIG,
      'a.yaml': `${ns('shop')}---\n${deploy('web')}---\n${deploy('web', { apiVersion: 'extensions/v1beta1' })}`,
    });
    const g = runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: groups });
    t.notMatch(g.stderr, /appears twice/, 'apps and extensions: two groups, two resources');
    const dflt = workspace(t, {
      'c.yaml': `${CONFIG}  defaultNamespace: shop\n`,
      'a.yaml': `${ns('shop')}---\n${deploy('web', { ns: '' })}---\n${deploy('web', { image: 'other' })}`,
    });
    const d = runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: dflt });
    t.equal(d.status, 1);
    t.match(
      d.stderr,
      /Deployment "shop\/web" \(group apps\) appears twice with different content, at a\.yaml document 2 and a\.yaml document 3/,
      'no namespace = the default namespace',
    );
    const other = workspace(t, {
      'c.yaml': CONFIG,
      'a.yaml': `${ns('shop')}---\n${ns('ops')}---\n${deploy('web')}---\n${deploy('web', { ns: 'ops' })}---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n`,
    });
    const o = runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: other });
    t.equal(o.status, 0, `other namespaces and other kinds are other resources: ${o.stderr}`);
    t.equal(o.stdout.match(/name: istio-proxy/g)?.length, 2, 'both Deployments injected');
  },
);

t.test('two Namespace objects of one name with different labels: an error, whatever their order', async (t) => {
  for (const [first, second] of [
    [ns('shop'), ns('shop', '{}')],
    [ns('shop', '{}'), ns('shop')],
  ]) {
    const dir = workspace(t, { 'c.yaml': CONFIG, 'ns.yaml': first!, 'app.yaml': `${second}---\n${deploy('web')}` });
    const r = runCli(['-c', 'c.yaml', 'ns.yaml', 'app.yaml'], { cwd: dir });
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
    t.match(
      r.stderr,
      /\[error\] v1\/Namespace\/shop: Namespace "shop" appears twice with different content \(its labels and annotations decide injection: which one counts would be a guess\), at ns\.yaml document 1 and app\.yaml document 1/,
    );
  }
  const annotated = workspace(t, {
    'c.yaml': CONFIG,
    'a.yaml': `${ns('shop')}---\n${ns('shop').replace('  labels:', '  annotations: {owner: b}\n  labels:')}---\n${deploy('web')}`,
  });
  t.match(
    runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: annotated }),
    { status: 1, stderr: /Namespace "shop" appears twice with different content/ },
    'annotations differ: an error too',
  );
});

t.test('identical copies: a warning naming both places, both written and injected, exit 0', async (t) => {
  const dir = workspace(t, {
    'c.yaml': CONFIG,
    'ns.yaml': ns('shop'),
    'a.yaml': deploy('web'),
    'copy.yaml': `# a copy, reformatted\n${deploy('web').replace('{matchLabels: {app: web}}', '\n    matchLabels:\n      app: web')}`,
  });
  const r = runCli(['-c', 'c.yaml', 'ns.yaml', 'a.yaml', 'copy.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stderr,
    /^\[warning\] apps\/v1\/Deployment\/shop\/web: Deployment "shop\/web" \(group apps\) appears twice, identical, at a\.yaml document 1 and copy\.yaml document 1: both are written/m,
    'equal as data, however written',
  );
  t.equal(r.stdout.match(/name: istio-proxy/g)?.length, 2, 'both copies injected alike');
  const twice = runCli(['-c', 'c.yaml', 'ns.yaml', 'a.yaml', 'a.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(twice.status, 0);
  t.match(
    twice.stderr,
    /appears twice, identical, at a\.yaml document 1 \(an input given twice\)/,
    'the same file given twice is named once, as such',
  );
});

t.test(
  'a ResourceList: the error names the kpt path annotations; items come back unchanged with the result',
  async (t) => {
    const item = (name: string, path: string, index: number, image: string) =>
      deploy(name, { image }).replace(
        '  namespace: shop\n',
        `  namespace: shop\n  annotations:\n    internal.config.kubernetes.io/path: '${path}'\n    internal.config.kubernetes.io/index: '${index}'\n`,
      );
    const indent = (s: string) =>
      s
        .split('\n')
        .filter(Boolean)
        .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
        .join('\n');
    const rl = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${indent(ns('shop'))}\n${indent(item('web', 'base/web.yaml', 0, 'a'))}\n${indent(item('web', 'overlay/web.yaml', 1, 'b'))}\nfunctionConfig:\n  apiVersion: meshinject.dev/v1alpha1\n  kind: SidecarInjection\n  metadata: {name: m}\n  spec: {mesh: istio}\n`;
    const r = runCli([], { input: rl });
    t.equal(r.status, 1);
    const out = parse(r.stdout) as {
      items: unknown[];
      results: Array<{ severity: string; message: string; file?: { path: string; index: number } }>;
    };
    t.equal(out.items.length, 3, 'items unchanged');
    t.notMatch(r.stdout, /istio-proxy/, 'nothing injected');
    const dup = out.results.find((x) => /appears twice/.test(x.message));
    t.match(dup, { severity: 'error', file: { path: 'overlay/web.yaml', index: 1 } });
    t.match(
      dup?.message,
      /at base\/web\.yaml \(index 0; stdin items\[1\]\) and overlay\/web\.yaml \(index 1; stdin items\[2\]\)/,
    );
  },
);

t.test('local config is not output and not checked; a List item and a document are one resource', async (t) => {
  const local = (v: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {v: "${v}"}\n`;
  const dir = workspace(t, {
    'c.yaml': CONFIG,
    'a.yaml': `${ns('shop')}---\n${local('1')}---\n${local('2')}---\n${deploy('web')}`,
  });
  t.equal(
    runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: dir }).status,
    0,
    'two local-config objects of one name: no result',
  );
  const list = `apiVersion: v1\nkind: List\nitems:\n${deploy('web', { image: 'x' })
    .split('\n')
    .filter(Boolean)
    .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
    .join('\n')}\n`;
  const both = workspace(t, { 'c.yaml': CONFIG, 'a.yaml': `${ns('shop')}---\n${deploy('web')}---\n${list}` });
  const r = runCli(['-c', 'c.yaml', 'a.yaml'], { cwd: both });
  t.equal(r.status, 1);
  t.match(r.stderr, /appears twice with different content, at a\.yaml document 2 and a\.yaml document 3 \(in a List\)/);
});

t.test('duplicates are told apart whichever reader read them (an anchor sends a file to the yaml path)', async (t) => {
  // With every file read by the fast reader, only identities that repeat get a fingerprint; with one file on the
  // yaml path every resource gets one. Both must give the same verdicts.
  const anchored = (image: string) =>
    deploy('web', { image })
      .replace('  selector: {matchLabels: {app: web}}', '  selector: {matchLabels: &l {app: web}}')
      .replace('    metadata: {labels: {app: web}}', '    metadata: {labels: *l}');
  const same = workspace(t, {
    'c.yaml': CONFIG,
    'ns.yaml': ns('shop'),
    'a.yaml': deploy('web'),
    'b.yaml': anchored('nginx'),
  });
  const r = runCli(['-c', 'c.yaml', 'ns.yaml', 'a.yaml', 'b.yaml'], { cwd: same, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stderr,
    /appears twice, identical, at a\.yaml document 1 and b\.yaml document 1/,
    'equal data through an alias: identical',
  );
  const differ = workspace(t, {
    'c.yaml': CONFIG,
    'ns.yaml': ns('shop'),
    'a.yaml': deploy('web'),
    'b.yaml': anchored('nginx:2'),
  });
  const d = runCli(['-c', 'c.yaml', 'ns.yaml', 'a.yaml', 'b.yaml'], { cwd: differ });
  t.equal(d.status, 1);
  t.match(d.stderr, /appears twice with different content, at a\.yaml document 1 and b\.yaml document 1/);
  const fast = workspace(t, {
    'c.yaml': CONFIG,
    'ns.yaml': ns('shop'),
    'a.yaml': `${deploy('api')}---\n${deploy('web')}`,
    'b.yaml': `${deploy('db')}---\n${deploy('web', { image: 'nginx:2' })}---\n${deploy('api')}`,
  });
  const f = runCli(['-c', 'c.yaml', 'ns.yaml', 'a.yaml', 'b.yaml'], { cwd: fast, env: { LOG_TO_STDERR: 'true' } });
  t.equal(f.status, 1);
  t.match(
    f.stderr,
    /Deployment "shop\/web" \(group apps\) appears twice with different content, at a\.yaml document 2 and b\.yaml document 2/,
    'fast reader: a differing repeat is an error',
  );
  t.match(
    f.stderr,
    /Deployment "shop\/api" \(group apps\) appears twice, identical, at a\.yaml document 1 and b\.yaml document 3/,
    'fast reader: an identical repeat is a warning',
  );
  t.notMatch(f.stderr, /"shop\/db".*appears twice/, 'a resource seen once is not reported');
});
