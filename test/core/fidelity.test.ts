/**
 * Output fidelity (issue #8 §1, §4 JSON/empty input, §5 Rollout/%TAG): inputs that use anchors, aliases,
 * merge keys, explicit and complex keys, flow collections with comments, legacy numbers and JSON, each
 * read back from the output as kubectl does (YAML 1.1, merge keys) and as a YAML 1.2 reader does.
 */
import t from 'tap';
import { run } from '../../src/run.ts';
import { parseSource } from '../../src/krm/source.ts';
import { emitChanged } from '../../src/edit/rewrite.ts';
import { checkReadBack } from '../../src/edit/read-back.ts';
import { readCore, readKubernetes } from '../../src/yaml/read/readers.ts';

const CONFIG = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: fidelity
spec:
  mesh: istio
  policy: enabled
  resultAnnotations: false
`;

type Obj = Record<string, any>;

/** The documents of a text as kubectl reads them (YAML 1.1, merge keys); fails the test when unreadable. */
function k8s(text: string): Obj[] {
  const r = readKubernetes(text);
  if (!r.ok) throw new Error(`not readable as YAML 1.1: ${r.error}`);
  return r.values as Obj[];
}

function core(text: string): Obj[] {
  const r = readCore(text);
  if (!r.ok) throw new Error(`not readable as YAML 1.2: ${r.error}`);
  return r.values as Obj[];
}

function names(list: Obj[] | undefined): string[] {
  return (list ?? []).map((c) => c.name);
}

function inject(input: string): { out: string; code: number; err: string } {
  const r = run(input, { functionConfig: CONFIG });
  return { out: r.stdout, code: r.exitCode, err: r.stderr };
}

t.test('pod labels anchored and reused as the selector: injected labels stay out of the selector', async (t) => {
  for (const input of [
    // the template's labels carry the anchor, the selector aliases them
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: &l
        app: web
    spec:
      containers:
      - name: web
        image: nginx
  selector:
    matchLabels: *l
`,
    // the Deployment's labels carry the anchor; the pod labels and the selector alias them
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &l {app: web}
spec:
  selector:
    matchLabels: *l
  template:
    metadata:
      labels: *l
    spec:
      containers:
      - name: web
        image: nginx
`,
  ]) {
    const { out, code, err } = inject(input);
    t.equal(code, 0, err);
    for (const [reader, docs] of [
      ['1.1', k8s(out)],
      ['1.2', core(out)],
    ] as const) {
      const d = docs[0]!;
      t.same(d.spec.selector.matchLabels, { app: 'web' }, `${reader}: the selector is unchanged`);
      t.equal(
        d.spec.template.metadata.labels['security.istio.io/tlsMode'],
        'istio',
        `${reader}: the pod labels are injected`,
      );
      t.same(names(d.spec.template.spec.containers), ['web', 'istio-proxy'], `${reader}: containers`);
    }
    t.same(inject(out).out, out, 'a second run changes nothing');
  }
});

t.test('an alias item in a containers list: comment and legacy octal kept, the aliased item unchanged', async (t) => {
  const input = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      securityContext:
        runAsUser: 01750
      containers:
      # the app
      - &c
        name: web
        image: nginx
      initContainers:
      - *c
`;
  const { out, code, err } = inject(input);
  t.equal(code, 0, err);
  t.match(out, /runAsUser: 01750\n/, 'legacy octal written as it was');
  t.match(out, /# the app\n/, 'comment kept');
  const d = k8s(out)[0]!;
  t.equal(d.spec.template.spec.securityContext.runAsUser, 0o1750, 'kubectl still reads UID 1000');
  t.same(names(d.spec.template.spec.containers), ['web', 'istio-proxy']);
  t.same(
    names(d.spec.template.spec.initContainers).sort(),
    ['istio-init', 'web'],
    'the aliased init container is still there',
  );
  t.equal((d.spec.template.spec.initContainers as Obj[]).find((c) => c.name === 'web')!.image, 'nginx');
});

