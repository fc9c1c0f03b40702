/**
 * `readOriginal` (src/patch/status-record.ts) keeps the last record it read whole (issue #40: a workload's
 * record was parsed and checked two or three times in a row). The shortcut must be sound: a read gives what a
 * fresh parse of that pod's annotation gives, whatever was read before (another record, the same record
 * under another driver's `recordKeys`, a refused record), and no caller can change what a later read gets.
 */
import t from 'tap';
import fc from 'fast-check';
import { ORIGINAL_ANNOTATION, readOriginal, type RecordKeys } from '../../src/patch/status-record.ts';
import type { PodTemplate } from '../../src/model.ts';

const KEYS = ['a', 'b', 'c'];

const podWith = (value: string): PodTemplate => ({
  metadata: { annotations: { user: 'x', [ORIGINAL_ANNOTATION]: value } },
  spec: { containers: [] },
});

/** What a fresh read of `value` must give: the parts, or the refusal's reason. */
function oracle(value: string, allowed: ReadonlySet<string>): { labels: object; annotations: object } | RegExp {
  const o = JSON.parse(value) as Record<string, unknown>;
  for (const kind of ['labels', 'annotations'] as const) {
    for (const k of Object.keys((o[kind] as object | undefined) ?? {}))
      if (!allowed.has(k)) return new RegExp(`names ${kind.slice(0, -1)} "${k}"`);
  }
  if (o.lists !== undefined && JSON.stringify(o.lists) !== '{"volumes":[]}') return /"lists" may only name/;
  return { labels: o.labels ?? {}, annotations: o.annotations ?? {} };
}

const part = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom('1', '2'), { maxKeys: 2 });
const recordText = fc
  .record({ labels: part, annotations: part, lists: fc.constantFrom(undefined, 'ok', 'bad'), space: fc.boolean() })
  .map(({ labels, annotations, lists, space }) => {
    const o: Record<string, unknown> = {};
    if (Object.keys(labels).length > 0) o.labels = labels;
    if (Object.keys(annotations).length > 0) o.annotations = annotations;
    if (lists === 'ok') o.lists = { volumes: [] };
    if (lists === 'bad') o.lists = { env: [] };
    // The same record written with other spacing is another annotation value, read as the same record.
    return JSON.stringify(o, null, space ? 1 : undefined);
  });

t.test('every read gives what a fresh parse gives, whatever was read before (property)', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(
      // Reads drawn from a few records, so that most follow a read of the same value (with the same or other
      // `recordKeys`: the allowed keys are drawn for each read).
      fc
        .array(recordText, { minLength: 1, maxLength: 3 })
        .chain((pool) =>
          fc.array(fc.record({ value: fc.constantFrom(...pool), allowed: fc.subarray(KEYS) }), { maxLength: 12 }),
        ),
      (reads) => {
        for (const { value, allowed } of reads) {
          const set = new Set(allowed);
          const keys: RecordKeys = (_kind, k) => set.has(k);
          const want = oracle(value, set);
          // A new pod object each time: the record read must come from the value, not the pod.
          const got = (): unknown => {
            const rec = readOriginal(podWith(value), keys);
            return rec && { labels: rec.labels, annotations: rec.annotations };
          };
          if (want instanceof RegExp) t.throws(got, { message: want }, `refused: ${value} with [${allowed}]`);
          else t.same(got(), want, `${value} with [${allowed}]`);
          runs++;
        }
      },
    ),
    { numRuns: 150 },
  );
  t.ok(runs > 500, `${runs} reads`);
});

t.test('a record read is frozen: a caller cannot change what the next read of it gets', async (t) => {
  const value = JSON.stringify({ annotations: { a: '1' }, lists: { volumes: [] } });
  const all: RecordKeys = () => true;
  const rec = readOriginal(podWith(value), all);
  t.throws(() => {
    if (rec) rec.annotations.a = 'changed';
  }, TypeError);
  t.throws(() => {
    if (rec) (rec.lists.volumes as unknown[]).push(1);
  }, TypeError);
  const again = readOriginal(podWith(value), all);
  t.same(again?.annotations, { a: '1' });
  t.same(again?.lists, { volumes: [] });
});

t.test('a pod without the annotation reads as no record, after any other read', async (t) => {
  readOriginal(podWith('{"annotations":{"a":"1"}}'), () => true);
  t.equal(
    readOriginal({ metadata: { annotations: { user: 'x' } }, spec: {} }, () => true),
    undefined,
  );
  t.equal(
    readOriginal({ metadata: {}, spec: {} }, () => true),
    undefined,
  );
});
