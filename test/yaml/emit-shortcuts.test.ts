/**
 * The emitter's shortcuts (src/yaml/emit/emit-block.ts, issue #40) give what its general paths give: indicator-led
 * strings quoted without the patterns or the cache (`emitString` against `quote`), literal blocks indented in one
 * pass (`literal` against splitting, indenting and joining the lines), and a shared subtree's text memoised by place
 * (the same subtree written at several columns and styles, against a writable copy of it, which is never memoised),
 * the plain names read character by character (`isSimplePlain` against the pattern it replaces), and a mapping's
 * entries written as `key:` and the text after it (`emitMapLines` against `emitAfterKey` of each value).
 */
import t from 'tap';
import fc from 'fast-check';
import { cloneJson, share } from '../../src/json.ts';
import type { Json } from '../../src/model.ts';
import {
  type BlockStyle,
  emitAfterDash,
  emitAfterKey,
  emitMapLines,
  emitString,
  isSimplePlain,
  literal,
  quote,
  spaces,
} from '../../src/yaml/emit/emit-block.ts';

/** The literal block as the emitter wrote it before the one-pass form: lines split, non-empty ones indented, joined. */
function literalByLines(s: string, indent: number): string {
  const chomp = s.endsWith('\n') ? (s.endsWith('\n\n') ? '+' : '') : '-';
  const body = chomp === '-' ? s : s.slice(0, -1);
  const pad = spaces(indent);
  const lines = body.split('\n').map((l) => (l === '' ? '' : pad + l));
  return `|${chomp}\n${lines.join('\n')}\n`;
}

const INDICATORS = [...',[]{}#&*!|>\'"%@`'];
/** Characters that change a quoting decision: quotes, escapes, line breaks, NEL, LS, BOM, DEL, `: `, ` #`. */
const TRICKY = fc.constantFrom("'", '"', '\\', '\n', '\t', '\x85', '\u2028', '\ufeff', '\x7f', '\x01', ': ', ' #', ' ');

t.test('emitString: an indicator-led string is quoted as the general path quotes it', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(...INDICATORS),
      fc.array(fc.oneof(fc.string({ maxLength: 6 }), TRICKY), { maxLength: 6 }),
      (lead, rest) => {
        const s = lead + rest.join('');
        runs++;
        // Twice: the second call would meet a cached form, if one were kept.
        return emitString(s) === quote(s) && emitString(s) === quote(s);
      },
    ),
    { numRuns: 2000 },
  );
  t.equal(runs, 2000, 'every generated string checked');
  t.equal(emitString('{"scrape":"true"}'), `'{"scrape":"true"}'`, 'JSON in single quotes');
  t.equal(emitString("[it's]"), `'[it''s]'`, 'a single quote doubled');
  t.equal(emitString('{\u0085}'), '"{\\N}"', 'NEL escaped in double quotes');
});

t.test('literal: one-pass indentation equals the lines indented one by one', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant(''), fc.constant('\n'), fc.string({ maxLength: 5 })), { maxLength: 8 }),
      fc.nat(12),
      (parts, indent) => {
        const s = parts.join('\n');
        if (!s.includes('\n')) return true;
        runs++;
        return literal(s, indent) === literalByLines(s, indent);
      },
    ),
    { numRuns: 1000 },
  );
  t.ok(runs > 500, `multi-line strings checked (${runs})`);
  t.equal(literal('\n\na\n\n', 2), '|+\n\n\n  a\n\n', 'leading and trailing empty lines stay empty');
  t.equal(literal('[\n  {}\n]', 4), '|-\n    [\n      {}\n    ]\n', 'no final break: strip');
});

t.test('a shared subtree written at several places reads as its writable copy at each', async (t) => {
  const container: Json = {
    name: 'proxy',
    args: ['a', 'b'],
    env: [
      { name: 'X', value: '{"k":1}' },
      { name: 'Y', value: 'line\nnext\n' },
    ],
    ports: [],
  };
  const styles: BlockStyle[] = [
    { seqIndent: 'compact' },
    { seqIndent: 'wide' },
    { seqIndent: 'compact', keepNulls: true },
    { seqIndent: 'wide', keepNulls: true },
  ];
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.nat(10), fc.constantFrom(...styles)), { minLength: 1, maxLength: 12 }),
      (places) => {
        // One shared subtree per run, written at each generated place in turn (places repeat and alternate).
        const shared = share(cloneJson(container));
        for (const [afterDash, column, style] of places) {
          const writable = cloneJson(container);
          const emit = afterDash ? emitAfterDash : emitAfterKey;
          if (emit(shared, column, style) !== emit(writable, column, style)) return false;
        }
        return true;
      },
    ),
    { numRuns: 300 },
  );
  t.pass('every place gives the writable copy text');
});

