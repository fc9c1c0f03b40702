/**
 * Property tests of `run()` over generated manifests (fast-check): random mixes of workloads and other
 * resources, labels, annotations (including template-looking text), comments, sequence indentation and
 * flow sequences, framed as a ResourceList, a `kind: List` or a YAML stream.
 *
 * Properties: never throws; every input item is in the output exactly once, in order; non-workload items
 * are byte-identical; running twice equals running once; re-running with a changed config equals running
 * the original input with that config; mangled inputs never throw and never yield partial stdout.
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { Document, isMap, isSeq, parseAllDocuments, parseDocument, type Node as YamlNode } from 'yaml';
import { run, type RunOutput } from '../../src/run.ts';

type Form = 'resource-list' | 'list' | 'stream';
type Obj = Record<string, unknown>;

interface GenResource {
  obj: Obj;
  workload: boolean;
  headComment: string | undefined;
  nameComment: string | undefined;
  flowArgs: boolean;
}

interface GenInput {
  resources: GenResource[];
  form: Form;
  indentSeq: boolean;
}

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 30);

const name = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4})?$/);
const annotationValue = fc.oneof(
  fc.constantFrom(
    '{{ .Values.global.proxy.image }}',
    '{{#with constructor}}{{name}}{{/with}}',
    '{{{raw}}}',
    'true',
    '0123',
    '1e3',
    '~',
    'null',
    ': colon first',
    '# not a comment',
    'multi\nline\n',
    "it's",
    '"quoted"',
    '',
    '  leading space',
  ),
  fc.string({ maxLength: 20 }),
);
const annotations = fc.dictionary(
  fc.constantFrom('example.com/note', 'example.com/owner', 'team.example.org/cost-center', 'ci.example.com/build'),
  annotationValue,
  { maxKeys: 3 },
);
const labels = fc.dictionary(fc.constantFrom('app', 'tier', 'version', 'example.com/part-of'), name, { maxKeys: 3 });
const namespace = fc.option(fc.constantFrom('shop', 'payments', 'team-a'), { nil: undefined });

const containerList = fc
  .uniqueArray(
    fc.record({
      name,
      image: fc.constantFrom('nginx:1.27', 'ghcr.io/acme/api:v2', 'busybox'),
      args: fc.option(
        fc.array(fc.constantFrom('--port=8080', '-v', 'serve', '{{ .Values.x }}'), { minLength: 1, maxLength: 3 }),
        { nil: undefined },
      ),
      ports: fc.option(
        fc.array(fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }) }), { minLength: 1, maxLength: 2 }),
        { nil: undefined },
      ),
    }),
    { minLength: 1, maxLength: 3, selector: (c) => c.name },
  )
  .map((cs) =>
    cs.map((c) => {
      const o: Obj = { name: c.name, image: c.image };
      if (c.args) o.args = c.args;
      if (c.ports) o.ports = c.ports;
      return o;
    }),
  );

const podTemplate = fc
  .record({ labels, annotations, containers: containerList })
  .map(({ labels: l, annotations: a, containers }) => {
    const metadata: Obj = {};
    if (Object.keys(l).length) metadata.labels = l;
    if (Object.keys(a).length) metadata.annotations = a;
    return { metadata, spec: { containers } as Obj };
  });

function meta(n: string, ns: string | undefined, l: Obj, a: Obj): Obj {
  const m: Obj = { name: n };
  if (ns) m.namespace = ns;
  if (Object.keys(l).length) m.labels = l;
  if (Object.keys(a).length) m.annotations = a;
  return m;
}

const workload = fc
  .record({
    kind: fc.constantFrom('Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod'),
    name,
    namespace,
    labels,
    annotations,
    tmpl: podTemplate,
  })
  .map(({ kind, name: n, namespace: ns, labels: l, annotations: a, tmpl }): Obj => {
    const m = meta(n, ns, l, a);
    if (kind === 'Pod') return { apiVersion: 'v1', kind, metadata: { ...m, ...tmpl.metadata }, spec: tmpl.spec };
    if (kind === 'Job')
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata: m,
        spec: { template: { ...tmpl, spec: { ...tmpl.spec, restartPolicy: 'Never' } } },
      };
    if (kind === 'CronJob') {
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata: m,
        spec: {
          schedule: '*/5 * * * *',
          jobTemplate: { spec: { template: { ...tmpl, spec: { ...tmpl.spec, restartPolicy: 'OnFailure' } } } },
        },
      };
    }
    const sel = { matchLabels: { app: n } };
    return { apiVersion: 'apps/v1', kind, metadata: m, spec: { selector: sel, template: tmpl } };
  });

