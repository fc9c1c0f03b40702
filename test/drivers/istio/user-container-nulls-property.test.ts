/**
 * A container of the user's that Istio merges over its template's (Istio `reapplyOverwrittenContainers`,
 * `applyContainer`: the user's app containers under the `grpc-agent` template, a user's own `istio-proxy`) is
 * merged as Go's `json.Marshal` writes it, so a field written with no value (`env:`, `volumeMounts: ~`, a null
 * inside `securityContext`) overrides nothing. Found by fuzzing (2026-11-29): a container with `env:` and no
 * value lost the `grpc-agent` template's env (Go decodes the null as a nil list and leaves it out), and the second
 * run then wrote it, so the first run's output was not a fixed point and uninject refused it.
 *
 * Generated pods (grpc-agent or the sidecar template; one to three containers, some with null fields, maybe a
 * user `istio-proxy`): injected, injected again byte for byte, uninjected byte for byte; under grpc-agent every
 * app container gets the template's env whatever its own `env` holds.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { run } from '../../../src/index.ts';
import { ROUND_TRIP_DRIVERS } from '../../helpers/round-trip-drivers.ts';

const NULLS = ['', ' ~', ' null'];
const field = fc.constantFrom(
  (n: string) => `    env:${n}\n`,
  (n: string) => `    volumeMounts:${n}\n`,
  (n: string) => `    ports:${n}\n`,
  (n: string) => `    securityContext:\n      runAsUser:${n}\n`,
  (n: string) => `    resources:\n      limits:${n}\n`,
  (n: string) => `    command: [sh]\n    args:${n}\n`,
);
const container = (name: string) =>
  fc
    .record({ fields: fc.uniqueArray(field, { maxLength: 2 }), spelling: fc.constantFrom(...NULLS) })
    .map(({ fields, spelling }) => `  - name: ${name}\n    image: busybox\n${fields.map((f) => f(spelling)).join('')}`);

const pod = fc
  .record({
    grpc: fc.boolean(),
    apps: fc.array(fc.constantFrom('app', 'c1', 'c2'), { minLength: 1, maxLength: 3 }).map((a) => [...new Set(a)]),
    userProxy: fc.boolean(),
  })
  .chain(({ grpc, apps, userProxy }) =>
    fc.tuple(...apps.map(container), userProxy ? container('istio-proxy') : fc.constant('')).map((cs) => ({
      grpc,
      apps,
      text:
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n' +
        (grpc ? '  annotations:\n    inject.istio.io/templates: grpc-agent\n' : '') +
        `spec:\n  containers:\n${cs.join('')}`,
    })),
  );

t.test("a user's container with null fields, merged over Istio's template", async (t) => {
  const driver = ROUND_TRIP_DRIVERS.istio;
  if (!driver) throw new Error('no istio driver');
  const mode = (m: string) => ({ functionConfig: `${driver.config}  mode: ${m}\n` });
  let failure: string | undefined;
  let grpcPods = 0;
  fc.check(
    fc.property(pod, ({ grpc, apps, text }) => {
      const first = run(text, mode('inject'));
      if (first.exitCode !== 0) failure = `inject (exit ${first.exitCode}) of:\n${text}\n${first.stderr}`;
      else {
        const again = run(first.stdout, mode('inject'));
        const back = run(first.stdout, mode('uninject'));
        if (again.exitCode !== 0 || again.stdout !== first.stdout)
          failure = `injecting again (exit ${again.exitCode}) of:\n${first.stdout}\ngave:\n${again.stdout}`;
        else if (back.exitCode !== 0 || back.stdout !== text)
          failure = `uninject (exit ${back.exitCode}) of:\n${first.stdout}\ngave:\n${back.stdout}${back.stderr}`;
        else if (grpc) {
          grpcPods++;
          const containers = parse(first.stdout).spec.containers as Array<{
            name: string;
            env?: Array<{ name: string }>;
          }>;
          for (const name of apps) {
            const env = containers.find((c) => c.name === name)?.env ?? [];
            if (!env.some((e) => e.name === 'GRPC_XDS_BOOTSTRAP'))
              failure = `${name} lacks the grpc-agent env in:\n${first.stdout}\nfrom:\n${text}`;
          }
        }
      }
      return failure === undefined;
    }),
    { numRuns: 40 },
  );
  t.equal(failure, undefined, 'every generated pod');
  t.ok(grpcPods >= 10, `grpc-agent pods: ${grpcPods} of 40`);
});
