/**
 * The shared status record (src/patch/status-record.ts, issue #21 §1): `meshinject.dev/original` keeps what
 * the mesh's own record loses, uninject puts it back, a tampered record is refused, and inputs without it
 * (older meshinject, the mesh itself) still uninject. Through the CLI, as a user runs it.
 */
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runCli, workspace } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';
import { readOriginal, restorePrevious, withOriginalRecord } from '../../src/patch/status-record.ts';
import type { PodTemplate } from '../../src/model.ts';

const KUBEBUILDER_DATA = corpus('real-world/kubebuilder-manager/manager.yaml');
const KUBEBUILDER = KUBEBUILDER_DATA.path ? readFileSync(KUBEBUILDER_DATA.path, 'utf8') : '';
const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: t}\nspec:\n  mesh: istio\n  policy: enabled\n  resultAnnotations: false\n';
const UNINJECT = `${CONFIG}  mode: uninject\n`;
const RECORD_LINE = /^ {8}meshinject\.dev\/original: .*\n/m;

function injected(t: Test): { dir: string; text: string } {
  const dir = workspace(t, { 'in.yaml': KUBEBUILDER, 'inject.yaml': CONFIG, 'uninject.yaml': UNINJECT }, 'record');
  const r = runCli(['-q', '-c', 'inject.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, 'inject exits 0');
  return { dir, text: r.stdout };
}

t.test(
  "the record holds the user's value and the empty list, next to Istio's own record",
  needs(KUBEBUILDER_DATA),
  async (t) => {
    const { text } = injected(t);
    const line = RECORD_LINE.exec(text)?.[0];
    t.ok(line, 'meshinject.dev/original is written');
    const value = JSON.parse((parse(line!.trim()) as Record<string, string>)['meshinject.dev/original']!) as unknown;
    t.same(value, { annotations: { 'kubectl.kubernetes.io/default-container': 'manager' }, lists: { volumes: [] } });
    t.match(
      text,
      /sidecar\.istio\.io\/status: '\{"initContainers":\["istio-init"\]/,
      "Istio's record is as Istio writes it",
    );
  },
);

t.test('injecting again keeps the record (idempotent)', needs(KUBEBUILDER_DATA), async (t) => {
  const { dir, text } = injected(t);
  writeFileSync(join(dir, 'once.yaml'), text);
  const again = runCli(['-q', '-c', 'inject.yaml', 'once.yaml'], { cwd: dir });
  t.equal(again.stdout, text, 'the second injection changes nothing');
});

t.test('a tampered record is refused with an error naming the annotation', needs(KUBEBUILDER_DATA), async (t) => {
  const { dir, text } = injected(t);
  const cases: Array<[string, string, RegExp]> = [
    [
      'names a key the mesh never writes',
      `{"annotations":{"app.kubernetes.io/name":"evil"}}`,
      /names annotation "app\.kubernetes\.io\/name", which this mesh's injection does not write/,
    ],
    ['is not JSON', 'not json', /not JSON/],
    ['has an unknown field', '{"spec":{}}', /unknown field "spec"/],
    [
      'names a list that is not a pod-spec list',
      '{"lists":{"hostAliases":[]}}',
      /"lists" may only name empty pod-spec lists/,
    ],
    [
      'holds a malformed port entry',
      '{"namedPorts":[["manager","livenessProbe","exec","http"]]}',
      /"namedPorts" must list/,
    ],
  ];
  for (const [what, value, message] of cases) {
    writeFileSync(
      join(dir, 'tampered.yaml'),
      text.replace(RECORD_LINE, `        meshinject.dev/original: '${value}'\n`),
    );
    const r = runCli(['-c', 'uninject.yaml', 'tampered.yaml'], { cwd: dir });
    t.equal(r.status, 1, `${what}: exit 1 (an error result)`);
    t.match(r.stderr, message, `${what}: the reason`);
    t.match(r.stderr, /metadata\.annotations\[meshinject\.dev\/original\]/, `${what}: the field names the annotation`);
  }
});

t.test(
  'an injection without the record (an older meshinject, Istio itself) still uninjects',
  needs(KUBEBUILDER_DATA),
  async (t) => {
    const { dir, text } = injected(t);
    writeFileSync(join(dir, 'old.yaml'), text.replace(RECORD_LINE, ''));
    const r = runCli(['-q', '-c', 'uninject.yaml', 'old.yaml'], { cwd: dir });
    t.equal(r.status, 0, 'exit 0');
    t.notMatch(r.stdout, /istio-proxy|sidecar\.istio\.io\/status/, 'the injection is removed');
  },
);

t.test('module: previous values restored in place, null removes, own keys only', async (t) => {
  t.same(Object.entries(restorePrevious({ a: '1', b: 'x', c: '3' }, { b: '2', c: null })!), [
    ['a', '1'],
    ['b', '2'],
  ]);
  t.same(
    Object.keys(restorePrevious({ a: '1', c: '3' }, { b: '2' }, ['a', 'b', 'c'])!),
    ['a', 'b', 'c'],
    'a key put back takes its place from the injected order',
  );
  t.equal(restorePrevious({ x: 'y' }, { x: null }), undefined, 'emptied: the caller drops the map');
  const proto = restorePrevious({}, { constructor: 'v', __proto__: 'p' } as unknown as Record<string, string>);
  t.equal(Object.getOwnPropertyDescriptor(proto, 'constructor')?.value, 'v', 'a prototype-named key is a plain key');
  const pod = (annotations: Record<string, string>): PodTemplate => ({
    metadata: { annotations },
    spec: { containers: [{ name: 'a' }] },
  });
  t.equal(
    readOriginal(pod({ x: '1' }), () => true),
    undefined,
    'no record, nothing read',
  );
  const keys = (_: string, k: string) => k === 'toString';
  const out = withOriginalRecord(pod({ toString: 'mine' }), pod({ toString: 'mesh' }), { recordKeys: keys }, false);
  t.same(
    readOriginal(out, keys)?.annotations,
    { toString: 'mine' },
    "the user's value of a key the mesh writes is kept",
  );
  t.equal(
    withOriginalRecord(pod({}), pod({ toString: 'mesh' }), { recordKeys: keys }, false).metadata.annotations?.[
      'meshinject.dev/original'
    ],
    undefined,
    'nothing to keep: no record',
  );
});

t.test('JSON: "volumes": null comes back as it was', async (t) => {
  const input = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "web"},
  "spec": {
    "template": {
      "metadata": {"labels": {"app": "web"}},
      "spec": {
        "containers": [{"name": "web", "image": "web:1"}],
        "volumes": null
      }
    }
  }
}
`;
  const dir = workspace(t, { 'in.json': input, 'inject.yaml': CONFIG, 'uninject.yaml': UNINJECT }, 'json-null');
  const inj = runCli(['-q', '-c', 'inject.yaml', 'in.json'], { cwd: dir });
  t.equal(inj.status, 0, 'inject exits 0');
  t.match(
    inj.stdout,
    /"meshinject\.dev\/original": "\{\\"lists\\":\{\\"volumes\\":null\}\}"/,
    'the record keeps the null list',
  );
  writeFileSync(join(dir, 'injected.json'), inj.stdout);
  const un = runCli(['-q', '-c', 'uninject.yaml', 'injected.json'], { cwd: dir });
  t.equal(un.stdout, input, 'uninject gives back the input byte for byte, "volumes": null included');
});
