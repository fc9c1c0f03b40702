// End to end: the other input forms a user pipes in (a `kind: List` as `kubectl get -o yaml|json`
// writes it, JSON, CRLF files, several files at once) and re-running over injected output with a new
// revision. Bookinfo is the payload throughout.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { get, injectionProblems, makeTempDir, runCli, splitStream, type Obj } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const BOOKINFO_DATA = corpus('real-world/bookinfo/bookinfo.yaml');
const BOUTIQUE = corpus('real-world/online-boutique');
const BOOKINFO_PATH = BOOKINFO_DATA.path ?? '';
const BOOKINFO = BOOKINFO_DATA.path ? readFileSync(BOOKINFO_DATA.path, 'utf8') : '';
const CONFIG = 'test/fixtures/real-world/bookinfo/injection.yaml';
const DOCS = parseAllDocuments(BOOKINFO)
  .map((d) => d.toJS() as Obj | null)
  .filter((x): x is Obj => x !== null);
const DEPLOYMENTS = DOCS.filter((d) => d.kind === 'Deployment').length;

function proxies(list: Obj[]): number {
  return list.filter((o) =>
    ((get(o, 'spec', 'template', 'spec', 'containers') ?? []) as Obj[]).some((c) => c.name === 'istio-proxy'),
  ).length;
}

t.test('a YAML kind: List (kubectl get -o yaml): items injected, the List kept', needs(BOOKINFO_DATA), async (t) => {
  const input = stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: DOCS });
  const r = runCli(['--config', CONFIG], { input });
  t.equal(r.status, 0, r.stderr);
  const out = parse(r.stdout) as Obj;
  t.equal(out.kind, 'List');
  const items = out.items as Obj[];
  t.equal(items.length, DOCS.length);
  items.forEach((item, i) => {
    if (item.kind === 'Deployment') t.same(injectionProblems(item, DOCS[i]!), [], `item ${i} injected`);
    else t.same(item, DOCS[i], `item ${i} unchanged`);
  });
  t.equal(out.results, undefined, 'no results key in a List');
});

t.test('a JSON List (kubectl get -o json): items injected, output still JSON', needs(BOOKINFO_DATA), async (t) => {
  const input = `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: DOCS }, null, 4)}\n`;
  const r = runCli(['--config', CONFIG], { input, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  const out = parse(r.stdout) as Obj;
  t.equal(proxies((out.items ?? []) as Obj[]), DEPLOYMENTS, 'every Deployment injected');
  t.match(r.stderr, new RegExp(`meshinject: ${DEPLOYMENTS} injected`), 'summary counts the workloads');
  t.doesNotThrow(() => JSON.parse(r.stdout), 'output parses as JSON');
});

t.test('a single JSON Deployment: injected, output still JSON', needs(BOOKINFO_DATA), async (t) => {
  const dep = DOCS.find((d) => d.kind === 'Deployment')!;
  const r = runCli(['--config', CONFIG], { input: `${JSON.stringify(dep, null, 2)}\n` });
  t.equal(r.status, 0, r.stderr);
  t.same(injectionProblems(parse(r.stdout) as Obj, dep), [], 'injected (as YAML)');
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  t.ok(json !== undefined, 'output parses as JSON (kubectl reads a stream starting with `{` as JSON)');
});

t.test('CRLF line endings are kept, untouched documents byte for byte', needs(BOOKINFO_DATA), async (t) => {
  const input = BOOKINFO.replace(/\n/g, '\r\n');
  const r = runCli(['--config', CONFIG], { input });
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stdout, /[^\r]\n/, 'every line ends with CRLF');
  const docsIn = input.split(/^---\r\n/m);
  const docsOut = r.stdout.split(/^---\r\n/m);
  t.equal(docsOut.length, docsIn.length);
  docsIn.forEach((d, i) => {
    if (!/^kind: Deployment\r$/m.test(d)) t.equal(docsOut[i], d, `document ${i} unchanged`);
  });
  t.equal(proxies(docsOut.map((d) => parse(d) as Obj).filter(Boolean)), DEPLOYMENTS);
});

t.test(
  'several files in one call: one stream, each file as if run alone',
  needs(BOOKINFO_DATA, BOUTIQUE),
  async (t) => {
    const boutique = `${BOUTIQUE.path}/frontend.yaml`;
    const both = runCli(['--config', CONFIG, BOOKINFO_PATH, boutique]);
    const one = runCli(['--config', CONFIG, BOOKINFO_PATH]);
    const two = runCli(['--config', CONFIG, boutique]);
    t.equal(both.status, 0, both.stderr);
    t.ok(both.stdout.startsWith(one.stdout), 'first file first');
    t.ok(both.stdout.endsWith(two.stdout), 'second file after it');
    const docs = splitStream(both.stdout).filter((d) => d.trim() !== '');
    t.equal(
      docs.length,
      splitStream(one.stdout).filter((d) => d.trim() !== '').length +
        splitStream(two.stdout).filter((d) => d.trim() !== '').length,
      'no document merged or lost at the seam',
    );
  },
);

t.test('re-running injected output with a new revision updates it in place', needs(BOOKINFO_DATA), async (t) => {
  const first = runCli(['--config', CONFIG, BOOKINFO_PATH]);
  const canary = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  istio:\n    revision: canary\n';
  const { dir, cleanup } = makeTempDir('forms');
  t.teardown(cleanup);
  writeFileSync(`${dir}/canary.yaml`, canary);
  const second = runCli(['--config', `${dir}/canary.yaml`], { input: first.stdout });
  t.equal(second.status, 0, second.stderr);
  const docsIn = splitStream(BOOKINFO);
  splitStream(second.stdout).forEach((d, i) => {
    const o = parse(d) as Obj | null;
    if (o?.kind !== 'Deployment') return;
    t.same(
      injectionProblems(o, parse(docsIn[i]!) as Obj, { annotation: 'injected (istio, revision canary)' }),
      [],
      `${String(get(o, 'metadata', 'name'))}`,
    );
    const containers = get(o, 'spec', 'template', 'spec', 'containers') as Obj[];
    t.equal(containers.filter((c) => c.name === 'istio-proxy').length, 1, 'one proxy, not two');
    t.equal(get(o, 'spec', 'template', 'metadata', 'annotations', 'istio.io/rev'), 'canary');
  });
});
