// End to end: meshinject as a kustomize *container* transformer over the podinfo production overlay,
// through the real `kubectl kustomize --enable-alpha-plugins`. There is no Docker here, so a stand-in
// `docker` executable on PATH runs bin/meshinject.js instead of the image (the technique of
// krm-ecosystem.md §7.3); kubectl's kustomize cannot run exec functions at all (hazard G8).
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { BIN, idOf, injectionProblems, makeTempDir, splitStream, WORKLOAD_KINDS, type Obj } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const PODINFO = corpus('real-world/podinfo');
const OVERLAY = `${PODINFO.path}/overlays/production`;

function setup(dir: string, spec: string): { overlay: string; env: NodeJS.ProcessEnv; argvLog: string } {
  const bin = join(dir, 'bin');
  const overlay = join(dir, 'overlay');
  const argvLog = join(dir, 'docker-argv.txt');
  mkdirSync(bin);
  mkdirSync(overlay);
  writeFileSync(
    join(bin, 'docker'),
    `#!/bin/sh\n# stand-in for docker run ... IMAGE: record the arguments, run meshinject\nprintf '%s\\n' "$*" > '${argvLog}'\nexec '${process.execPath}' '${BIN}'\n`,
    { mode: 0o755 },
  );
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    `resources:\n  - ${relative(overlay, OVERLAY)}\ntransformers:\n  - injection.yaml\n`,
  );
  writeFileSync(
    join(overlay, 'injection.yaml'),
    `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: mesh\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/meshinject:dev\nspec:\n${spec}`,
  );
  return { overlay, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` }, argvLog };
}

function kustomize(dir: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync('kubectl', ['kustomize', '--enable-alpha-plugins', dir], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  return r;
}

t.test('podinfo production + meshinject as a kustomize container transformer', needs(PODINFO), async (t) => {
  const tmp = makeTempDir('kustomize');
  t.teardown(tmp.cleanup);
  const { overlay, env, argvLog } = setup(tmp.dir, '  mesh: istio\n  nativeSidecars: true\n');
  const r = kustomize(overlay, env);
  t.equal(r.status, 0, r.stderr);
  t.match(
    readFileSync(argvLog, 'utf8'),
    /-e LOG_TO_STDERR=true .*example\.com\/meshinject:dev/,
    'kustomize ran the "container" with LOG_TO_STDERR=true',
  );
  const plain = splitStream(readFileSync(`${PODINFO.path}/production.rendered.yaml`, 'utf8'));
  const out = splitStream(r.stdout);
  t.equal(out.length, plain.length, 'same resources as the overlay alone');
  let workloads = 0;
  plain.forEach((textIn, i) => {
    const objIn = parse(textIn) as Obj;
    const objOut = parse(out[i] ?? '') as Obj;
    t.equal(idOf(objOut), idOf(objIn), 'same order');
    t.notMatch(
      out[i],
      /internal\.config\.kubernetes\.io|config\.k8s\.io\/id|kustomize\.config\.k8s\.io\/id/,
      `${idOf(objIn)}: no runner annotations leaked`,
    );
    if (WORKLOAD_KINDS.has(String(objIn.kind))) {
      workloads++;
      t.same(injectionProblems(objOut, objIn, { native: true }), [], `${idOf(objIn)} injected and valid`);
    } else {
      t.equal(out[i], textIn, `${idOf(objIn)} unchanged`);
    }
  });
  t.equal(workloads, 9, 'all nine workloads (no selector in this config)');
});

t.test('kustomize with a bad meshinject config fails and shows the message', needs(PODINFO), async (t) => {
  const tmp = makeTempDir('kustomize-bad');
  t.teardown(tmp.cleanup);
  const { overlay, env } = setup(tmp.dir, '  mesh: istio\n  policy: sometimes\n');
  const r = kustomize(overlay, env);
  t.not(r.status, 0, 'kubectl kustomize fails (exit code is the only signal: hazard G3)');
  t.equal(r.stdout, '', 'no half-injected output');
  t.match(r.stderr, /spec\.policy/, "meshinject's stderr line is shown (hazard G13)");
});
