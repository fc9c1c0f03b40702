// End to end: the podinfo production overlay rendered by the real `kubectl kustomize` and piped through
// the CLI with test/fixtures/real-world/podinfo/injection.yaml (namespace selector, native sidecars, a never-inject
// selector), as the former podinfo example did.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  get,
  idOf,
  injectionProblems,
  runCli,
  runTool,
  skippedProblems,
  splitStream,
  WORKLOAD_KINDS,
  type Obj,
} from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const CONFIG = 'test/fixtures/real-world/podinfo/injection.yaml';
const PODINFO = corpus('real-world/podinfo');
const RENDERED = PODINFO.path ? readFileSync(`${PODINFO.path}/production.rendered.yaml`, 'utf8') : '';
// From test/fixtures/real-world/podinfo/injection.yaml: namespace `production` carries the selected label; the cache
// Deployment matches neverInjectSelector; everything else that has a pod template is injected.
const INJECTED = [
  'Deployment/production/backend',
  'Deployment/production/database-replica',
  'Deployment/production/frontend',
  'StatefulSet/production/database-primary',
  'CronJob/production/backup-daily',
  'CronJob/production/rollup-daily',
  'CronJob/production/rollup-weekly',
  'CronJob/production/warm-cache',
];
const SKIPPED = ['Deployment/production/cache'];

function kustomize(overlay: string): string {
  const r = runTool('kubectl', ['kustomize', `${PODINFO.path}/overlays/${overlay}`]);
  if (r.status !== 0) throw new Error(`kubectl kustomize ${overlay}: ${r.stderr}`);
  return r.stdout;
}

t.test('podinfo production overlay: kubectl kustomize | meshinject', needs(PODINFO), async (t) => {
  const input = kustomize('production');
  t.equal(input, RENDERED, 'kubectl kustomize output equals production.rendered.yaml');
  const r = runCli(['--config', CONFIG], { input });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  const docsIn = splitStream(input);
  const docsOut = splitStream(r.stdout);
  t.equal(docsOut.length, docsIn.length, 'same documents');
  const injected: string[] = [];
  const skipped: string[] = [];
  const kinds = new Set<string>();
  docsIn.forEach((textIn, i) => {
    const objIn = parse(textIn) as Obj;
    const objOut = parse(docsOut[i] ?? '') as Obj;
    const id = idOf(objIn);
    t.equal(idOf(objOut), id, 'order kept');
    if (!WORKLOAD_KINDS.has(String(objIn.kind))) {
      kinds.add(String(objIn.kind));
      t.equal(docsOut[i], textIn, `${id} unchanged byte for byte`);
    } else if (INJECTED.includes(id)) {
      t.same(injectionProblems(objOut, objIn, { native: true }), [], `${id} injected as a native sidecar, valid`);
      injected.push(id);
    } else {
      t.same(
        skippedProblems(objOut, { reason: /^skipped \(never-inject-selector\)$/ }),
        [],
        `${id} skipped by neverInjectSelector`,
      );
      skipped.push(id);
    }
  });
  t.same(injected.sort(), [...INJECTED].sort(), 'every selected workload injected');
  t.same(skipped, SKIPPED);
  t.same(
    [...kinds].sort(),
    ['ConfigMap', 'HorizontalPodAutoscaler', 'Namespace', 'PersistentVolumeClaim', 'Service', 'ServiceAccount'],
    'the untouched kinds were all seen',
  );

  const again = runCli(['--config', CONFIG], { input: r.stdout });
  t.equal(again.status, 0);
  t.equal(again.stdout, r.stdout, 'second run: identical bytes');
});

t.test('podinfo: a CronJob keeps its job semantics with a native sidecar', needs(PODINFO), async (t) => {
  const r = runCli(['--config', CONFIG], { input: RENDERED });
  const cron = splitStream(r.stdout)
    .map((d) => parse(d) as Obj)
    .find((o) => idOf(o) === 'CronJob/production/backup-daily')!;
  const pod = get(cron, 'spec', 'jobTemplate', 'spec', 'template', 'spec') as Obj;
  t.equal(pod.restartPolicy, 'Never', 'restartPolicy of the job pod unchanged');
  t.same(
    (pod.containers as Obj[]).map((c) => c.name),
    ['backup'],
    'no proxy among the regular containers',
  );
  t.equal((pod.initContainers as Obj[]).find((c) => c.name === 'istio-proxy')?.restartPolicy, 'Always');
});

t.test('podinfo staging overlay: the production-only namespaceSelector injects nothing', needs(PODINFO), async (t) => {
  const input = kustomize('staging');
  const r = runCli(['--config', CONFIG], { input, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  const docsIn = splitStream(input);
  const docsOut = splitStream(r.stdout);
  let workloads = 0;
  docsIn.forEach((textIn, i) => {
    const objIn = parse(textIn) as Obj;
    if (!WORKLOAD_KINDS.has(String(objIn.kind))) {
      t.equal(docsOut[i], textIn, `${idOf(objIn)} unchanged`);
      return;
    }
    workloads++;
    t.same(
      skippedProblems(parse(docsOut[i] ?? '') as Obj, { reason: /^skipped \(namespace-not-selected\)$/ }),
      [],
      `${idOf(objIn)} skipped for its namespace`,
    );
  });
  t.equal(workloads, INJECTED.length + SKIPPED.length, 'all nine workloads considered');
  t.match(r.stderr, new RegExp(`meshinject: 0 injected, ${workloads} skipped, 0 error\\(s\\)\\n$`));
});
