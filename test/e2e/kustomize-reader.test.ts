/**
 * kubectl kustomize as a second reader (issue #8 oracle): an input using anchors, merge keys, flow maps
 * with comments and a legacy octal mode, and meshinject's output for it, are each built by
 * `kubectl kustomize`; what kustomize reads must be what meshinject's YAML 1.1 reading says.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { run } from '../../src/run.ts';
import { readKubernetes } from '../../src/yaml/read/readers.ts';

const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: k\nspec:\n  mesh: istio\n  resultAnnotations: false\n';

const INPUT = `apiVersion: apps/v1
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
      volumes: [{name: cfg, configMap: {name: c, defaultMode: 0644}}]
      containers:
      - <<: &defaults
          image: nginx:1.27
          ports:
          - containerPort: 8080
        name: web # the app
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
data:
  a: &v "value"
  b: *v
`;

function kustomize(stream: string): unknown[] {
  const dir = mkdtempSync(join(tmpdir(), 'meshinject-kustomize-reader-'));
  try {
    writeFileSync(join(dir, 'resources.yaml'), stream);
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n- resources.yaml\n');
    const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    const r = readKubernetes(out);
    if (!r.ok) throw new Error(r.error);
    return r.values;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function byKind(docs: unknown[]): Record<string, unknown> {
  return Object.fromEntries(docs.map((d) => [(d as { kind: string }).kind, d]));
}

let hasKubectl = true;
try {
  execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
} catch {
  hasKubectl = false;
}

t.test(
  'kubectl kustomize reads input and output as meshinject reads them',
  { skip: !hasKubectl && 'kubectl not on PATH' },
  async (t) => {
    const out = run(INPUT, { functionConfig: CONFIG });
    t.equal(out.exitCode, 0, out.stderr);
    const ours = (text: string) => {
      const r = readKubernetes(text);
      if (!r.ok) throw new Error(r.error);
      return byKind(r.values);
    };
    t.ok(
      isDeepStrictEqual(byKind(kustomize(INPUT)), ours(INPUT)),
      'kustomize reads the input as the YAML 1.1 reading does',
    );
    const built = byKind(kustomize(out.stdout));
    t.ok(isDeepStrictEqual(built, ours(out.stdout)), 'kustomize reads the output as the YAML 1.1 reading does');
    const dep = built.Deployment as {
      spec: {
        selector: unknown;
        template: {
          spec: {
            containers: Array<{ name: string; image?: string }>;
            volumes: Array<{ name: string; configMap?: { defaultMode: number } }>;
          };
        };
      };
    };
    t.same(dep.spec.selector, { matchLabels: { app: 'web' } }, 'the selector keeps its labels only');
    t.same(
      dep.spec.template.spec.containers.map((c) => c.name),
      ['web', 'istio-proxy'],
    );
    t.equal(dep.spec.template.spec.containers[0]!.image, 'nginx:1.27', 'merged container fields kept');
    t.equal(
      dep.spec.template.spec.volumes.find((v) => v.name === 'cfg')!.configMap!.defaultMode,
      420,
      'mode 0644 (420)',
    );
    t.same(built.ConfigMap, byKind(kustomize(INPUT)).ConfigMap, 'the untouched ConfigMap reads the same');
  },
);