const other = fc
  .record({
    kind: fc.constantFrom('Service', 'ConfigMap', 'Secret', 'Widget'),
    name,
    namespace,
    labels,
    annotations,
    value: annotationValue,
  })
  .map(({ kind, name: n, namespace: ns, labels: l, annotations: a, value }): Obj => {
    const m = meta(n, ns, l, a);
    if (kind === 'Service')
      return {
        apiVersion: 'v1',
        kind,
        metadata: m,
        spec: { selector: { app: n }, ports: [{ port: 80, targetPort: 8080 }] },
      };
    if (kind === 'ConfigMap')
      return {
        apiVersion: 'v1',
        kind,
        metadata: m,
        data: { key: value, 'template.tpl': '{{ if .x }}{{ .y }}{{ end }}' },
      };
    if (kind === 'Secret') return { apiVersion: 'v1', kind, metadata: m, stringData: { password: value } };
    // A CRD instance that merely looks like a workload: never touched.
    return {
      apiVersion: 'example.com/v1',
      kind,
      metadata: m,
      spec: { template: { spec: { containers: [{ name: 'x', image: 'y' }] } } },
    };
  });

const resource: fc.Arbitrary<GenResource> = fc
  .record({
    isWorkload: fc.boolean(),
    w: workload,
    o: other,
    headComment: fc.option(fc.constantFrom(' owned by team A', ' {{ not a template }}', ' --- not a separator'), {
      nil: undefined,
    }),
    nameComment: fc.option(fc.constantFrom(' line comment', ' # twice'), { nil: undefined }),
    flowArgs: fc.boolean(),
  })
  .map(({ isWorkload, w, o, headComment, nameComment, flowArgs }) => ({
    obj: isWorkload ? w : o,
    workload: isWorkload,
    headComment,
    nameComment,
    flowArgs,
  }));

const input: fc.Arbitrary<GenInput> = fc.record({
  resources: fc.array(resource, { minLength: 1, maxLength: 6 }),
  form: fc.constantFrom<Form>('resource-list', 'list', 'stream'),
  indentSeq: fc.boolean(),
});

/** Adds the generated comments and flow styles to a resource's node. */
function decorate(doc: Document, node: YamlNode, r: GenResource, isTopLevelDoc: boolean): void {
  if (!isMap(node)) return;
  if (r.headComment) {
    if (isTopLevelDoc) doc.commentBefore = r.headComment;
    else node.commentBefore = r.headComment;
  }
  const metaNode = node.get('metadata', true);
  if (r.nameComment && isMap(metaNode)) {
    const n = metaNode.get('name', true) as YamlNode | undefined;
    if (n) n.comment = r.nameComment;
  }
  if (r.flowArgs) {
    // Make every `args` and `ports` sequence a flow sequence.
    const visit = (x: unknown): void => {
      if (isMap(x)) {
        for (const p of x.items) {
          const key = (p.key as { value?: unknown } | null)?.value;
          if ((key === 'args' || key === 'ports') && isSeq(p.value)) p.value.flow = true;
          visit(p.value);
        }
      } else if (isSeq(x)) x.items.forEach(visit);
    };
    visit(node);
  }
}

/** Serialises a generated input in its form. */
/**
 * Generated manifests are written as people write valid ones: strings that a YAML 1.1 reader (kubectl)
 * would read as numbers or booleans (`1:20`, `0b1`, `.`) are quoted, as YAML 1.1 quoting does.
 */
const K8S_WRITE = { version: '1.1' } as const;

