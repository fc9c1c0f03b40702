/**
 * Issue #35 item 3: the pod → namespace decision skeleton of the driver kit (src/drivers/kit/namespace-decision.ts)
 * decides for Linkerd (`linkerd.io/inject` annotation) and Kuma (`kuma.io/sidecar-injection` label) as their
 * injectors do: the pod's value first, else the namespace's as the default in place of the policy, else the
 * policy; a value the mesh refuses is an error result, and Kuma reads the namespace's label only when the pod's
 * does not decide (precheck.go `needToInject`), while Linkerd checks both first (pkg/inject/report.go). Generated
 * pod and namespace values, run through `run()`: the result a user sees (its reason, outcome or error).
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../../src/run.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

interface Mesh {
  name: 'linkerd' | 'kuma';
  source: 'labels' | 'annotations';
  key: string;
  values: readonly string[];
  config: string;
  /** The reason part and the inject/skip of a valid value; undefined for a value the mesh refuses. */
  read(v: string): { word: string; inject: boolean } | undefined;
  /** The policy's reason when neither decides (the driver's default policy). */
  policy: string;
  /** Whether the namespace's value is checked even when the pod's decides. */
  checksNamespaceFirst: boolean;
}

const MESHES: readonly Mesh[] = [
  {
    name: 'linkerd',
    source: 'annotations',
    key: 'linkerd.io/inject',
    values: ['enabled', 'ingress', 'disabled', 'bogus'],
    config: '',
    read: (v) => (['enabled', 'ingress', 'disabled'].includes(v) ? { word: v, inject: v !== 'disabled' } : undefined),
    policy: 'policy-enabled',
    checksNamespaceFirst: true,
  },
  {
    name: 'kuma',
    source: 'labels',
    key: 'kuma.io/sidecar-injection',
    values: ['enabled', 'true', 'yes', 'disabled', 'false', 'no', 'maybe'],
    config: '  kuma:\n    controlPlane:\n      caCert: "x"\n',
    read: (v) =>
      ['enabled', 'true', 'yes'].includes(v)
        ? { word: 'enabled', inject: true }
        : ['disabled', 'false', 'no'].includes(v)
          ? { word: 'disabled', inject: false }
          : undefined,
    policy: 'policy-disabled',
    checksNamespaceFirst: false,
  },
];

/** What the user sees for one workload: `error`, or `<outcome> <reason>`. */
function decide(mesh: Mesh, pod: string | undefined, ns: string | undefined, nsKnown: boolean): string {
  const meta = (v: string | undefined) => (v === undefined ? '{}' : `{${mesh.key}: "${v}"}`);
  const nsDoc = nsKnown
    ? `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  ${mesh.source}: ${meta(ns)}\n---\n`
    : '';
  const dep = `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    metadata:\n      ${mesh.source}: ${meta(pod)}\n    spec:\n      containers: [{name: web, image: web:1}]\n`;
  const config = `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n  mesh: ${mesh.name}\n${mesh.config}`;
  const results = run(`${nsDoc}${dep}`, { functionConfig: config }).results.filter(
    (r) => r.resourceRef?.kind === 'Deployment',
  );
  const r = results[0];
  if (results.length !== 1 || r === undefined) return `${results.length} results`;
  if (r.severity === 'error') return 'error';
  return `${r.tags?.['meshinject.dev/outcome']} ${r.tags?.['meshinject.dev/reason']}`;
}

/** The rule, as the meshes' sources state it (see the file comment). */
function expected(mesh: Mesh, pod: string | undefined, ns: string | undefined): string {
  const podSays = pod === undefined ? undefined : mesh.read(pod);
  const nsSays = ns === undefined ? undefined : mesh.read(ns);
  if (mesh.checksNamespaceFirst && ns !== undefined && nsSays === undefined) return 'error';
  if (pod !== undefined && podSays === undefined) return 'error';
  const prefix = mesh.source === 'labels' ? 'label' : 'annotation';
  if (podSays) return `${podSays.inject ? 'injected' : 'skipped'} pod-${prefix}-${podSays.word}`;
  if (ns !== undefined && nsSays === undefined) return 'error';
  if (nsSays) return `${nsSays.inject ? 'injected' : 'skipped'} namespace-${prefix}-${nsSays.word}`;
  return mesh.policy === 'policy-enabled' ? 'injected policy-enabled' : 'skipped policy-disabled';
}

for (const mesh of MESHES) {
  t.test(`${mesh.name}: the pod's value, else the namespace's, else the policy`, async (t) => {
    const value = fc.option(fc.constantFrom(...mesh.values), { nil: undefined });
    fc.assert(
      fc.property(value, value, fc.boolean(), (pod, ns, nsKnown) => {
        const nsValue = nsKnown ? ns : undefined;
        t.equal(decide(mesh, pod, nsValue, nsKnown), expected(mesh, pod, nsValue), `pod ${pod}, namespace ${nsValue}`);
      }),
      { numRuns: RUNS },
    );
  });
}

t.test("Kuma does not read the namespace's label when the pod's decides; Linkerd refuses it first", async (t) => {
  const [linkerd, kuma] = MESHES;
  if (!linkerd || !kuma) throw new Error('both meshes');
  t.equal(decide(kuma, 'disabled', 'maybe', true), 'skipped pod-label-disabled');
  t.equal(decide(linkerd, 'disabled', 'bogus', true), 'error');
});