t.test('merge keys: merged containers are never shadowed, and the driver sees merged fields', async (t) => {
  const input = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
podDefaults: &podspec
  containers:
  - name: web
    image: nginx
    ports:
    - containerPort: 8080
spec:
  template:
    metadata:
      labels: {app: web}
    spec: {<<: *podspec}
`;
  const { out, code, err } = inject(input);
  t.equal(code, 0, err);
  const d = k8s(out)[0]!;
  const containers = d.spec.template.spec.containers as Obj[];
  t.same(names(containers), ['web', 'istio-proxy'], 'the app container is still there for kubectl');
  t.equal(containers[0]!.image, 'nginx');
  const ports = containers[1]!.env.find((e: Obj) => e.name === 'ISTIO_META_POD_PORTS');
  t.match(ports.value, /"containerPort":8080/, 'the driver saw the merged container port');
  t.same(k8s(out)[0]!.podDefaults, k8s(input)[0]!.podDefaults, 'the merged source is unchanged');
  t.same(inject(out).out, out, 'a second run changes nothing');

  const perContainer = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: merged
spec:
  template:
    spec:
      containers:
      - <<: &defaults
          image: nginx:1.27
          ports:
          - containerPort: 9090
        name: merged
`;
  const r = inject(perContainer);
  t.equal(r.code, 0, r.err);
  const c = k8s(r.out)[0]!.spec.template.spec.containers as Obj[];
  t.same(names(c), ['merged', 'istio-proxy']);
  t.same(
    c[0],
    { image: 'nginx:1.27', ports: [{ containerPort: 9090 }], name: 'merged' },
    'merged container fields kept',
  );
  t.match(c[1]!.env.find((e: Obj) => e.name === 'ISTIO_META_POD_PORTS').value, /9090/);
});

t.test('a change neither path writes faithfully is an error result; the resource stays as it was', async (t) => {
  // Merge key: the text patcher declines, the Document rewrite would write the untouched `1_000` as
  // `1000`, which a YAML 1.2 reader reads as a number instead of the string "1_000": refused.
  const refused = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 1_000
  <<: {dnsPolicy: ClusterFirst}
  containers:
  - name: web
    image: nginx
`;
  const fine = `apiVersion: v1
kind: Pod
metadata:
  name: ok
spec:
  containers:
  - name: web
    image: nginx
`;
  const stream = run(`${refused}---\n${fine}`, { functionConfig: CONFIG, inputName: 'pods.yaml' });
  t.equal(stream.exitCode, 1, 'exit 1: an error result');
  t.equal(stream.stdout, '', 'a plain stream with an error result: nothing on stdout');
  const errors = stream.results.filter((r) => r.severity === 'error');
  t.equal(errors.length, 1, 'one error result');
  t.match(
    errors[0]!.message,
    /^Pod "web", line 7: cannot write the injection faithfully: a merge key \(<<\), and rewriting the resource: the new text reads differently as YAML 1\.2$/,
  );
  t.same(errors[0]!.resourceRef, { apiVersion: 'v1', kind: 'Pod', name: 'web' });
  t.same(errors[0]!.tags, { 'meshinject.dev/error': 'unfaithful-edit' }, 'the rule id reports use');
  t.match(stream.stderr, /\[error\] v1\/Pod\/web: .*line 7/);
  t.ok(
    stream.results.some((r) => r.severity === 'info' && r.resourceRef?.name === 'ok' && /^injected/.test(r.message)),
    'the other Pod is still decided and reported',
  );

  const indent = (doc: string) =>
    doc
      .trimEnd()
      .split('\n')
      .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
      .join('\n');
  const list = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${indent(refused)}\n${indent(fine)}\n`;
  const rl = run(list, { functionConfig: CONFIG });
  t.equal(rl.exitCode, 1);
  t.ok(rl.stdout.startsWith(list), 'a ResourceList comes back unchanged, with its results appended');
  t.match(
    rl.stdout.slice(list.length),
    /^results:\n- message: 'Pod "web", line 10: cannot write the injection faithfully/,
  );
});

t.test('explicit keys are read; complex keys are refused naming the line', async (t) => {
  const explicit = `apiVersion: v1
kind: Pod
metadata:
  name: web
? spec
: containers:
  - name: web
    image: nginx
`;
  const r = inject(explicit);
  t.equal(r.code, 0, r.err);
  const d = k8s(r.out)[0]!;
  t.same(names(d.spec.containers), ['web', 'istio-proxy'], 'one app container, the proxy, nothing else in containers');
  t.ok(Array.isArray(d.spec.volumes) && d.spec.volumes.length > 0, 'volumes where they belong');
  const complex = `apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    ? [a, b]
    : x
spec:
  containers:
  - name: web
    image: nginx
`;
  const c = inject(complex);
  t.equal(c.code, 2);
  t.equal(c.out, '');
  t.match(c.err, /line 6: a mapping or sequence used as a key/);
});

