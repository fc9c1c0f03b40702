// The Linkerd driver's side of uninject, tested on the corpus of `linkerd uninject` (TestUninjectYAML,
// conformance/linkerd of the test data, cases uninject-*): for every pod template, removing what `inventory` names
// (containers, init containers, volumes, annotations, labels), and for every Namespace or Service what
// `resourceInventory` names, must give the expected output. The engine-level `spec.mode: uninject` does the
// same removal; this test holds the driver to what it must report.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareDocuments, parseYamlStream } from '../../../scripts/conformance/normalize.ts';
import { linkerdDriver } from '../../../src/drivers/linkerd/index.ts';
import { removeInventory } from '../../../src/drivers/linkerd/inventory.ts';
import type { Json, JsonObject, PodTemplate } from '../../../src/model.ts';
import { corpus, recordCases } from '../../helpers/data.ts';

const LINKERD = corpus('conformance/linkerd');
const dir = join(LINKERD.path ?? '', 'cases');
type Doc = JsonObject & { kind?: string; metadata?: JsonObject; spec?: JsonObject; items?: Doc[] };

/** The object holding `metadata` + `spec` of the pod template, as Linkerd finds it (by kind). */
function templateHolder(d: Doc): JsonObject | undefined {
  if (d.kind === 'Pod') return d;
  if (d.kind === 'CronJob')
    return ((d.spec?.jobTemplate as JsonObject | undefined)?.spec as JsonObject | undefined)?.template as
      | JsonObject
      | undefined;
  return d.spec?.template as JsonObject | undefined;
}

function uninject(d: Doc): Doc {
  const out = structuredClone(d);
  const meta = (out.metadata ?? {}) as JsonObject;
  const res = linkerdDriver.resourceInventory!({
    apiVersion: String(out.apiVersion),
    kind: String(out.kind),
    name: String(meta.name),
    namespace: '',
    labels: (meta.labels ?? {}) as Record<string, string>,
    annotations: (meta.annotations ?? {}) as Record<string, string>,
  });
  if (res) {
    for (const k of res.annotations) delete (meta.annotations as JsonObject)[k];
    for (const k of res.labels) delete (meta.labels as JsonObject)[k];
  }
  const holder = templateHolder(out);
  if (holder?.spec) {
    const pod = { metadata: (holder.metadata ?? {}) as PodTemplate['metadata'], spec: holder.spec as JsonObject };
    const inv = linkerdDriver.inventory(pod);
    if (inv) {
      const removed = removeInventory(pod, inv);
      holder.metadata = removed.metadata as Json;
      holder.spec = removed.spec;
    }
  }
  return out;
}

const cases = LINKERD.path
  ? readdirSync(dir)
      .filter((n) => n.startsWith('uninject-'))
      .sort()
  : [];
if (LINKERD.path) {
  t.equal(cases.length, 13, 'the corpus has its 13 uninject cases');
  recordCases('conformance/linkerd (uninject)', cases.length);
} else {
  t.test('the uninject cases of conformance/linkerd', { skip: LINKERD.skip }, async () => {});
}
for (const name of cases) {
  t.test(name, async (t) => {
    const flat = (docs: Json[]) => (docs as Doc[]).flatMap((d) => (d.kind === 'List' ? (d.items ?? []) : [d]));
    const input = flat(parseYamlStream(readFileSync(join(dir, name, 'input.yaml'), 'utf8')));
    const expected = flat(parseYamlStream(readFileSync(join(dir, name, 'expected.yaml'), 'utf8')));
    t.same(compareDocuments(expected, input.map(uninject)), { equal: true });
  });
}
