/**
 * The status record's repairs (src/patch/status-repairs.ts, `meshinject.dev/original` part `replaced`): the
 * repairs between any two pod-shaped values take the first to the second exactly, key order included (but for
 * the keys of the pod's labels and annotations and the pod spec's own keys, whose order the text keeps); a
 * repair whose guard no longer matches (the user changed that place after the injection) is skipped; and a
 * tampered `replaced` is refused with an error naming the annotation. The Kuma case at the end goes through
 * `run`, as a user runs it.
 */
import t from 'tap';
import fc from 'fast-check';
import { applyRepairs, diffRepairs, fingerprint, sameJson } from '../../src/patch/status-repairs.ts';
import { ORIGINAL_ANNOTATION, readOriginal } from '../../src/patch/status-record.ts';
import { run } from '../../src/index.ts';
import type { Json, JsonObject, PodTemplate } from '../../src/model.ts';
import { podJson } from '../helpers/pod-json.ts';

/** Pod-shaped JSON: a few keys that collide often, so that maps share keys in different orders. */
const { pod } = podJson(['name', 'port', 'path', 'scheme', 'httpGet', 'labels', 'a', '__proto__']);

/**
 * `pod` with its labels' and annotations' keys and the pod spec's own keys sorted: their order is the text's, not
 * the repairs' (status-repairs.ts).
 */
function metadataSorted(pod: JsonObject): JsonObject {
  const sorted = (v: Json | undefined): Json | undefined =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v;
  const meta = pod.metadata;
  if (Object.hasOwn(pod, 'spec')) pod = { ...pod, spec: sorted(pod.spec) as Json };
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return pod;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(meta))
    Object.defineProperty(out, k, {
      value: k === 'labels' || k === 'annotations' ? sorted(v) : v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return { ...pod, metadata: out };
}

t.test('applying the repairs between two values gives the second, key order included', async (t) => {
  fc.assert(
    fc.property(pod, pod, (now, want) => {
      const repairs = diffRepairs(now as JsonObject, want as JsonObject);
      const back = JSON.parse(JSON.stringify(repairs)) as typeof repairs; // as the record stores them
      return sameJson(metadataSorted(applyRepairs(now as JsonObject, back)), metadataSorted(want as JsonObject));
    }),
    { numRuns: 500 },
  );
  t.same(diffRepairs({ spec: { a: 1 } }, { spec: { a: 1 } }), [], 'no repair between equal values');
  t.not(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 }), true, 'key order counts');
});

t.test('a repair applies only where the pod still holds what uninject left there', async (t) => {
  const now = { spec: { probe: { port: 8080, path: '/' } } };
  const want = { spec: { probe: { scheme: 'HTTP', port: 'http' } } };
  const repairs = diffRepairs(now, want);
  t.same(applyRepairs(now, repairs), want, 'as uninject leaves it: repaired');
  const edited = { spec: { probe: { port: 9090, path: '/' } } };
  t.same(
    applyRepairs(edited, repairs),
    { spec: { probe: { scheme: 'HTTP', port: 9090 } } },
    "the user's port stays; the repairs of the places the user did not touch still apply",
  );
  t.equal(fingerprint(undefined), '-', 'nothing has its own guard');
});

t.test('a tampered "replaced" is refused, naming the annotation', async (t) => {
  const podWith = (replaced: unknown): PodTemplate => ({
    metadata: { annotations: { [ORIGINAL_ANNOTATION]: JSON.stringify({ replaced }) } },
    spec: {},
  });
  for (const bad of [{}, [['x']], [[['status', 'phase'], '-', 'Running']], [[[], '-', {}]], [[['spec', -1], '-']]]) {
    t.throws(
      () => readOriginal(podWith(bad), undefined),
      { message: /meshinject\.dev\/original is not a record meshinject wrote/, field: /meshinject\.dev\/original/ },
      `refused: ${JSON.stringify(bad)}`,
    );
  }
  t.same(
    readOriginal(podWith([[['spec', 'a'], '-', 1]]), undefined)?.replaced,
    [[['spec', 'a'], '-', 1]],
    'a good one reads',
  );
});

const KUMA =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: k}\nspec:\n  mesh: kuma\n  policy: enabled\n  resultAnnotations: false\n';
const INPUT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
      annotations:
        kubectl.kubernetes.io/default-container: web
    spec:
      containers:
      - name: web
        image: nginx
        ports:
        - name: http
          containerPort: 8080
        livenessProbe:
          httpGet:
            scheme: HTTP
            path: /healthz
            port: http
`;

t.test('Kuma: scheme, named port and default-container come back; an edited probe keeps the edit', async (t) => {
  const injected = run(INPUT, { functionConfig: `${KUMA}  mode: inject\n` });
  t.equal(injected.exitCode, 0, 'inject exits 0');
  t.match(injected.stdout, /meshinject\.dev\/original: .*"replaced"/, 'the record keeps what Kuma does not');
  const un = run(injected.stdout, { functionConfig: `${KUMA}  mode: uninject\n` });
  t.equal(un.stdout, INPUT, 'uninject gives back the input, byte for byte');
  // The user points the rewritten probe at another path after the injection: that probe is not put back as it was.
  const edited = injected.stdout.replace('path: /8080/healthz', 'path: /8080/livez');
  t.not(edited, injected.stdout, 'the edit applies');
  const kept = run(edited, { functionConfig: `${KUMA}  mode: uninject\n` });
  t.equal(kept.exitCode, 0, 'uninject exits 0');
  t.match(kept.stdout, /path: \/livez/, "the user's new path stays");
  t.match(kept.stdout, /kubectl\.kubernetes\.io\/default-container: web/, 'the untouched repairs still apply');
});
