/**
 * The strategic merge's key directives (strategicpatch `mergeMap`): `$retainKeys` drops the original's keys it
 * does not list, `$deleteFromPrimitiveList/<field>` removes scalars from the original's list, `$setElementOrder/<field>`
 * is read and never stored, and any other key starting with `$` is a plain key. Each with and without the trusted
 * path's neighbours (a key after the directive still merges).
 */
import t from 'tap';
import { strategicMerge, strategicMergeInto } from '../../src/patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../src/patch/patch-schema.ts';
import type { JsonObject } from '../../src/model.ts';

const cases: Array<{ name: string; original: JsonObject; patch: JsonObject; merged: JsonObject }> = [
  {
    name: '$retainKeys keeps only the listed keys, then merges the rest',
    original: { a: 0, b: 2, c: 3 },
    patch: { $retainKeys: ['a', 'c'], a: 1 },
    merged: { a: 1, c: 3 },
  },
  {
    name: '$deleteFromPrimitiveList/args removes those scalars and is not stored',
    original: { args: ['x', 'y', 'x', 'z'], other: 1 },
    patch: { '$deleteFromPrimitiveList/args': ['x', 'z'], other: 2 },
    merged: { args: ['y'], other: 2 },
  },
  {
    name: '$setElementOrder/containers is not stored',
    original: { containers: [{ name: 'a' }] },
    patch: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'b' }] },
    merged: { containers: [{ name: 'b' }, { name: 'a' }] },
  },
  {
    name: 'another key starting with $ is a plain key',
    original: { a: 1 },
    patch: { $other: 'v', a: 2 },
    merged: { a: 2, $other: 'v' },
  },
];

for (const c of cases) {
  t.test(c.name, (t) => {
    const spec = (o: JsonObject): JsonObject => ({ spec: structuredClone(o) });
    t.same(strategicMerge(spec(c.original), spec(c.patch), POD_SCHEMA), spec(c.merged), 'copying merge');
    t.same(strategicMergeInto(spec(c.original), spec(c.patch), POD_SCHEMA), spec(c.merged), 'merge in place');
    t.end();
  });
}
