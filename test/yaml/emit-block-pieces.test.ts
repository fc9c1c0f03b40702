/**
 * Block text written as pieces into one array and joined once, each `key:` or `key: ` from a memo by column
 * (src/yaml/emit/emit-block.ts, issue #40), is the text
 * the block emitter's definition gives: every level of a nested value written line by line from `emitInline`,
 * `literal` and `emitString`, as `key:` or `- ` entries at their columns, whatever parts of it are shared (memoised
 * by place) and wherever it is written (after `key:` or `- `, column, list style, nulls kept or not). The text also
 * reads back, as YAML 1.2, as the value it was written for.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { cloneJson, share } from '../../src/json.ts';
import type { Json } from '../../src/model.ts';
import {
  type BlockStyle,
  emitAfterDash,
  emitAfterKey,
  emitInline,
  emitMapLines,
  emitSeqLines,
  emitString,
  literal,
  spaces,
} from '../../src/yaml/emit/emit-block.ts';

/**
 * The text after `key:` (`afterDash` false; `column` the key's) or `- ` (`column` the dash's) of `v`, by the
 * definition: one entry at a time, each nested level a string of its own.
 */
function byDefinition(v: Json, column: number, afterDash: boolean, style: BlockStyle): string {
  const inline = emitInline(v);
  if (inline !== undefined) return afterDash ? `${inline}\n` : ` ${inline}\n`;
  if (typeof v === 'string') return `${afterDash ? '' : ' '}${literal(v, column + 2)}`;
  if (Array.isArray(v)) {
    const dash = afterDash || style.seqIndent === 'wide' ? column + 2 : column;
    const lines = seqLines(v, dash, style);
    return afterDash ? lines.slice(dash) : `\n${lines}`;
  }
  if (v === null || typeof v !== 'object') throw new Error('emitInline writes every scalar');
  const lines = mapLines(v, column + 2, style);
  return afterDash ? lines.slice(column + 2) : `\n${lines}`;
}

/** Block list lines with dashes at `dash`, by the definition. */
function seqLines(a: Json[], dash: number, style: BlockStyle): string {
  return a.map((x) => `${spaces(dash)}- ${byDefinition(x, dash, true, style)}`).join('');
}

/** Block map lines with keys at `key`, by the definition (null values only with `keepNulls`). */
function mapLines(o: { [k: string]: Json }, key: number, style: BlockStyle): string {
  return Object.keys(o)
    .filter((k) => o[k] !== null || style.keepNulls === true)
    .map((k) => `${spaces(key)}${emitString(k)}:${byDefinition(o[k] as Json, key, false, style)}`)
    .join('');
}

const SCALAR: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom('name', 'istio-proxy', '15020', 'true', '', '*', '{"a":1}', 'a: b', 'line\nnext\n', 'x\n', '- y'),
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.boolean(),
);
const KEY = fc.oneof(
  fc.constantFrom('name', 'value', 'env', 'a b', '-k', 'fieldRef', 'x:', 'true', '', '#c', "it's"),
  fc.string({ maxLength: 4 }),
);

/** JSON values up to four levels deep, with nulls in maps (left out, or written with `keepNulls`) and empty collections. */
const VALUE: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    SCALAR,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(KEY, fc.oneof(tie('v'), fc.constant(null)), { maxKeys: 4 }),
  ),
})).v;

const STYLES: BlockStyle[] = [
  { seqIndent: 'compact' },
  { seqIndent: 'wide' },
  { seqIndent: 'compact', keepNulls: true },
  { seqIndent: 'wide', keepNulls: true },
];

/** `v` with the subtrees that `pick` chooses (in walk order) shared (`share`), the rest writable. */
function partlyShared(v: Json, pick: () => boolean): Json {
  if (v === null || typeof v !== 'object') return v;
  if (pick()) return share(cloneJson(v));
  if (Array.isArray(v)) return v.map((x) => partlyShared(x, pick));
  const out: { [k: string]: Json } = {};
  for (const k of Object.keys(v)) out[k] = partlyShared(v[k] as Json, pick);
  return out;
}

t.test('nested values: the pieces joined once give the text of the definition, shared parts or not', async (t) => {
  let compared = 0;
  fc.assert(
    fc.property(
      VALUE,
      fc.array(fc.boolean(), { maxLength: 12 }),
      fc.tuple(fc.boolean(), fc.nat(8), fc.constantFrom(...STYLES)),
      (value, picks, [afterDash, column, style]) => {
        let i = 0;
        const mixed = partlyShared(value, () => picks[i++ % Math.max(1, picks.length)] === true);
        const want = byDefinition(value, column, afterDash, style);
        const emit = afterDash ? emitAfterDash : emitAfterKey;
        // Twice: the second time a shared part's text comes from the memo of its place.
        for (const v of [value, mixed, mixed]) if (emit(v, column, style) !== want) return false;
        if (
          Array.isArray(value) &&
          value.length > 0 &&
          emitSeqLines(value, column, style) !== seqLines(value, column, style)
        )
          return false;
        // (An empty collection is written inline, `[]` or `{}`, never as lines.)
        const map =
          value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
            ? value
            : undefined;
        if (map && emitMapLines(map, column, style) !== mapLines(map, column, style)) return false;
        compared++;
        return true;
      },
    ),
    { numRuns: 600 },
  );
  t.equal(compared, 600, 'every generated value and place compared');
});

t.test('the text after `key:` reads back as the value (YAML 1.2, a value without nulls)', async (t) => {
  const withoutNulls = (v: Json): Json => {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(withoutNulls);
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v)) if (v[k] !== null) out[k] = withoutNulls(v[k] as Json);
    return out;
  };
  fc.assert(
    fc.property(VALUE, fc.constantFrom(...STYLES.filter((s) => !s.keepNulls)), (value, style) => {
      const v = withoutNulls(value);
      const text = `k:${emitAfterKey(share(cloneJson(v)), 0, style)}`;
      const back = parse(text, { version: '1.2' }) as { k?: Json } | null;
      return JSON.stringify(back?.k) === JSON.stringify(v);
    }),
    { numRuns: 400 },
  );
  t.pass('every generated value reads back');
});

t.test(
  'keys by the thousand at many columns: the memo of `key:` texts, cleared when full, gives every key its text',
  async (t) => {
    const style: BlockStyle = { seqIndent: 'compact' };
    // Keys that are plain, quoted, long (never memoised) or repeated, 3 000 distinct ones: each column's memo fills
    // and is cleared on the way.
    const keys = Array.from({ length: 3000 }, (_, i) =>
      i % 7 === 0 ? `k ${i}: x` : i % 11 === 0 ? `${'long-'.repeat(14)}${i}` : i % 13 === 0 ? 'name' : `key-${i}`,
    );
    let bad = 0;
    for (const _round of [0, 1])
      for (const column of [0, 2, 4, 255, 256, 300])
        for (let i = 0; i < keys.length; i += 50) {
          const map: { [k: string]: Json } = {};
          for (const k of keys.slice(i, i + 50)) map[k] = k.length % 2 === 0 ? 'v' : { inner: [1, 'two'] };
          if (emitAfterKey(map, column, style) !== byDefinition(map, column, false, style)) bad++;
          if (emitAfterDash(map, column, style) !== byDefinition(map, column, true, style)) bad++;
        }
    t.equal(bad, 0, 'every map written as its definition, in both rounds');
  },
);
