// `-o patches` on named lists (issue #37 item 1): the operations diffValue writes for a list merged by name
// (containers, init containers, volumes) touch only what injection added, removed or moved, so an item the upstream
// appends later survives. Generated: a list, the injected list (items kept, some moved, some removed, some added),
// and an upstream that appended an item afterwards; the operations, applied as RFC 6902 says, must give the
// injected items in the injected order with the upstream's item still there.
import t from 'tap';
import fc from 'fast-check';
import { diffValue, type PatchOp } from '../../src/cli/patches.ts';

type Item = { name: string; v?: number };

/** RFC 6902 on a list at `/l`: add (index or `-`), remove, test of `/l/<i>/name`, replace of an item's field. */
function apply(list: Item[], ops: PatchOp[]): Item[] | 'test failed' {
  const out = list.map((x) => ({ ...x }));
  for (const op of ops) {
    const parts = op.path.split('/').slice(2);
    const at = parts[0] === '-' ? out.length : Number.parseInt(parts[0] ?? '', 10);
    if (op.op === 'test') {
      if (out[at]?.name !== op.value) return 'test failed';
    } else if (op.op === 'remove') out.splice(at, 1);
    else if (op.op === 'add' && parts.length === 1) out.splice(at, 0, op.value as Item);
    else if (parts.length === 2 && (op.op === 'replace' || op.op === 'add')) {
      const item = out[at];
      if (item) item.v = op.value as number;
    } else throw new Error(`unexpected operation ${JSON.stringify(op)}`);
  }
  return out;
}

t.test('a moved item is removed and added again; the upstream item appended later is kept', async (t) => {
  const a: Item[] = [{ name: 'config' }, { name: 'proxy-identity' }, { name: 'tls' }];
  const b: Item[] = [{ name: 'config' }, { name: 'tls' }, { name: 'xtables' }, { name: 'proxy-identity' }];
  const ops: PatchOp[] = [];
  diffValue(a, b, '/l', ops);
  t.notOk(
    ops.some((o) => o.op === 'replace' && o.path === '/l'),
    'no replacement of the whole list',
  );
  const got = apply([...a, { name: 'upstream' }], ops);
  t.not(got, 'test failed');
  if (got !== 'test failed') {
    t.same(
      got.filter((x) => x.name !== 'upstream'),
      b,
      'the injected list, in its order',
    );
    t.ok(
      got.some((x) => x.name === 'upstream'),
      "the upstream's later item is kept",
    );
  }
});

t.test('properties: generated lists, injections and an upstream item appended later', async (t) => {
  const names = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 6 });
  fc.assert(
    fc.property(names, names, fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), (before, after, changed) => {
      const a: Item[] = before.map((name) => ({ name, v: 0 }));
      const b: Item[] = after.map((name, i) => ({ name, v: changed[i] ? 1 : 0 }));
      const ops: PatchOp[] = [];
      diffValue(a, b, '/l', ops);
      if (ops.some((o) => o.path === '/l')) return false;
      const got = apply([...a, { name: 'upstream', v: 0 }], ops);
      if (got === 'test failed') return false;
      const mine = got.filter((x) => x.name !== 'upstream');
      return JSON.stringify(mine) === JSON.stringify(b) && got.some((x) => x.name === 'upstream');
    }),
    { numRuns: 2000 },
  );
  t.pass('the operations give the injected list and keep the upstream item');
});
