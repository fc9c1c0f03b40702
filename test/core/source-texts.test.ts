/**
 * The companion record's source texts (`meshinject.dev/original`, part `texts`; issue #37 item 3), as a user sees
 * them through `run`: written only where a fresh emit would not give the text back; written back by uninject only
 * where the injected value is still there and the text reads back as the value restored (a forged text gives
 * what uninject gives without it); a malformed part refused with an error naming the annotation.
 */
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../src/index.ts';
import { generateWorkloads, toStream } from '../../bench/generate.ts';

const config = (mesh: string, mode: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: texts}\nspec:\n  mesh: ${mesh}\n  policy: enabled\n  resultAnnotations: false\n  mode: ${mode}\n`;

/** A Deployment whose gRPC startup probe (which Kuma rewrites) names its service in double quotes. */
const GRPC = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: example/api:1.0
        startupProbe:
          grpc:
            service: "/startup" # the health service
            port: 5678
          periodSeconds: 10
`;

/** The same with the service written as a fresh emit writes it: nothing to keep. */
const PLAIN = GRPC.replace('service: "/startup" # the health service', 'service: /startup');

/** A pod template that takes its labels by alias. */
const ALIASED = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels
    app: web
    tier: front
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      containers:
      - name: web
        image: nginx:1.27
`;

const inject = (text: string, mesh = 'kuma') => run(text, { functionConfig: config(mesh, 'inject') });
const uninject = (text: string, mesh = 'kuma') => run(text, { functionConfig: config(mesh, 'uninject') });
const values = (text: string) => parseAllDocuments(text).map((d) => d.toJS());
/** The companion record of the first document's pod template. */
const record = (text: string): Record<string, unknown> => {
  const doc = parse(text) as { spec: { template: { metadata: { annotations?: Record<string, string> } } } };
  return JSON.parse(doc.spec.template.metadata.annotations?.['meshinject.dev/original'] ?? '{}');
};

t.test('written only where a fresh emit would not give the text', async (t) => {
  const quoted = inject(GRPC);
  t.equal(quoted.exitCode, 0);
  t.same(
    record(quoted.stdout).texts,
    [
      [
        ['spec', 'containers', 0, 'startupProbe', 'grpc'],
        '-',
        (record(quoted.stdout).texts as string[][])[0]?.[2],
        '\n  service: "/startup" # the health service\n  port: 5678\n',
      ],
    ],
    'the removed gRPC handler, as written, without its indentation',
  );
  const plain = inject(PLAIN);
  t.equal(plain.exitCode, 0);
  t.equal(record(plain.stdout).texts, undefined, 'canonical text: no entry');
  t.equal(uninject(plain.stdout).stdout, PLAIN, 'and uninject gives the input back without one');
  t.equal(uninject(quoted.stdout).stdout, GRPC, 'the quoted service and its comment come back byte for byte');
});

t.test('an alias comes back as the alias, for every driver that adds a pod label', async (t) => {
  for (const mesh of ['istio', 'kuma']) {
    const injected = inject(ALIASED, mesh);
    t.equal(injected.exitCode, 0, `${mesh}: injects`);
    t.notMatch(injected.stdout, /^ {6}labels: \*labels$/m, `${mesh}: the injection writes the labels out`);
    t.equal(uninject(injected.stdout, mesh).stdout, ALIASED, `${mesh}: uninject writes \`labels: *labels\` again`);
  }
});

t.test('a forged text gives only what uninject gives without it', async (t) => {
  const injected = inject(GRPC).stdout;
  const forged = injected.replace('service: \\"/startup\\"', 'service: \\"/forged\\"');
  t.not(forged, injected, 'the text was planted');
  const un = uninject(forged);
  t.equal(un.exitCode, 0);
  t.same(values(un.stdout), values(GRPC), 'the values are the input values');
  t.notMatch(un.stdout, /forged/, 'the planted text is not written');
  t.match(un.stdout, /^ {12}service: \/startup\n/m, 'the service is written anew, plain');

  const alias = inject(ALIASED).stdout;
  for (const text of ['*nowhere', '*labels-gone', '&x {app: other}']) {
    const planted = alias.replace('" *labels\\n"', JSON.stringify(` ${text}\n`));
    t.not(planted, alias, `${text}: planted`);
    const back = uninject(planted);
    t.equal(back.exitCode, 0, `${text}: uninject succeeds`);
    t.same(values(back.stdout), values(ALIASED), `${text}: the values are the input values`);
    t.notMatch(back.stdout, new RegExp(text.replace(/[*{}]/g, '\\$&')), `${text}: not written`);
  }
});

t.test('a value the user changed after the injection keeps the change', async (t) => {
  const injected = inject(ALIASED).stdout;
  const edited = injected.replace(/^( {8}tier: )front$/m, '$1back');
  t.not(edited, injected, 'the pod template label was changed');
  const un = uninject(edited);
  t.equal(un.exitCode, 0);
  t.notMatch(un.stdout, /^ {6}labels: \*labels$/m, 'the alias is not written over the change');
  t.match(un.stdout, /^ {8}tier: back$/m, "the user's value stays");
});

t.test('a malformed texts part is refused, naming the annotation', async (t) => {
  const injected = inject(GRPC).stdout;
  for (const bad of ['[["spec"],"-","x","t"]', '[["status",0],"-","-","t"]', '[["spec"],"-","-",1]', '{}']) {
    const text = injected.replace(/"texts":\[.*\]\]\}'/, `"texts":[${bad}]}'`);
    t.not(text, injected, `${bad}: planted`);
    const un = uninject(text);
    t.equal(un.exitCode, 1, `${bad}: an error result`);
    const err = un.results.find((r) => r.severity === 'error');
    t.equal(err?.field?.path, 'spec.template.metadata.annotations[meshinject.dev/original]', `${bad}: names it`);
    t.match(err?.message, /"texts" must list/, `${bad}: says what is wrong`);
    t.equal(un.stdout, '', `${bad}: nothing half-done is written`);
  }
});

t.test('the bench all-workloads input gets no source texts, through every mesh', async (t) => {
  const input = toStream(generateWorkloads(100));
  for (const mesh of ['istio', 'linkerd', 'kuma', 'osm', 'fsm']) {
    const out = run(input, { functionConfig: config(mesh, 'inject') });
    t.equal(out.exitCode, 0, `${mesh}: injects`);
    t.notMatch(out.stdout, /"texts"/, `${mesh}: no record part "texts"`);
  }
});
