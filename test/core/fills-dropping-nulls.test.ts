/**
 * Issue #40: `fillsDroppingNulls` (src/patch/trusted-patch.ts) answers `plainDroppingNulls` of a sidecar plan's fill
 * by the edits worked out once on the plan's output, walking only the maps on the way to a null. Generated plan
 * outputs (pod-shaped: labels, annotations, containers with env lists merged by name, volumes, `emptyDir:` nulls,
 * nulls in lists, tokens in values, in merge-key values and in map keys, `$patch` directives, repeated merge
 * names) are compiled for filling as the planner compiles them (`compileFill`, which shares their token-free parts),
 * filled with generated values, and each fill (and its `{metadata, spec}` fragment, as Istio's inject passes it)
 * is dropped both ways: the same JSON in the same key order, the same shared objects, and the fill left as it was.
 * Where the shortcut declines (a fill that may not be plain), the general walk serves.
 */
import t from 'tap';
import fc from 'fast-check';
import { fillsDroppingNulls, plainDroppingNulls } from '../../src/patch/trusted-patch.ts';
import { POD_SCHEMA } from '../../src/patch/patch-schema.ts';
import { compileFill, holdsToken } from '../../src/render/plan-values.ts';
import { isJsonObject, isShared } from '../../src/json.ts';
import type { Json, JsonObject } from '../../src/model.ts';

/** Family-0 tokens as plans record them: string slots `mi7ph<i>x`, number slots `8<i:5>91737`. */
const stringToken = (i: number) => `mi7ph${i}x`;
const numberToken = (i: number) => Number(`8${String(i).padStart(5, '0')}91737`);
const SLOTS = 4;

const scalar: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('x', 'y', 1, true) },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.nat(SLOTS - 1).map(stringToken) },
  fc.nat(SLOTS - 1).map((i) => `a-${stringToken(i)}.b`),
  fc.nat(SLOTS - 1).map(numberToken),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'medium'), tie('v'), { maxKeys: 3 }),
  ),
})).v as fc.Arbitrary<Json>;

/** A map key: mostly plain, sometimes a token (a filled key) or a directive. */
const key = fc.oneof(
  { weight: 60, arbitrary: fc.constantFrom('app', 'team', 'ver') },
  fc.constant(stringToken(1)),
  fc.constant('$patch'),
);
/** A merge name: mostly a constant (distinct in most lists), sometimes a token (filled names could repeat) or missing. */
const mergeName = fc.oneof(
  { weight: 60, arbitrary: fc.constantFrom('n0', 'n1', 'n2', 'n3', 'n4', 'n5') },
  fc.constant(stringToken(2)),
  fc.constant(undefined),
);
const named = (rest: fc.Arbitrary<JsonObject>): fc.Arbitrary<JsonObject> =>
  fc.tuple(mergeName, rest).map(([name, r]) => (name === undefined ? r : { name, ...r }));
const envEntry = named(fc.record({ value: scalar }, { requiredKeys: [] }) as fc.Arbitrary<JsonObject>);
const container = named(
  fc.record(
    { image: scalar, env: fc.uniqueArray(envEntry, { maxLength: 4, selector: (e) => e.name }), args: value },
    { requiredKeys: [] },
  ),
);
const volume = named(fc.record({ emptyDir: value }, { requiredKeys: [] }) as fc.Arbitrary<JsonObject>);
const template = fc
  .record({
    labels: fc.dictionary(key, scalar, { maxKeys: 3 }),
    annotations: fc.dictionary(key, scalar, { maxKeys: 2 }),
    containers: fc.uniqueArray(container, { maxLength: 3, selector: (e) => e.name }),
    initContainers: fc.option(fc.uniqueArray(container, { maxLength: 2, selector: (e) => e.name }), { nil: undefined }),
    volumes: fc.uniqueArray(volume, { maxLength: 4, selector: (e) => e.name }),
    hostname: value,
    kind: fc.constantFrom('Pod', null),
  })
  .map(({ labels, annotations, containers, initContainers, volumes, hostname, kind }) => {
    const spec: JsonObject = { containers, volumes, hostname };
    if (initContainers !== undefined) spec.initContainers = initContainers;
    return { kind, metadata: { labels, annotations }, spec } as JsonObject;
  });
