/**
 * Issue #40: `injectionStatusValue` writes the text of a shared list (`share` of src/json.ts: deep-frozen, as
 * a planned render's token-free parts are) once and reuses it. The shortcut holds only because a shared list
 * never changes: a list that is not shared is read afresh on every call, also after it changed in place, and
 * every answer is Go's `json.Marshal(SidecarInjectionStatus)` of the names, for shared and unshared lists alike.
 */
import t from 'tap';
import fc from 'fast-check';
import { injectionStatusValue } from '../../../src/drivers/istio/status.ts';
import { share } from '../../../src/json.ts';
import type { Json, JsonObject } from '../../../src/model.ts';

const LISTS = ['initContainers', 'containers', 'volumes', 'imagePullSecrets'] as const;

/** Go's marshal of the status struct, written independently of the code under test. */
function expected(spec: JsonObject, revision: string): string {
  const named = (v: Json | undefined): string[] | null => {
    if (!Array.isArray(v)) return null;
    const out: string[] = [];
    for (const x of v)
      if (typeof x === 'object' && x !== null && !Array.isArray(x)) out.push(typeof x.name === 'string' ? x.name : '');
    return out.length === 0 ? null : out;
  };
  // encoding/json escapes <, >, & and U+2028/U+2029 in strings (HTML-safe); JSON.stringify leaves them
  return JSON.stringify({
    initContainers: named(spec.initContainers),
    containers: named(spec.containers),
    volumes: named(spec.volumes),
    imagePullSecrets: named(spec.imagePullSecrets),
    revision: revision === '' ? 'default' : revision,
  }).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const entry: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ name: fc.constantFrom('istio-proxy', 'istio-init', 'a"b', 'vol-é', '') }) },
  fc.record({ name: fc.oneof(fc.integer(), fc.constant(null)) }),
  fc.constant({}),
  fc.constantFrom(1, 'x', null),
  fc.constant<Json>([]),
);
const list: fc.Arbitrary<Json | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.array(entry, { maxLength: 5 }) },
  fc.constantFrom(undefined, null, 'x', 3),
  fc.constant({ name: 'not-a-list' }),
);
/** A template spec and, per list, whether it is shared (the shortcut's precondition). */
const specs = fc.record({
  lists: fc.tuple(list, list, list, list),
  shared: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
  revision: fc.constantFrom('', 'canary', '1-24"x'),
});
/** A change in place to a list that is not shared: rename, add or drop an entry. */
const change = fc.record({ at: fc.nat(4), op: fc.constantFrom('rename', 'push', 'pop'), name: fc.string() });

t.test(
  'the status text of shared and unshared lists is Go marshal of the names; unshared lists are read afresh',
  async (t) => {
    let sharedLists = 0;
    let changedUnshared = 0;
    fc.assert(
      fc.property(specs, fc.array(change, { minLength: 1, maxLength: 4 }), ({ lists, shared, revision }, changes) => {
        const spec: JsonObject = {};
        LISTS.forEach((key, i) => {
          const v = lists[i];
          if (v === undefined) return;
          const copy = structuredClone(v);
          spec[key] = shared[i] ? share(copy) : copy;
          if (shared[i] && Array.isArray(copy)) sharedLists++;
        });
        // Asked twice: the second answer may come from the memo, and must be the same.
        if (injectionStatusValue(spec, revision) !== expected(spec, revision)) return false;
        if (injectionStatusValue(spec, revision) !== expected(spec, revision)) return false;
        for (const { at, op, name } of changes) {
          const key = LISTS[at % LISTS.length] ?? 'volumes';
          const v = spec[key];
          if (!Array.isArray(v) || Object.isFrozen(v)) continue;
          const first = v[0];
          if (op === 'rename' && typeof first === 'object' && first !== null && !Array.isArray(first))
            first.name = name;
          else if (op === 'push') v.push({ name });
          else v.pop();
          changedUnshared++;
          if (injectionStatusValue(spec, revision) !== expected(spec, revision)) return false;
        }
        // A shared list with the same names as another shared list, under a new identity.
        const again = Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, share(structuredClone(v))]));
        return injectionStatusValue(again, revision) === expected(spec, revision);
      }),
      { numRuns: 400 },
    );
    t.ok(
      sharedLists > 300 && changedUnshared > 300,
      `${sharedLists} shared lists, ${changedUnshared} changes in place`,
    );
  },
);

t.test('the status of Istio sidecar template pod reads as Go writes it', async (t) => {
  const spec: JsonObject = share({
    initContainers: [{ name: 'istio-init' }],
    containers: [{ name: 'istio-proxy' }],
    volumes: [{ name: 'workload-socket' }, { name: 'istio-envoy' }],
  });
  const text =
    '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["workload-socket","istio-envoy"],"imagePullSecrets":null,"revision":"default"}';
  t.equal(injectionStatusValue(spec, ''), text);
  t.equal(injectionStatusValue(spec, ''), text, 'asked again (the shared lists remembered)');
  const mine: JsonObject = { ...spec, volumes: [{ name: 'workload-socket' }] };
  t.equal(
    injectionStatusValue(mine, 'canary'),
    '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["workload-socket"],"imagePullSecrets":null,"revision":"canary"}',
  );
  (mine.volumes as JsonObject[]).push({ name: 'extra' });
  t.match(injectionStatusValue(mine, 'canary'), /"volumes":\["workload-socket","extra"\]/, 'a list changed in place');
});