function render(g: GenInput): string {
  if (g.form === 'stream') {
    return g.resources
      .map((r) => {
        const d = new Document(r.obj, K8S_WRITE);
        decorate(d, d.contents as YamlNode, r, true);
        return d.toString({ indentSeq: g.indentSeq });
      })
      .join('---\n');
  }
  const wrapper: Obj =
    g.form === 'resource-list'
      ? { apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items: g.resources.map((r) => r.obj) }
      : { apiVersion: 'v1', kind: 'List', items: g.resources.map((r) => r.obj) };
  const d = new Document(wrapper, K8S_WRITE);
  const items = d.get('items', true);
  if (isSeq(items)) items.items.forEach((n, i) => decorate(d, n as YamlNode, g.resources[i]!, false));
  return d.toString({ indentSeq: g.indentSeq });
}

function config(opts: { image?: string | undefined; native?: boolean } = {}): string {
  const values = opts.image
    ? `\n    values:\n      global:\n        proxy:\n          image: ${JSON.stringify(opts.image)}`
    : '';
  return `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: prop
spec:
  mesh: istio
  policy: enabled
  nativeSidecars: ${opts.native === true}
  istio:
    revision: ""${values}
`;
}

/** The source text of every resource in a text of the given form (`[start, valueEnd)` of each node). */
function itemTexts(text: string, form: Form): string[] {
  if (form === 'stream') {
    return parseAllDocuments(text)
      .filter((d) => !('empty' in d) && d.contents)
      .map((d) => {
        const r = (d.contents as YamlNode).range!;
        return text.slice(r[0], r[1]);
      });
  }
  const doc = parseDocument(text);
  const items = doc.get('items', true);
  if (!isSeq(items)) return [];
  return items.items.map((n) => {
    const r = (n as YamlNode).range!;
    return text.slice(r[0], r[1]);
  });
}

/** Identity of every output resource in order: `kind/namespace/name`. */
function identities(text: string, form: Form): string[] {
  const values: unknown[] =
    form === 'stream'
      ? parseAllDocuments(text)
          .map((d) => d.toJS())
          .filter((v) => v !== null)
      : ((parseDocument(text).toJS() as { items?: unknown[] }).items ?? []);
  return values.map((v) => {
    const o = v as { kind?: string; metadata?: { name?: string; namespace?: string } };
    return `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
  });
}

/** The output without the ResourceList's appended `results:` entry (results describe a run, not the resources). */
function withoutResults(out: RunOutput): string {
  const i = out.stdout.search(/^results:/m);
  return i < 0 ? out.stdout : out.stdout.slice(0, i);
}

function runOk(text: string, functionConfig: string): RunOutput {
  const out = run(text, { functionConfig });
  if (out.exitCode !== 0) throw new Error(`exit ${out.exitCode}: ${out.stderr}\n--- input:\n${text}`);
  return out;
}

t.test('run() never throws, keeps every item once and in order, leaves non-workloads byte-identical', (t) => {
  fc.assert(
    fc.property(input, (g) => {
      const text = render(g);
      const out = runOk(text, config());
      const before = identities(text, g.form);
      const after = identities(out.stdout, g.form);
      if (JSON.stringify(before) !== JSON.stringify(after))
        throw new Error(`items differ: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      const inTexts = itemTexts(text, g.form);
      const outTexts = itemTexts(out.stdout, g.form);
      g.resources.forEach((r, i) => {
        if (!r.workload && inTexts[i] !== outTexts[i])
          throw new Error(`non-workload ${i} changed:\n${inTexts[i]}\n=>\n${outTexts[i]}`);
        if (r.workload && !/istio-proxy/.test(outTexts[i] ?? ''))
          throw new Error(`workload ${i} not injected:\n${outTexts[i]}`);
      });
    }),
    { numRuns: NUM_RUNS },
  );
  t.pass('property held');
  t.end();
});

t.test('running twice equals running once', (t) => {
  fc.assert(
    fc.property(input, fc.boolean(), (g, native) => {
      const cfg = config({ native });
      const once = runOk(render(g), cfg);
      const twice = runOk(once.stdout, cfg);
      if (withoutResults(twice) !== withoutResults(once)) {
        throw new Error(`second run changed the output: ${firstDiff(withoutResults(once), withoutResults(twice))}`);
      }
    }),
    { numRuns: NUM_RUNS },
  );
  t.pass('property held');
  t.end();
});

