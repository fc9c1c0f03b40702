// End to end: the exact ResourceLists kpt and kustomize sent an exec/container function
// (krm-inputs of the test data, see its README; test/helpers/data.ts) piped through the real binary with LOG_TO_STDERR=true.
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  commentCounts,
  commentDiff,
  get,
  idOf,
  injectionProblems,
  makeTempDir,
  runCli,
  splitItems,
  WORKLOAD_KINDS,
  type Obj,
} from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const KRM_INPUTS = corpus('krm-inputs');
const DIR = KRM_INPUTS.path ?? '';
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');

/** What each fixture's own functionConfig means to meshinject. */
const FIXTURES: Array<{ file: string; config: 'defaults' | 'foreign'; namespace?: string }> = [
  { file: 'kpt-eval-noargs.yaml', config: 'defaults' }, // kpt's placeholder ConfigMap function-input, data: {}
  { file: 'kpt-eval-stdin.yaml', config: 'defaults' },
  { file: 'kpt-render-validator.yaml', config: 'defaults' }, // no functionConfig at all
  { file: 'kpt-eval-kvargs.yaml', config: 'foreign' }, // data: {key, value} meant for another function
  { file: 'kpt-eval-fnconfig.yaml', config: 'foreign' },
  { file: 'kpt-render-configmap.yaml', config: 'foreign' },
  { file: 'kpt-render-configpath.yaml', config: 'foreign' },
  { file: 'kustomize-container.yaml', config: 'foreign', namespace: 'shop' }, // data: {hello: world}
];

const SIDECAR_INJECTION = `functionConfig:
  apiVersion: meshinject.dev/v1alpha1
  kind: SidecarInjection
  metadata:
    name: mesh
    annotations:
      config.kubernetes.io/local-config: "true"
  spec:
    mesh: istio
    policy: enabled
`;

/** The fixture as the runner would send it with meshinject's own config: functionConfig replaced. */
function withOwnConfig(text: string): string {
  const at = text.search(/^functionConfig:/m);
  return at < 0 ? `${text}${SIDECAR_INJECTION}` : `${text.slice(0, at)}${SIDECAR_INJECTION}`;
}