/** The pattern `isSimplePlain` reads character by character (src/yaml/emit/emit-block.ts, before issue #40's loop). */
const SIMPLE_PLAIN = /^[a-dg-mpqrsuvwxzA-DG-MPQRSUVWXZ/][a-zA-Z0-9_./-]*(?::[a-zA-Z0-9_./-]+)*$/;

t.test('isSimplePlain: the character loop decides as the pattern', async (t) => {
  // Every ASCII character alone and after a name: the table's two classes and everything outside them.
  for (let c = 0; c < 160; c++) {
    const ch = String.fromCharCode(c);
    for (const s of [ch, `a${ch}`, `a${ch}b`, `a:${ch}`])
      if (isSimplePlain(s) !== SIMPLE_PLAIN.test(s)) t.fail(`decided otherwise for ${JSON.stringify(s)}`);
  }
  const piece = fc.oneof(
    { arbitrary: fc.constantFrom('a', 'Z', '/', '.', '-', '_', '0', '9', ':'), weight: 8 },
    { arbitrary: fc.constantFrom('e', 'n', 'y', 'T', '::', ' ', '#', 'é', '\n', '\u{1F600}'), weight: 1 },
  );
  let plain = 0;
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
      const s = parts.join('');
      if (SIMPLE_PLAIN.test(s)) plain++;
      return isSimplePlain(s) === SIMPLE_PLAIN.test(s) && emitString(s) === quote(s);
    }),
    { numRuns: 3000 },
  );
  t.ok(plain > 300, `simple names among the strings (${plain} of 3000)`);
  t.ok(isSimplePlain('docker.io/istio/proxyv2:1.31.0') && isSimplePlain('kubernetes://apis/apps/v1'), 'images, URLs');
  t.notOk(
    isSimplePlain('') || isSimplePlain('a:') || isSimplePlain('a::b') || isSimplePlain('true'),
    'empty, a final or double colon, typed',
  );
});

/** Values with every form of entry: inline scalars, empty and non-empty collections, multi-line strings, nulls. */
const VALUE: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom<Json>('x', 'a b', 'line\nnext\n', 'one\ntwo', '', 'true', 15020, null, false, [], {}),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('name', 'value', 'a b', 'on', '-k'), tie('v'), { maxKeys: 3 }),
  ),
})).v;

t.test('emitMapLines: each entry is its key, a colon and the text after the key (`emitAfterKey`)', async (t) => {
  const styles: BlockStyle[] = [
    { seqIndent: 'compact' },
    { seqIndent: 'wide' },
    { seqIndent: 'wide', keepNulls: true },
  ];
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom('env', 'args', 'x', 'name'), fc.tuple(VALUE, fc.boolean()), { maxKeys: 4 }),
      fc.nat(6),
      fc.constantFrom(...styles),
      (entries, column, style) => {
        // Some values shared (their text from the memo), some writable.
        const o: { [k: string]: Json } = {};
        for (const [k, [v, shared]] of Object.entries(entries)) o[k] = shared ? share(cloneJson(v)) : v;
        let want = '';
        for (const [k, v] of Object.entries(o))
          if (v !== null || style.keepNulls)
            want += `${spaces(column)}${emitString(k)}:${emitAfterKey(v, column, style)}`;
        return emitMapLines(o, column, style) === want;
      },
    ),
    { numRuns: 1000 },
  );
  const compact: BlockStyle = { seqIndent: 'compact' };
  const wide: BlockStyle = { seqIndent: 'wide' };
  t.equal(emitMapLines({ a: 'x\ny' }, 2, compact), '  a: |-\n    x\n    y\n', 'a literal block under its key');
  t.equal(emitMapLines({ a: ['x'], b: { c: 1 } }, 2, wide), '  a:\n    - x\n  b:\n    c: 1\n', 'a wide list, a map');
  t.equal(emitMapLines({ a: ['x'] }, 0, compact), 'a:\n- x\n', 'a compact list');
  t.equal(emitMapLines(share({ a: ['x'], b: {} }), 2, wide), '  a:\n    - x\n  b: {}\n', 'a shared map');
});