t.test('flow collections: legacy octal, quotes and comments survive', async (t) => {
  const input = `apiVersion: v1
kind: Pod
metadata: {name: web, annotations: {q: "?page=1", p: ":8080"}}
spec:
  volumes: [{name: cfg, configMap: {name: c, defaultMode: 0644}}]
  containers: [{
    name: web, # the app
    image: 'nginx'
    }]
`;
  const { out, code, err } = inject(input);
  t.equal(code, 0, err);
  t.match(out, /defaultMode: 0644\}/, '0644 written as it was');
  t.match(out, /q: "\?page=1", p: ":8080"/, 'quotes kept');
  t.match(out, /name: web, # the app\n {4}image: 'nginx'/, 'comment and quotes inside the multi-line flow map kept');
  const d = k8s(out)[0]!;
  const cfg = (docs: Obj[]): Obj => (docs[0]!.spec.volumes as Obj[]).find((v) => v.name === 'cfg')!;
  t.equal(cfg(k8s(out)).configMap.defaultMode, 420, 'kubectl reads mode 0644 (420)');
  t.equal(cfg(core(out)).configMap.defaultMode, 644, 'a YAML 1.2 reader reads it as before (644)');
  t.same(d.metadata.annotations.q, '?page=1');
  t.same(d.metadata.annotations.p, ':8080');
  t.same(names(d.spec.containers), ['web', 'istio-proxy']);
  t.same(inject(out).out, out, 'a second run changes nothing');
});

t.test('JSON: digits, indentation, results, comments, final newline', async (t) => {
  const list = `{
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "web", "image": "nginx"}], "activeDeadlineSeconds": 12345678901234567890}
        }
    ]
} # a trailing } comment
`;
  const { out, code, err } = inject(list);
  t.equal(code, 0, err);
  t.match(out, /"activeDeadlineSeconds": 12345678901234567890[,}]/, 'an integer beyond 2^53 keeps its digits');
  t.notMatch(out, /\n\s*\}\],/, 'nothing glued onto the last item');
  t.match(out, /\n {8}\}\n {4}\]\n\} # a trailing \} comment\n$/, 'the document around the item is unchanged');
  t.same(names(k8s(out)[0]!.items[0].spec.containers), ['web', 'istio-proxy']);

  const rl = `{
    "apiVersion": "config.kubernetes.io/v1",
    "kind": "ResourceList",
    "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}],
    "results": [{"message": "old", "severity": "info"}]
} # } in a comment
`;
  const r = run(rl, { functionConfig: CONFIG });
  t.equal(r.exitCode, 0, r.stderr);
  t.equal(r.stdout.match(/"results"/g)?.length, 1, 'one results key');
  const parsed = JSON.parse(r.stdout.replace(/ # \} in a comment\n$/, '\n')) as Obj;
  t.equal(parsed.results.length, 1, 'the old results are replaced');
  t.match(parsed.results[0].message, /injected/);
  t.match(
    r.stdout,
    /\}\]\}\}\],\n {4}"results": \[\n {8}\{\n {12}"message"/,
    'results at the document indentation (4 spaces)',
  );
  t.match(r.stdout, /\n {4}\]\n\} # \} in a comment\n$/, 'the closing brace and the comment as they were');

  const single = `{
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web"},
    "spec": {"containers": [{"name": "web", "image": "nginx"}]}
}
`;
  const s = inject(single);
  t.equal(s.code, 0, s.err);
  t.ok(s.out.endsWith('}\n'), 'the final newline is kept');
  t.same(names((JSON.parse(s.out) as Obj).spec.containers), ['web', 'istio-proxy'], 'still JSON');
});

t.test('kind: List nested three deep is recursed; absurd nesting is refused', async (t) => {
  const nested = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Pod
      metadata: {name: deep}
      spec:
        containers:
        - name: web
          image: nginx
`;
  const { out, code, err } = inject(nested);
  t.equal(code, 0, err);
  t.same(names(k8s(out)[0]!.items[0].items[0].items[0].spec.containers), ['web', 'istio-proxy']);
  let deep = '{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: b}]}}';
  for (let i = 0; i < 20; i++) deep = `{apiVersion: v1, kind: List, items: [${deep}]}`;
  const r = inject(`${deep}\n`);
  t.equal(r.code, 2);
  t.match(r.err, /kind: List nested more than 16 deep/);
});

t.test('%TAG directives are accepted', async (t) => {
  const input = `%TAG !k! tag:example.com,2000:
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    note: !k!thing "v"
spec:
  containers:
  - name: web
    image: nginx
`;
  const { out, code, err } = inject(input);
  t.equal(code, 0, err);
  t.match(out, /^%TAG !k! tag:example\.com,2000:\n---\n/);
  t.match(out, /note: !k!thing "v"\n/);
  t.same(names(k8s(out)[0]!.spec.containers), ['web', 'istio-proxy']);
});

t.test(
  'empty input: a ResourceList with items: [] exits 0 unchanged; so does a stream without resources (issue #39)',
  async (t) => {
    for (const rl of [
      'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n',
      '{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}\n',
    ]) {
      const r = run(rl, { functionConfig: CONFIG });
      t.equal(r.exitCode, 0, r.stderr);
      t.equal(r.stdout, rl);
    }
    const e = run('# nothing\n', { functionConfig: CONFIG });
    t.equal(e.exitCode, 0);
    t.equal(e.stdout, '# nothing\n', 'the stream comes back as it was');
  },
);

t.test('an Argo Rollout with spec.workloadRef and no template passes through', async (t) => {
  const input = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: r
spec:
  workloadRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
`;
  const r = run(input, { functionConfig: CONFIG });
  t.equal(r.exitCode, 0, r.stderr);
  t.equal(r.stdout, input, 'byte for byte');
  const broken = input.replace(
    '  workloadRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n',
    '  replicas: 1\n',
  );
  t.equal(
    run(broken, { functionConfig: CONFIG }).exitCode,
    1,
    'a Rollout with neither template nor workloadRef is still an error',
  );
});