/** Internal/kpt/kustomize annotation lines of an item chunk, as text. */
function runnerAnnotationLines(chunk: string): string[] {
  return chunk
    .split('\n')
    .filter((l) => /^\s+(internal\.)?config\.(kubernetes\.io|k8s\.io)\/|^\s+kustomize\.config\.k8s\.io\//.test(l));
}

/** The text up to `functionConfig:`/`results:` (the items), for comment counts. */
function itemsBlock(text: string): string {
  const end = text.search(/^(functionConfig|results):/m);
  return end < 0 ? text : text.slice(0, end);
}

function checkInjectedList(t: Test, name: string, input: string, output: string, namespace?: string) {
  const inp = splitItems(input);
  const out = splitItems(output);
  t.equal(out.items.length, inp.items.length, `${name}: same number of items`);
  let workloads = 0;
  inp.items.forEach((itemIn, i) => {
    const itemOut = out.items[i]!;
    const id = idOf(itemIn.value);
    const local = get(itemIn.value, 'metadata', 'annotations', 'config.kubernetes.io/local-config') === 'true';
    if (!WORKLOAD_KINDS.has(String(itemIn.value.kind)) || local) {
      t.equal(itemOut.text, itemIn.text, `${name}: ${id} byte for byte`);
      return;
    }
    workloads++;
    t.same(injectionProblems(itemOut.value, itemIn.value), [], `${name}: ${id} injected and valid`);
    t.equal(get(itemOut.value, 'metadata', 'namespace'), namespace, `${name}: ${id} namespace not added`);
    const lost = runnerAnnotationLines(itemIn.text).filter((l) => !itemOut.text.includes(`${l}\n`));
    t.same(lost, [], `${name}: ${id} runner annotations kept verbatim (ids, path, index: hazard G7)`);
  });
  t.equal(workloads, 2, `${name}: the Deployment and the StatefulSet`);
  t.same(
    commentDiff(commentCounts(itemsBlock(input)), commentCounts(itemsBlock(output))),
    [],
    `${name}: item comments kept exactly once`,
  );
}

for (const fx of FIXTURES) {
  t.test(`${fx.file} with meshinject's own functionConfig`, needs(KRM_INPUTS), async (t) => {
    const input = withOwnConfig(read(fx.file));
    const r = runCli([], { input, env: { LOG_TO_STDERR: 'true' } });
    t.equal(r.status, 0, r.stderr);
    checkInjectedList(t, fx.file, input, r.stdout, fx.namespace);
    const out = splitItems(r.stdout);
    t.ok(out.rest.includes(SIDECAR_INJECTION), 'functionConfig written back byte for byte');
    const results = (parse(r.stdout) as Obj).results as Obj[];
    const injected = results.filter((x) => get(x, 'tags', 'meshinject.dev/outcome') === 'injected');
    t.same(
      injected.map((x) => `${String(get(x, 'resourceRef', 'kind'))}/${String(get(x, 'resourceRef', 'name'))}`).sort(),
      ['Deployment/frontend', 'StatefulSet/db'],
    );
    for (const x of injected) {
      t.equal(x.severity, 'info');
      if (fx.file.startsWith('kpt-') && fx.file !== 'kpt-eval-stdin.yaml')
        t.match(get(x, 'file', 'path'), /^(deployment|multi)\.yaml$/, 'file.path from the kpt path annotation');
      else t.equal(get(x, 'file'), undefined, 'no file without a path annotation');
    }
    // stderr: one line per result, then the summary.
    const lines = r.stderr.trimEnd().split('\n');
    const ns = fx.namespace ? `${fx.namespace}/` : '';
    t.match(
      lines.find((l) => l.includes('Deployment/')),
      new RegExp(`^\\[info\\] apps/v1/Deployment/${ns}frontend: injected \\(istio, revision default\\)`),
    );
    t.match(
      lines.find((l) => l.includes('StatefulSet/')),
      new RegExp(`^\\[info\\] apps/v1/StatefulSet/${ns}db: injected \\(istio, revision default\\)`),
    );
    t.equal(lines.at(-1), 'meshinject: 2 injected, 0 skipped, 0 error(s)');
    const again = runCli([], { input: r.stdout });
    t.equal(again.status, 0);
    t.equal(again.stdout, r.stdout, 'second run (results replaced, not appended): identical bytes');
  });

  t.test(`${fx.file} as recorded`, needs(KRM_INPUTS), async (t) => {
    const input = read(fx.file);
    const r = runCli([], { input, env: { LOG_TO_STDERR: 'true' } });
    if (fx.config === 'defaults') {
      t.equal(r.status, 0, `defaults apply: ${r.stderr}`);
      checkInjectedList(t, fx.file, input, r.stdout, fx.namespace);
      t.match(r.stderr, /meshinject: 2 injected, 0 skipped, 0 error\(s\)\n$/);
      return;
    }
    // A ConfigMap with keys meshinject does not know: an error, and nothing is changed.
    t.equal(r.status, 1, 'exit 1: the functionConfig is not a meshinject config');
    const inp = splitItems(input);
    const out = splitItems(r.stdout);
    t.same(
      out.items.map((x) => x.text),
      inp.items.map((x) => x.text),
      'items unchanged byte for byte',
    );
    const results = (parse(r.stdout) as Obj).results as Obj[];
    const errors = results.filter((x) => x.severity === 'error');
    t.ok(errors.length > 0, 'error result(s)');
    const key = fx.file === 'kustomize-container.yaml' ? 'hello' : 'key';
    t.ok(
      errors.some((x) => `${String(x.message)} ${String(get(x, 'field', 'path'))}`.includes(key)),
      `an error names data.${key}`,
    );
    t.match(r.stderr, new RegExp(`^\\[error\\].*${key}`, 'm'), 'the error on stderr');
  });
}

t.test('--config overrides the ResourceList functionConfig (kpt-eval-fnconfig.yaml)', needs(KRM_INPUTS), async (t) => {
  const tmp = makeTempDir('fixtures');
  t.teardown(tmp.cleanup);
  const cfg = join(tmp.dir, 'injection.yaml');
  writeFileSync(cfg, SIDECAR_INJECTION.replace(/^functionConfig:\n/, '').replace(/^ {2}/gm, ''));
  const input = read('kpt-eval-fnconfig.yaml');
  const r = runCli(['--config', cfg], { input });
  t.equal(r.status, 0, r.stderr);
  checkInjectedList(t, 'kpt-eval-fnconfig.yaml', input, r.stdout);
  t.ok(
    splitItems(r.stdout).rest.includes(input.slice(input.search(/^functionConfig:/m))),
    'input functionConfig echoed unchanged',
  );
});
