/**
 * A workload holding a number JSON cannot hold (`.nan`, `.inf`, `-.inf` and their spellings) is refused with an
 * error naming the field; found by fuzzing (2026-11-29): `value: .nan` in an env entry ended in "cannot write the
 * injection faithfully: the new text reads differently as YAML 1.1", naming no field (NaN is not equal to itself,
 * so no text reads back as it). Kubernetes refuses such a manifest too (`json: unsupported value: NaN`).
 *
 * Generated: one such scalar at one of several places of a Deployment or a Pod (env value, an arg, a resource
 * limit, a nested field of a probe, a field the schema does not know), written in any of the spellings YAML gives
 * it, with every driver: exit 1, the error names the field and the value, and nothing is written. The same scalar
 * quoted is text and is injected; a ConfigMap holding one is left as it is.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';
import { ROUND_TRIP_DRIVERS } from '../helpers/round-trip-drivers.ts';

const SPELLINGS: Array<[string, string]> = [
  ['.nan', 'NaN'],
  ['.NaN', 'NaN'],
  ['.NAN', 'NaN'],
  ['.inf', '+Inf'],
  ['+.Inf', '+Inf'],
  ['.INF', '+Inf'],
  ['-.inf', '-Inf'],
  ['-.Inf', '-Inf'],
];

/** Where the scalar goes: the YAML lines of the container (after `- name: app`), and the field the error names. */
const PLACES: Array<[string, string]> = [
  ['    env:\n    - name: A\n      value: X\n', 'containers[0].env[0].value'],
  ['    args: [run, X]\n', 'containers[0].args[1]'],
  ['    resources:\n      limits:\n        cpu: X\n', 'containers[0].resources.limits.cpu'],
  [
    '    readinessProbe:\n      periodSeconds: X\n      tcpSocket: {port: 80}\n',
    'containers[0].readinessProbe.periodSeconds',
  ],
  ['    someFutureField:\n      deep: [1, {x: X}]\n', 'containers[0].someFutureField.deep[1].x'],
];

const workload = fc.record({
  spelling: fc.constantFrom(...SPELLINGS),
  place: fc.constantFrom(...PLACES),
  pod: fc.boolean(),
});

function manifest(pod: boolean, lines: string): string {
  const container = `- name: app\n  image: nginx\n${lines.replace(/^ {2}/gm, '')}`;
  const indented = (col: number) =>
    container
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `${' '.repeat(col)}${l}\n`)
      .join('');
  return pod
    ? `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  containers:\n${indented(2)}`
    : `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n${indented(6)}`;
}

for (const [name, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
  t.test(`${name}: a number JSON cannot hold is refused, naming its field`, async (t) => {
    let failure: string | undefined;
    fc.check(
      fc.property(workload, ({ spelling: [text, go], place: [lines, field], pod }) => {
        const input = `${manifest(pod, lines.replace('X', text))}${driver.extra}`;
        const out = run(input, { functionConfig: `${driver.config}  mode: inject\n` });
        const want = `${pod ? 'spec' : 'spec.template.spec'}.${field} is a YAML float no JSON can hold (${go})`;
        const errors = out.results.filter((r) => r.severity === 'error').map((r) => r.message);
        if (out.exitCode !== 1 || out.stdout !== '' || !errors.some((m) => m.includes(want)))
          failure = `${input}\nexit ${out.exitCode}, errors: ${errors.join(' | ')}\nwanted: ${want}`;
        // Quoted, the same text is a string, and the workload is injected.
        const quoted = run(`${manifest(pod, lines.replace('X', `'${text}'`))}${driver.extra}`, {
          functionConfig: `${driver.config}  mode: inject\n`,
        });
        if (failure === undefined && (quoted.exitCode !== 0 || !quoted.stdout.includes(`'${text}'`)))
          failure = `quoted ${text} at ${field}: exit ${quoted.exitCode}`;
        return failure === undefined;
      }),
      { numRuns: 20 },
    );
    t.equal(failure, undefined, 'every generated workload');
  });
}

t.test('a resource that is not a workload is left as it is', async (t) => {
  const driver = ROUND_TRIP_DRIVERS.istio;
  if (!driver) throw new Error('no istio driver');
  const input = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  x: .nan\n';
  const out = run(input, { functionConfig: `${driver.config}  mode: inject\n` });
  t.equal(out.exitCode, 0);
  t.equal(out.stdout, input);
});
