/**
 * A resource written as one YAML flow mapping (`{apiVersion: apps/v1, kind: Deployment, ...}`) is YAML, not JSON:
 * what the injection adds is written in YAML flow style, and uninject gives the input back byte for byte. Found by
 * fuzzing (2026-11-29): such a document was taken for JSON, so every added key was written quoted
 * (`{"name": "istio-proxy", ...}`) and uninject gave `readinessProbe: {"grpc": {"port": 5050}}` back for the
 * user's `{grpc: {port: 5050}}`. A JSON resource (its first key double-quoted) stays JSON
 * (test/core/fidelity.test.ts and the compact-json bench class).
 *
 * Generated Deployments in flow style, on one line or several, with or without a probe of each kind, labels and
 * ports; every driver: injected, injected again byte for byte, uninjected byte for byte, and no key written quoted.
 * Comments inside such a document stay once; a `#` inside a scalar is not one (`noComment`, src/edit/flow-edit.ts).
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';
import { faithfulEveryDriver, ROUND_TRIP_DRIVERS } from '../helpers/round-trip-drivers.ts';

const probe = fc.constantFrom(
  '',
  ', readinessProbe: {grpc: {port: 5050}}',
  ', readinessProbe: {tcpSocket: {port: 8080}}',
  ', livenessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 5}',
);
const flowDeployment = fc
  .record({
    probe,
    labels: fc.constantFrom('', ', labels: {app: web}'),
    ports: fc.constantFrom('', ', ports: [{containerPort: 8080}]'),
    lines: fc.boolean(),
  })
  .map(({ probe, labels, ports, lines }) => {
    const br = lines ? '\n  ' : ' ';
    return (
      `{apiVersion: apps/v1,${br}kind: Deployment,${br}metadata: {name: web, namespace: shop${labels}},${br}` +
      `spec: {template: {spec: {containers: [{name: web, image: nginx${ports}${probe}}]}}}}\n`
    );
  });

faithfulEveryDriver(t, 'a Deployment written as one YAML flow mapping', flowDeployment, 20, (input, injected) => {
  // The input quotes no key; nor may the injection: a JSON-style entry is `"key": value` (the compact JSON inside
  // an annotation's value, `{"initContainers":[...`, has no space after its colons).
  const doc = injected.slice(0, injected.indexOf('\n---') < 0 ? undefined : injected.indexOf('\n---'));
  return input.includes('"') || !/"[A-Za-z_./-]+": /.test(doc);
});

t.test('comments inside a flow document stay, and a # inside a scalar is no comment', async (t) => {
  // A `#` inside a quoted scalar (OSM's init script, `"...\n# OSM sidecar interception rules..."`) made the flow
  // editor refuse, and the resource was rewritten on one line; a real comment (after a blank) still refuses there.
  for (const [name, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
    const input =
      '{apiVersion: apps/v1,\n  kind: Deployment,\n  metadata: {name: web, namespace: shop},\n  # the app\n' +
      '  spec: {template: {spec: {containers: [{name: web, image: "a#b", args: [x, \'y #z\', c#d]} # its one container\n' +
      `  ]}}}}\n${driver.extra}`;
    const injected = run(input, { functionConfig: `${driver.config}  mode: inject\n` });
    t.equal(injected.exitCode, 0, `${name}: injected`);
    t.equal(injected.stdout.split('# the app').length, 2, `${name}: the comment above a key, once`);
    t.equal(injected.stdout.split('# its one container').length, 2, `${name}: the comment in a list, once`);
    const back = run(injected.stdout, { functionConfig: `${driver.config}  mode: uninject\n` });
    t.equal(back.stdout, input, `${name}: uninject gives the input back`);
    // A quote inside a plain scalar (`e:'f`) opens no quoted scalar: the comment after it is one.
    const plain =
      '{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: shop},\n' +
      `  spec: {containers: [{name: web, image: nginx, args: [e:'f #a comment after a plain scalar\n  ]}]}}\n${driver.extra}`;
    const out = run(plain, { functionConfig: `${driver.config}  mode: inject\n` });
    t.equal(out.exitCode, 0, `${name}: injected`);
    t.equal(out.stdout.split('#a comment after a plain scalar').length, 2, `${name}: that comment, once`);
  }
});