t.test('read-back: a rewritten text that reads differently is caught', async (t) => {
  const text = 'kind: X\nmeta:\n  a: "1"\n  b: [p, q]\n';
  const src = parseSource(text);
  const item = src.items[0]!;
  const next = { kind: 'X', meta: { a: '1', b: ['p', 'q', 'r'] } };
  const out = emitChanged(item, src, next)!;
  t.equal(out, 'kind: X\nmeta:\n  a: "1"\n  b: [p, q, r]\n');
  t.equal(checkReadBack(text, out, 0, item.value, next, true), undefined, 'the patch reads as intended');
  t.match(
    checkReadBack(text, out.replace('"1"', '1'), 0, item.value, next, true),
    /reads differently/,
    'an unquoted "1" is a number: caught',
  );
  t.match(
    checkReadBack(text, out.replace('"1"', '1'), 0, item.value, next, false),
    /YAML 1\.1/,
    'caught by the YAML 1.1 reading too',
  );
  t.match(
    checkReadBack(text, out.replace('r]', 'r]]'), 0, item.value, next, true),
    /not one YAML document|reads differently/,
    'unparseable: caught',
  );
  // Removing a flow entry would cut a comment out: the text editor declines, the Document path keeps it.
  const withComment = 'kind: X\nargs: [a, # keep me\n  b]\n';
  const s2 = parseSource(withComment);
  const out2 = emitChanged(s2.items[0]!, s2, { kind: 'X', args: ['a'] });
  t.ok(out2 === undefined || /# keep me/.test(out2), 'the comment is not lost silently');
  if (out2 !== undefined) t.same(k8s(out2)[0], { kind: 'X', args: ['a'] });
});

t.test('YAML 1.1 look-alikes read as kubectl and kustomize read them', async (t) => {
  const input = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: off
  annotations:
    a: yes
spec:
  containers:
  - name: web
    image: nginx
    env:
    - {name: X, value: "on"}
`;
  const { out, code, err } = inject(input);
  t.equal(code, 0, err);
  t.match(out, /namespace: off\n {2}annotations:\n {4}a: yes\n/, 'written as they were');
  const d = k8s(out)[0]!;
  t.equal(d.metadata.namespace, 'off', 'namespace: off is the namespace "off" (a string field)');
  t.equal(d.metadata.annotations.a, 'yes');
  t.equal(d.spec.containers[0].env[0].value, 'on');
  t.same(names(d.spec.containers), ['web', 'istio-proxy']);
});

t.test('YAML 1.1 reading: `e0` is a string (as Go and YAML 1.2 read it), `1e3` a number', async (t) => {
  const input =
    'apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {x: N}}\nspec:\n  containers:\n  - name: e0\n    image: x\n';
  const out = run(input);
  t.equal(out.exitCode, 0, `the container named e0 is read as a name (stderr: ${out.stderr})`);
  t.match(out.stdout, /- name: e0\n/);
  t.match(out.stdout, /istio-proxy/);
});

t.test('YAML 1.1 reading: `.` and `-.` are strings, as Go reads them', async (t) => {
  const input =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    metadata:\n      annotations: {example.com/note: ., example.com/other: -.}\n    spec:\n      containers:\n      - {name: a, image: "nginx:1.27"}\n';
  const out = run(input);
  t.equal(out.exitCode, 0, `injected (stderr: ${out.stderr})`);
  t.match(out.stdout, /example\.com\/note: \.,/);
  t.match(out.stdout, /istio-proxy/);
});
