/**
 * A sidecar plan's key is the node of a trie of its pieces (src/render/plan-keys.ts `KeyTrie`, `keyOf` of
 * src/render/plans.ts), where it was the text of those pieces joined. The key must be exactly as discriminating
 * as the text: two workloads whose key texts differ must never share a plan (a wrong output), and two whose
 * texts are equal must share one (or shapes that repeat would be recorded again). The generator makes streams of
 * template data from small alphabets, so that texts collide and differ by one piece: names and values that look
 * like the key's own brackets and markers, map keys in other orders, arrays of other lengths, steered subtrees,
 * numbers near a token's 11 digits, tokens in names and literals, fields in other orders and other field lists.
 * For every pair of a stream, the two must reach one node exactly when the reference texts (the joined key of
 * before, written out here) are equal; slot values and a token's refusal must be the same as the reference's.
 */
import t from 'tap';
import fc from 'fast-check';
import { PlanCache } from '../../src/render/plans.ts';
import { HAS_TOKEN } from '../../src/render/plan-keys.ts';
import { ANY_TOKEN, isDigitSlot, isNumberSlot, isSlotSafe, type Steer } from '../../src/render/plan-values.ts';
import { createRenderRun } from '../../src/render/run-state.ts';

const SHAPE = { slotRoots: ['Spec', 'Meta'], identityRoots: ['Values'], derived: { Ports: () => '' } };

/** Strings that are slots, digit slots, literals, key-text look-alikes, and tokens. */
const STRINGS = ['web', 'a.b', '8080', '012', 'yes', '', 'a b', '{', '}', ',', '[', ']', ':', '"x":', 'mi7ph1x', 'x'];
const NUMBERS = [0, 1, 80, 999_999, 1_000_000, -3, 1.5, -0, 9_999_999_999, 10_000_000_000, 80000191737, 1e21];

const leaf = fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS), fc.boolean(), fc.constant(null));
const tree = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('arr'), tie('obj')),
  arr: fc.array(tie('node'), { maxLength: 3 }),
  obj: fc.dictionary(fc.constantFrom(...STRINGS), tie('node'), { maxKeys: 3 }),
})).node;

/** One workload's template data: its fields in a generated order, some left out. */
const dataArb = fc
  .record(
    {
      Spec: tree,
      Meta: tree,
      Values: fc.constant(undefined),
      Ports: fc.constant(1),
      Revision: fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS), fc.boolean()),
      Flag: fc.oneof(fc.boolean(), fc.constantFrom(...STRINGS)),
    },
    { requiredKeys: ['Spec'] },
  )
  .chain((r) => fc.shuffledSubarray(Object.keys(r), { minLength: Object.keys(r).length }).map((ks) => ({ r, ks })))
  .map(({ r, ks }) => {
    const out: Record<string, unknown> = {};
    for (const k of ks) out[k] = (r as Record<string, unknown>)[k];
    return out;
  });

/** The joined key text of before (`keyOf` with `out.join('')`), with the slot values, or `token` for HAS_TOKEN. */
function referenceKey(
  name: string,
  data: Record<string, unknown>,
  steer: Steer,
): { text: string; values: string[] } | 'token' {
  const values: string[] = [];
  const literal = (v: unknown): string => {
    if (v === undefined) return 'u';
    const s = JSON.stringify(v);
    if (ANY_TOKEN.test(s)) throw HAS_TOKEN;
    return s;
  };
  const marked = (v: string, marker: string): string => {
    values.push(v);
    return marker;
  };
  const slot = (v: unknown, s: Steer | undefined): string => {
    if (s?.all) return literal(v);
    if (typeof v === 'string') {
      if (isSlotSafe(v)) return marked(v, '\u0001');
      if (isDigitSlot(v)) return marked(v, '\u0004');
      return literal(v);
    }
    if (typeof v === 'number' && isNumberSlot(v)) return marked(String(v), '\u0003');
    if (Array.isArray(v)) return `[${v.map((x, i) => `${slot(x, s?.kids.get(String(i)))},`).join('')}]`;
    if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      return `{${Object.keys(o)
        .map((k) => `${literal(k)}:${slot(o[k], s?.kids.get(k))},`)
        .join('')}}`;
    }
    return literal(v);
  };
  try {
    let text = `${name}\u0002`;
    for (const k of Object.keys(data)) {
      if (k === 'Ports') continue;
      const v = data[k];
      const body = k === 'Spec' || k === 'Meta' ? slot(v, steer.kids.get(k)) : k === 'Values' ? '#v' : literal(v);
      text += `${k}=${body};`;
    }
    return { text, values };
  } catch (e) {
    if (e === HAS_TOKEN) return 'token';
    throw e;
  }
}

