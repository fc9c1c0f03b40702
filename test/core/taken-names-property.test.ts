/**
 * A user's container or init container named like one a mesh injects is never lost without a word. Found by
 * fuzzing (2026-11-29): Kuma's driver took a user's `kuma-sidecar` for its own (replaced it on injecting, removed
 * it on uninjecting) and added its `kuma-init` beside a user's of that name (a pod the API server rejects). Kuma's
 * driver now refuses such a pod, as OSM's and FSM's did (src/drivers/kit/taken-names.ts); Istio's keeps the user's
 * container as an override and gives it back.
 *
 * Linkerd's driver is left out: it does what `linkerd inject` does, whose silent uninject pass removes
 * `linkerd-proxy` and `linkerd-init` by name before injecting (src/drivers/linkerd/inject.ts).
 *
 * For every other driver (test/helpers/round-trip-drivers.ts) and a Deployment whose containers or init containers
 * hold one named like a container some mesh injects, with an image of the user's own (fixed seed,
 * test/setup/property-seed.mjs): either injecting exits 0, the output still holds the user's image, and
 * uninjecting gives back the input byte for byte; or injecting exits 1 with an error that names the container.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';
import { ROUND_TRIP_DRIVERS } from '../helpers/round-trip-drivers.ts';

const NAMES = [
  'istio-proxy',
  'istio-init',
  'istio-validation',
  'kuma-sidecar',
  'kuma-init',
  'kuma-validation',
  'envoy',
  'osm-init',
  'osm-healthcheck',
  'fsm-init',
  'sidecar',
];
const IMAGE = 'example/users-own:1.0';

const workload = fc.record({ name: fc.constantFrom(...NAMES), init: fc.boolean(), first: fc.boolean() }).map((w) => {
  const app = ['      - name: web', '        image: example/web:1.0'];
  const own = [`      - name: ${w.name}`, `        image: ${IMAGE}`];
  const lists = w.init
    ? ['      initContainers:', ...own, '      containers:', ...app]
    : ['      containers:', ...(w.first ? [...own, ...app] : [...app, ...own])];
  const lines = ['apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: web', '  namespace: shop'];
  lines.push('spec:', '  template:', '    spec:', ...lists);
  return { name: w.name, text: `${lines.join('\n')}\n` };
});

for (const [driverName, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
  if (driverName === 'linkerd') continue;
  t.test(`${driverName}: a user's container named like an injected one is kept or refused by name`, async (t) => {
    const mode = (m: string) => ({ functionConfig: `${driver.config}  mode: ${m}\n` });
    let failure: string | undefined;
    fc.check(
      fc.property(workload, ({ name, text }) => {
        const input = `${text}${driver.extra}`;
        const injected = run(input, mode('inject'));
        const messages = injected.results.map((r) => r.message).join('\n');
        if (injected.exitCode === 1) {
          if (!messages.includes(`"${name}"`)) failure = `the refusal does not name "${name}":\n${messages}`;
        } else if (injected.exitCode !== 0 || !injected.stdout.includes(IMAGE)) {
          failure = `inject (exit ${injected.exitCode}) lost "${name}":\n${input}\ngave:\n${injected.stdout}`;
        } else {
          const back = run(injected.stdout, mode('uninject'));
          if (back.exitCode !== 0 || back.stdout !== input)
            failure = `uninject (exit ${back.exitCode}) of:\n${injected.stdout}\ngave:\n${back.stdout}`;
        }
        return failure === undefined;
      }),
      { numRuns: 30 },
    );
    t.equal(failure, undefined, 'every generated workload');
  });
}
