/**
 * Istio's prometheus merge undone (issue #37 item 3): `applyPrometheusMerge` replaces the pod's scrape
 * annotations with the agent's and records them parsed in the proxy's `ISTIO_PROMETHEUS_ANNOTATIONS`; Istio
 * 1.31's `prometheus.istio.io/scrape-targets` is recorded as a list of `{port, path}`, its text lost. Uninject
 * gives back the values (key order included, but for the annotations' own order, which is the text's) from
 * meshinject's companion record (`meshinject.dev/original`, its repairs), for generated scrape annotations
 * (targets with and without a path, a path without `/`, blanks, the user's own port/path/scrape in any
 * spelling Prometheus reads). Without that record (a pod Istio injected itself) the targets come back in the
 * form Istio parses the same (`port:path,...`). The corpus case is read from the test data (nothing
 * third-party committed).
 */
import t from 'tap';
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../../src/index.ts';
import { corpus, needs } from '../../helpers/data.ts';
import { caseFnConfig } from '../../../scripts/conformance/runner.ts';

type Obj = Record<string, any>;

const config = (mode: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: t}\nspec: {mesh: istio, policy: enabled, resultAnnotations: false, mode: ${mode}}\n`;

const app = (annotations: ReadonlyArray<readonly [string, string]>) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      annotations:
${annotations.map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`).join('\n')}
    spec:
      containers:
      - name: web
        image: web:1
`;

const port = fc.constantFrom('8080', '9100', '9102', '3000');
const target = fc
  .tuple(port, fc.option(fc.constantFrom('/metrics', '/custom-metrics', 'stats', '/a/b'), { nil: undefined }))
  .map(([p, path]) => (path === undefined ? p : `${p}:${path}`));
const targets = fc
  .tuple(fc.array(target, { minLength: 1, maxLength: 3 }), fc.constantFrom(',', ', ', ' , '))
  .map(([list, sep]) => list.join(sep));
const userKeys = fc.subarray([
  ['prometheus.io/scrape', 'true'],
  ['prometheus.io/port', '9090'],
  ['prometheus.io/path', '/m'],
  ['prometheus.io.port', '9091'],
  ['other.example.com/team', 'payments'],
] as const);

/**
 * The same document, values and key order, but for the order of the pod's annotations: that order is the text's
 * (src/patch/status-repairs.ts `isMetadataMap`), and where scrape-targets stood among them is not recorded, so it
 * comes back after the keys uninject puts back (a known gap of the text, with the quoting; issue #37 item 3).
 */
const sameValues = (a: string, b: string): boolean => {
  const norm = (text: string): string => {
    const doc = parse(text) as Obj;
    const annos = doc.spec.template.metadata.annotations as Obj;
    doc.spec.template.metadata.annotations = Object.fromEntries(
      Object.entries(annos).sort(([x], [y]) => (x < y ? -1 : 1)),
    );
    return JSON.stringify(doc);
  };
  return norm(a) === norm(b);
};

t.test('scrape-targets and the scrape annotations come back, with their values', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(targets, userKeys, fc.nat(), (tg, keys, at) => {
      const annotations: Array<readonly [string, string]> = [...keys];
      annotations.splice(at % (annotations.length + 1), 0, ['prometheus.istio.io/scrape-targets', tg]);
      const input = app(annotations);
      const injected = run(input, { functionConfig: config('inject') });
      if (injected.exitCode !== 0) return false;
      const pod = (parse(injected.stdout) as Obj).spec.template;
      // The merge happened: scrape-targets is gone from the injected pod.
      if (pod.metadata.annotations['prometheus.istio.io/scrape-targets'] !== undefined) return false;
      const un = run(injected.stdout, { functionConfig: config('uninject') });
      runs++;
      return un.exitCode === 0 && sameValues(un.stdout, input);
    }),
    { numRuns: 60 },
  );
  t.ok(runs >= 60, `${runs} round trips`);
});

const CASE = corpus('conformance/istio-versions');

t.test(
  'an Istio-injected pod with scrape-targets (no companion record): the targets Istio parses, back',
  needs(CASE),
  async (t) => {
    const dir = `${CASE.path}/1.31.0-rc.0/cases/hello-multiport-metrics`;
    t.ok(existsSync(`${dir}/expected.yaml`), 'the 1.31 case is in the test data');
    const fnConfig = parse(caseFnConfig(dir, parse(readFileSync(`${dir}/case.yaml`, 'utf8')))) as Obj;
    fnConfig.spec = { ...fnConfig.spec, mode: 'uninject', resultAnnotations: false };
    const out = run(readFileSync(`${dir}/expected.yaml`, 'utf8'), { functionConfig: JSON.stringify(fnConfig) });
    t.equal(out.exitCode, 0, 'uninjected');
    const want = (parse(readFileSync(`${dir}/input.yaml`, 'utf8')) as Obj).metadata.annotations;
    t.same(
      (parseAllDocuments(out.stdout)[0]?.toJS() as Obj | undefined)?.metadata.annotations,
      want,
      "the input's scrape annotations, values exact",
    );
  },
);
