/**
 * One identity given twice with the same content (issue #20 §3) is a warning and both documents are written, on
 * every run: found by fuzzing (2026-11-29), two such Deployments written two ways (a flow `tcpSocket: {port: 80}`
 * and a block one) were injected with a warning, and the second run refused its own output ("appears twice with
 * different content": their companion records keep how each was written, and Istio's probers kept each one's key
 * order); a kpt package holding the same document twice was refused on the first run (the documents' index
 * annotations differ).
 *
 * Generated: one Deployment's data written twice, each time with its own choices of flow or block collections,
 * quoting and key order; as a multi-document stream and as a kpt ResourceList (path and index annotations); with
 * every driver. The first run exits 0 with the "identical" warning; a second run on its output gives it back byte
 * for byte, with the same warning; uninject gives back the input.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';
import { ROUND_TRIP_DRIVERS } from '../helpers/round-trip-drivers.ts';

/** How one document writes the shared data: per node, flow or block, a quoting, a key order. */
const writing = fc.record({
  flowProbe: fc.boolean(),
  reversedAction: fc.boolean(),
  quote: fc.constantFrom('', "'", '"'),
  flowLabels: fc.boolean(),
  portFirst: fc.boolean(),
});
type Writing = { flowProbe: boolean; reversedAction: boolean; quote: string; flowLabels: boolean; portFirst: boolean };

const data = fc.record({
  probe: fc.constantFrom('httpGet', 'tcpSocket'),
  path: fc.constantFrom('/ready', '/a&b'),
  port: fc.constantFrom(80, 8080),
  image: fc.constantFrom('nginx', 'nginx:1.27'),
});
type Data = { probe: string; path: string; port: number; image: string };

function deployment(d: Data, w: Writing, meta = ''): string {
  const q = (s: string) => `${w.quote}${s}${w.quote}`;
  const fields: Array<[string, string]> = [['port', String(d.port)]];
  if (d.probe === 'httpGet') fields.push(['path', q(d.path)]);
  if (w.reversedAction) fields.reverse();
  const action = w.flowProbe
    ? `          ${d.probe}: {${fields.map(([k, v]) => `${k}: ${v}`).join(', ')}}\n`
    : `          ${d.probe}:\n${fields.map(([k, v]) => `            ${k}: ${v}\n`).join('')}`;
  const labels = w.flowLabels ? '      labels: {app: web}\n' : '      labels:\n        app: web\n';
  const ports = '        ports:\n        - containerPort: 8080\n';
  const image = `        image: ${q(d.image)}\n`;
  return (
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n${meta}spec:\n  template:\n` +
    `    metadata:\n${labels}    spec:\n      containers:\n      - name: web\n` +
    (w.portFirst ? ports + image : image + ports) +
    `        readinessProbe:\n${action}`
  );
}

const pair = fc.record({ d: data, a: writing, b: writing });

type Outcome = ReturnType<typeof run>;
const messages = (r: Outcome): string => r.results.map((x) => x.message).join('\n');
/** Whether the run's results hold the warning for an identity given twice with the same content. */
const identical = (r: Outcome): boolean =>
  r.results.some((x) => x.severity === 'warning' && x.message.includes('appears twice, identical'));

for (const [name, driver] of Object.entries(ROUND_TRIP_DRIVERS)) {
  const config = (mode: string) => ({ functionConfig: `${driver.config}  mode: ${mode}\n` });
  t.test(`${name}: the same content twice, in a stream, on every run`, async (t) => {
    let failure: string | undefined;
    fc.check(
      fc.property(pair, ({ d, a, b }) => {
        const input = `${deployment(d, a)}---\n${deployment(d, b)}${driver.extra}`;
        const first = run(input, config('inject'));
        const second = run(first.stdout, config('inject'));
        const back = run(first.stdout, config('uninject'));
        if (first.exitCode !== 0 || !identical(first))
          failure = `first run (exit ${first.exitCode}) of:\n${input}\n${messages(first)}`;
        else if (second.exitCode !== 0 || second.stdout !== first.stdout || !identical(second))
          failure = `second run (exit ${second.exitCode}) of:\n${first.stdout}\n${messages(second)}`;
        else if (back.exitCode !== 0 || back.stdout !== input)
          failure = `uninject of:\n${first.stdout}\ngave:\n${back.stdout}`;
        return failure === undefined;
      }),
      { numRuns: 15 },
    );
    t.equal(failure, undefined, 'every generated pair');
  });
}

t.test('istio: the same content twice in a kpt ResourceList (its own index annotations), on every run', async (t) => {
  const driver = ROUND_TRIP_DRIVERS.istio;
  if (!driver) throw new Error('no istio driver');
  const indent = (text: string) =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
      .join('\n');
  const meta = (i: number) =>
    '  annotations:\n' +
    `    config.kubernetes.io/index: '${i}'\n    config.kubernetes.io/path: 'app.yaml'\n` +
    `    internal.config.kubernetes.io/index: '${i}'\n    internal.config.kubernetes.io/path: 'app.yaml'\n`;
  let failure: string | undefined;
  fc.check(
    fc.property(pair, ({ d, a, b }) => {
      const list =
        'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n' +
        `${indent(deployment(d, a, meta(0)))}\n${indent(deployment(d, b, meta(1)))}\n` +
        `functionConfig:\n${driver.config
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => `  ${l}`)
          .join('\n')}\n`;
      const first = run(list, {});
      const second = run(first.stdout, {});
      if (first.exitCode !== 0 || !first.stdout.includes('appears twice, identical'))
        failure = `first run (exit ${first.exitCode}) of:\n${list}\ngave:\n${first.stdout}`;
      else if (second.exitCode !== 0 || second.stdout !== first.stdout)
        failure = `second run (exit ${second.exitCode}) of:\n${first.stdout}\ngave:\n${second.stdout}`;
      return failure === undefined;
    }),
    { numRuns: 15 },
  );
  t.equal(failure, undefined, 'every generated pair');
});

t.test('content that differs is still refused, whatever the records say', async (t) => {
  const driver = ROUND_TRIP_DRIVERS.istio;
  if (!driver) throw new Error('no istio driver');
  const w: Writing = { flowProbe: false, reversedAction: false, quote: '', flowLabels: false, portFirst: false };
  const d: Data = { probe: 'httpGet', path: '/ready', port: 80, image: 'nginx' };
  const input = `${deployment(d, w)}---\n${deployment({ ...d, port: 8080 }, w)}`;
  const out = run(input, { functionConfig: `${driver.config}  mode: inject\n` });
  t.equal(out.exitCode, 1);
  t.match(messages(out), 'appears twice with different content');
  t.equal(out.stdout, '', 'nothing is written');
});
