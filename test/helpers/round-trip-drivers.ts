/**
 * The drivers of the generated inject-then-uninject tests (test/core/uninject-roundtrip-property.test.ts,
 * test/core/uninject-source-texts-property.test.ts): each driver's functionConfig (policy enabled,
 * `resultAnnotations: false`, without `mode`: the test appends it) and what the input stream needs besides the
 * generated Deployment (namespace `shop`; OSM and FSM monitor it; the custom driver's templates).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { Test } from 'tap';
import { run } from '../../src/index.ts';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const head = (mesh: string, extra = '') =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: prop}\nspec:\n  mesh: ${mesh}\n  policy: enabled\n  resultAnnotations: false\n${extra}`;
const monitored = (label: string) => `  namespaces:\n  - name: shop\n    labels: {${label}}\n`;
const TEMPLATES = readFileSync(`${ROOT}examples/custom/log-shipper-templates.yaml`, 'utf8');

/** Driver name → its functionConfig (no `mode`) and the documents the input stream needs besides the Deployment. */
export const ROUND_TRIP_DRIVERS: Record<string, { config: string; extra: string }> = {
  istio: { config: head('istio'), extra: '' },
  'istio ambient': { config: head('istio', '  istio:\n    ambient: prefer\n'), extra: '' },
  linkerd: { config: head('linkerd'), extra: '' },
  osm: { config: head('osm', monitored('openservicemesh.io/monitored-by: osm')), extra: '' },
  fsm: { config: head('fsm', monitored('flomesh.io/monitored-by: fsm')), extra: '' },
  kuma: { config: head('kuma'), extra: '' },
  custom: {
    config: readFileSync(`${ROOT}examples/custom/injection.yaml`, 'utf8')
      .replace(/\n {2}namespaceSelector:\n(?: {4}.*\n)+/, '\n  policy: enabled\n')
      .concat('  resultAnnotations: false\n'),
    extra: `---\n${TEMPLATES}`,
  },
};

/**
 * For each driver of {@link ROUND_TRIP_DRIVERS}, a tap subtest `<driver>: <what>`: `runs` generated Deployments
 * (with the driver's extra documents), each injected and then uninjected, must come back byte for byte with exit 0
 * (an input the driver leaves as it is, or refuses, has nothing to give back), and at least half of them must be
 * injected, so that the property is not passed by inputs nothing happens to.
 */
export function roundTripEveryDriver(t: Test, what: string, deployment: fc.Arbitrary<string>, runs = 40): void {
  for (const [name, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
    t.test(`${name}: ${what}`, async (t) => {
      let injectedCount = 0;
      fc.assert(
        fc.property(deployment, (text) => {
          const input = `${text}${driver.extra}`;
          const injected = run(input, { functionConfig: `${driver.config}  mode: inject\n` });
          if (injected.exitCode !== 0 || injected.stdout === input) return true;
          injectedCount++;
          const un = run(injected.stdout, { functionConfig: `${driver.config}  mode: uninject\n` });
          return un.exitCode === 0 && un.stdout === input;
        }),
        { numRuns: runs },
      );
      t.ok(injectedCount >= runs / 2, `most generated inputs are injected (${injectedCount} of ${runs})`);
    });
  }
}

/**
 * For each driver of {@link ROUND_TRIP_DRIVERS}, a tap subtest `<driver>: <what>` over `runs` generated workloads
 * (with the driver's extra documents), stricter than {@link roundTripEveryDriver}: every input must be injected
 * (exit 0, output changed: no refusal, no internal error), injecting the output again must give it back byte for
 * byte, uninjecting it must give back the input byte for byte, and `check(input, injected)` (when given) must hold.
 * The first failure is reported with the input and the output that broke the promise.
 */
export function faithfulEveryDriver(
  t: Test,
  what: string,
  workload: fc.Arbitrary<string>,
  runs = 30,
  check?: (input: string, injected: string) => boolean,
): void {
  for (const [name, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
    t.test(`${name}: ${what}`, async (t) => {
      const mode = (m: string) => ({ functionConfig: `${driver.config}  mode: ${m}\n` });
      let failure: string | undefined;
      const failed = (what: string, input: string, out: { exitCode: number; stdout: string }): boolean => {
        failure = `${what} (exit ${out.exitCode}) of:\n${input}\ngave:\n${out.stdout}`;
        return false;
      };
      fc.check(
        fc.property(workload, (text) => {
          const input = `${text}${driver.extra}`;
          const injected = run(input, mode('inject'));
          if (injected.exitCode !== 0 || injected.stdout === input) return failed('inject', input, injected);
          if (check && !check(input, injected.stdout)) return failed('the check of the injection', input, injected);
          const again = run(injected.stdout, mode('inject'));
          if (again.exitCode !== 0 || again.stdout !== injected.stdout)
            return failed('injecting again', injected.stdout, again);
          const back = run(injected.stdout, mode('uninject'));
          if (back.exitCode !== 0 || back.stdout !== input) return failed('uninject', injected.stdout, back);
          return true;
        }),
        { numRuns: runs },
      );
      t.equal(failure, undefined, `every generated workload (${runs})`);
    });
  }
}