/** Steering: nothing, or the subtree under Spec's key `web` / Meta's item 0 part of the key as it is. */
const steerArb = fc.constantFrom<Array<Array<string>>>(
  [],
  [['Spec', 'web']],
  [
    ['Meta', '0'],
    ['Spec', '}', '0'],
  ],
);

function steerOf(paths: string[][]): Steer {
  const root: Steer = { kids: new Map() };
  for (const p of paths) {
    let node = root;
    for (const seg of p) {
      const next = node.kids.get(seg) ?? { kids: new Map() };
      node.kids.set(seg, next);
      node = next;
    }
    node.all = true;
  }
  return root;
}

t.test('two workloads share a key node exactly when their key texts of before are equal', async (t) => {
  fc.assert(
    fc.property(fc.array(dataArb, { minLength: 2, maxLength: 12 }), steerArb, (stream, steerPaths) => {
      const run = createRenderRun({ plans: { verify: false } });
      const cache = new PlanCache(SHAPE, run.plans) as any;
      const steer = steerOf(steerPaths);
      // Identity roots are keyed by object identity: one object for the whole stream, as for Istio's Values.
      const values = {};
      const got: Array<{ node: unknown; values: string[] } | 'token'> = [];
      const want = stream.map((d) => referenceKey('t', d, steer));
      for (const d of stream) {
        if (d.Values !== undefined || 'Values' in d) d.Values = values;
        const vs: string[] = [];
        try {
          got.push({ node: cache.keyOf('t', d, steer, vs), values: vs });
        } catch (e) {
          if (e !== HAS_TOKEN) throw e;
          got.push('token');
        }
      }
      for (let i = 0; i < stream.length; i++) {
        const w = want[i]!;
        const g = got[i]!;
        if (w === 'token' || g === 'token') {
          if (w !== g) return false;
          continue;
        }
        if (JSON.stringify(g.values) !== JSON.stringify(w.values)) return false;
        for (let j = 0; j < i; j++) {
          const wj = want[j]!;
          const gj = got[j]!;
          if (wj === 'token' || gj === 'token') continue;
          if ((wj.text.replace('#v', '') === w.text.replace('#v', '')) !== (gj.node === g.node)) return false;
        }
      }
      return true;
    }),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) },
  );
  t.pass('keys agree with the texts of before');
});

t.test('keys of data built alike meet at one node; other names, other keys; tokens refused', async (t) => {
  const run = createRenderRun({ plans: { verify: false } });
  const cache = new PlanCache(SHAPE, run.plans) as any;
  const steer = steerOf([]);
  const a = cache.keyOf('t', { Spec: { ',': ['}', 8080] }, Revision: 1337 }, steer, []);
  const b = cache.keyOf('t', { Spec: { ',': ['}', 9090] }, Revision: 1337 }, steer, []);
  const c = cache.keyOf('t', { Spec: { ',': [], '}': 8080 }, Revision: 1337 }, steer, []);
  t.equal(a, b, 'only a slot value differs: one key');
  t.not(a, c, 'other structure: another key');
  const d = cache.keyOf('t', { Spec: 'web', Meta: 0 }, steer, []);
  const e = cache.keyOf('t', { Meta: 'web', Spec: 0 }, steer, []);
  t.not(d, e, 'the same values under other field names: another key');
  t.throws(() => cache.keyOf('t', { Spec: { mi8ph3x: 1 } }, steer, []), HAS_TOKEN, 'a token in a map key');
  t.throws(() => cache.keyOf('t', { Spec: {}, Revision: 80000191737 }, steer, []), HAS_TOKEN, 'a token in a number');
});