/** A short report of the first difference between two texts (line number and a few lines of each). */
function firstDiff(a: string, b: string): string {
  const al = a.split('\n');
  const bl = b.split('\n');
  let i = 0;
  while (i < al.length && i < bl.length && al[i] === bl[i]) i++;
  const show = (ls: string[]) => ls.slice(Math.max(0, i - 3), i + 5).join('\n');
  return `first difference at line ${i + 1} (${al.length} vs ${bl.length} lines)\n--- expected:\n${show(al)}\n--- got:\n${show(bl)}`;
}

const proxyImage = fc.option(
  fc.constantFrom('docker.io/istio/proxyv2:1.24.0', 'registry.example.com/mesh/proxyv2:1.99.0-distroless'),
  { nil: undefined },
);

type Variant = { image: string | undefined; native: boolean };

function reinjectProperty(t: Test, pairs: fc.Arbitrary<[Variant, Variant]>): void {
  fc.assert(
    fc.property(input, pairs, (g, [ca, cb]) => {
      fc.pre(ca.image !== cb.image || ca.native !== cb.native);
      const text = render(g);
      const direct = withoutResults(runOk(text, config(cb)));
      const via = withoutResults(runOk(runOk(text, config(ca)).stdout, config(cb)));
      if (via !== direct) {
        const same =
          JSON.stringify(parseAllDocuments(via).map((d) => d.toJS())) ===
          JSON.stringify(parseAllDocuments(direct).map((d) => d.toJS()));
        throw new Error(
          `re-injection differs from direct injection (${same ? 'same data, different bytes/key order' : 'different data'}): ${firstDiff(direct, via)}`,
        );
      }
    }),
    { numRuns: NUM_RUNS },
  );
  t.pass('property held');
}

t.test('a changed proxy image re-injects cleanly: inject(inject(x, A), B) = inject(x, B)', (t) => {
  const native = fc.boolean();
  reinjectProperty(
    t,
    native.chain((n) =>
      fc.tuple(
        proxyImage.map((image) => ({ image, native: n })),
        proxyImage.map((image) => ({ image, native: n })),
      ),
    ),
  );
  t.end();
});

t.test('flipping nativeSidecars re-injects cleanly: inject(inject(x, A), B) = inject(x, B)', (t) => {
  const v = fc.record({ image: proxyImage, native: fc.boolean() });
  reinjectProperty(t, fc.tuple(v, v));
  t.end();
});

t.test('mangled inputs never throw and never produce partial stdout', (t) => {
  const mangled = fc
    .tuple(input, fc.nat(), fc.nat(), fc.constantFrom('cut', 'delete', 'insert-colon', 'insert-tab', 'dedent'))
    .map(([g, p, q, how]) => {
      const text = render(g);
      const at = p % (text.length + 1);
      const n = 1 + (q % 8);
      if (how === 'cut') return text.slice(0, at);
      if (how === 'delete') return text.slice(0, at) + text.slice(at + n);
      if (how === 'insert-colon') return `${text.slice(0, at)}: ${text.slice(at)}`;
      if (how === 'insert-tab') return `${text.slice(0, at)}\t${text.slice(at)}`;
      return text.replace(/\n {2}/g, (m, off: number) => (off >= at ? '\n ' : m));
    });
  fc.assert(
    fc.property(fc.oneof(mangled, fc.string({ maxLength: 200 })), (text) => {
      const out = run(text, { functionConfig: config() });
      if (![0, 1, 2].includes(out.exitCode)) throw new Error(`exit code ${out.exitCode}`);
      if (out.exitCode === 2 && out.stdout !== '') throw new Error('exit 2 with stdout');
      if (out.exitCode !== 0 && out.stderr === '') throw new Error(`exit ${out.exitCode} without a message`);
      if (out.exitCode === 2 && !/^meshinject: error: /.test(out.stderr))
        throw new Error(`unclear error: ${out.stderr}`);
    }),
    { numRuns: NUM_RUNS * 4 },
  );
  t.pass('property held');
  t.end();
});