/** Slot values: plain text, which reads as a string wherever a token stood (a number slot: digits). */
const slotValues = fc.array(fc.constantFrom('v1', 'web', 'team-a', '8080', 'a.b'), {
  minLength: SLOTS + 1,
  maxLength: SLOTS + 1,
});

/** Whether `a` and `b` hold the same shared objects at the same places (and are the same JSON). */
function sameShared(a: Json, b: Json): boolean {
  if (isShared(a) || isShared(b)) return a === b;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameShared(x, b[i] as Json));
  if (isJsonObject(a) && isJsonObject(b)) return Object.keys(a).every((k) => sameShared(a[k] as Json, b[k] as Json));
  return Object.is(a, b);
}

t.test("a fill dropped by its plan output's edits is the general walk's answer", async (t) => {
  let compiled = 0;
  let edited = 0;
  let declined = 0;
  fc.assert(
    fc.property(template, fc.array(slotValues, { minLength: 1, maxLength: 3 }), (out, fills) => {
      const filler = compileFill(out);
      // Asked for the first time, a template is only remembered (the general walk serves its first workload).
      if (fillsDroppingNulls(out, POD_SCHEMA, holdsToken) !== undefined) return false;
      const drop = fillsDroppingNulls(out, POD_SCHEMA, holdsToken);
      if (drop === undefined) declined++;
      else compiled++;
      for (const values of fills) {
        let fill: Json;
        try {
          fill = filler(values);
        } catch {
          continue; // (a fill the planner refuses: the workload is rendered in full)
        }
        if (!isJsonObject(fill) || drop === undefined) continue;
        const before = JSON.stringify(fill);
        const fragment: JsonObject = { metadata: fill.metadata as Json, spec: fill.spec as Json };
        for (const v of [fill, fragment]) {
          const general = plainDroppingNulls(v, POD_SCHEMA);
          const planned = drop(v);
          if (planned !== v) edited++;
          if (JSON.stringify(planned) !== JSON.stringify(general) || !sameShared(planned, general ?? null))
            return false;
        }
        if (JSON.stringify(fill) !== before) return false;
      }
      return true;
    }),
    { numRuns: 600 },
  );
  t.ok(compiled > 150, `plan outputs answered by their edits are generated (${compiled} of 600)`);
  t.ok(edited > 150, `fills with a null to drop are generated (${edited})`);
  t.ok(declined > 50, `plan outputs declined are generated (${declined} of 600)`);
});

t.test('by hand: a null in a shared volume and one in a fresh container', async (t) => {
  const out: JsonObject = {
    metadata: { labels: { app: stringToken(0) } },
    spec: {
      containers: [{ name: 'proxy', image: stringToken(1), lifecycle: null }],
      volumes: [{ name: 'data', emptyDir: null }],
    },
  };
  const filler = compileFill(out);
  t.equal(fillsDroppingNulls(out, POD_SCHEMA, holdsToken), undefined, 'not worked out for a first workload');
  const drop = fillsDroppingNulls(out, POD_SCHEMA, holdsToken);
  if (drop === undefined) throw new Error('expected the plan output to be answered by its edits');
  const fill = filler(['web', 'img:1']) as JsonObject;
  const dropped = drop({ metadata: fill.metadata as Json, spec: fill.spec as Json });
  t.same(dropped, {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'proxy', image: 'img:1' }], volumes: [{ name: 'data' }] },
  });
  t.equal(dropped.metadata, fill.metadata, "a part with no null is the fill's own");
  t.ok(isShared((dropped.spec as JsonObject).volumes), 'a shared part without its nulls is shared');
  const twice = (template: JsonObject) => {
    compileFill(template);
    fillsDroppingNulls(template, POD_SCHEMA, holdsToken);
    return fillsDroppingNulls(template, POD_SCHEMA, holdsToken);
  };
  t.equal(
    twice({ spec: { containers: [{ name: stringToken(0), x: null, y: stringToken(1) }] } }),
    undefined,
    'a slot in a merge name (fills could repeat it) is declined',
  );
  t.equal(
    twice({ spec: { volumes: [{ name: 'a' }, { name: 'a', x: null, y: stringToken(0) }] } }),
    undefined,
    'a repeated merge name is declined',
  );
  t.equal(
    twice({ metadata: { labels: { $patch: 'replace', a: null, b: stringToken(0) } } }),
    undefined,
    'a directive is declined',
  );
  t.type(twice({ metadata: { labels: { a: null, b: stringToken(0) } } }), 'function', 'and its twin without is not');
});
