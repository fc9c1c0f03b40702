/**
 * The read-back verifier's line shortcuts (src/yaml/read/fragment-verifier.ts, issue #40): a map line that starts
 * with the expected key written plain is taken as that key without scanning it (`plainKey`), and a value that is the
 * expected string itself, written plain, is taken without reading it again (`plainValue`). Each must answer exactly
 * as reading the line does. Generated lines mix the characters that end or change a key or a plain scalar (`: `,
 * ` #`, quotes, indicators, YAML 1.1 look-alikes, trailing spaces, a more indented line after the value) and are
 * checked against the fast reader's reading of the same text: the verifier claims "reads as intended" exactly when
 * the reader reads the expected data.
 */
import t from 'tap';
import fc from 'fast-check';
import type { Json } from '../../src/model.ts';
import { AGREED_FLOW } from '../../src/yaml/read/fragment-lines.ts';
import { readFragmentFast } from '../../src/yaml/read/fragment-reader.ts';
import { verifyFragmentFast } from '../../src/yaml/read/fragment-verifier.ts';
import { readsAs } from '../../src/edit/read-back.ts';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** Pieces of a key or a value: plain words, YAML 1.1 look-alikes, indicators and what ends a plain scalar. */
const piece = fc.constantFrom(
  'a',
  'name',
  'x.io/y',
  'on',
  'yes',
  'No',
  '0644',
  '1',
  '15020',
  '1.5',
  '1e3',
  '0x1f',
  '~',
  'null',
  '-',
  '?',
  ':',
  ' ',
  '#',
  ' #',
  ': ',
  ':x',
  '"',
  "'",
  '[',
  '{',
  '|',
  '>',
  '&',
  '*',
  '!',
  '%',
  '@',
  '`',
  '<<',
  '__proto__',
  'http://h:1/p',
  '\r',
  'b ',
  '\u00a0',
);
const word = fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join(''));

/** One line under test: `key: value` in a map, or `- value` in a list, nested or not, with or without a deeper line after it. */
const line = fc.record({
  key: word,
  value: word,
  gap: fc.constantFrom(' ', '  '),
  list: fc.boolean(),
  nested: fc.boolean(),
  after: fc.constantFrom('', 'next: 1\n', '    more\n', '      deeper: 2\n', '# note\n'),
  // What the data expects: the text's own strings (the shortcut's case), or the reader's reading.
  expectRaw: fc.boolean(),
  // Expected under a key cut short (`a` for the line `a:b: c`): the line only starts like the key.
  cut: fc.option(fc.nat(), { nil: undefined }),
  // After another key (`z: 0`), so that the line is not the map's first (whose key the map's start reads).
  lead: fc.boolean(),
});

/** Whether a map of `v` has a key like an array index (`1`), which JavaScript lists before the others. */
function hasIndexKey(v: Json): boolean {
  if (Array.isArray(v)) return v.some(hasIndexKey);
  if (v === null || typeof v !== 'object') return false;
  return Object.entries(v).some(([k, x]) => /^(?:0|[1-9]\d*)$/.test(k) || hasIndexKey(x));
}

t.test('the key and value shortcuts answer as reading the line does', async (t) => {
  let claimed = 0;
  let raw = 0;
  fc.assert(
    fc.property(line, ({ key, value, gap, list, nested, after, expectRaw, cut, lead }) => {
      const body = (lead ? 'z: 0\n' : '') + (list ? `${key}:\n- ${value}\n` : `${key}:${gap}${value}\n`);
      const inner = nested ? `spec:\n${body.replace(/^/gm, '  ')}` : body;
      const text = `${inner}${after}`;
      const read = readFragmentFast(text, AGREED_FLOW);
      const expectedKey = cut === undefined ? key : key.slice(0, cut % (key.length + 1));
      const own: Json = Object.assign(
        Object.create(null) as Record<string, Json>,
        lead ? { z: 0 } : {},
        list ? { [expectedKey]: [value] } : { [expectedKey]: value },
      );
      const data: Json = nested ? { spec: own } : own;
      const expected: Json =
        expectRaw || read === undefined
          ? after === 'next: 1\n'
            ? Object.assign(Object.create(null) as Record<string, Json>, data, { next: 1 })
            : data
          : read;
      const claim = verifyFragmentFast(text, expected, readsAs);
      const reads = read !== undefined && readsAs(read, expected);
      if (expectRaw) raw++;
      if (claim) claimed++;
      // Sound: a claim only where the reader reads the expected data. Complete: the keys are given once, in the text's
      // order, unless a key is like an array index (JavaScript lists those first: left to the reader).
      if ((claim === true && !reads) || (reads && claim !== true && !hasIndexKey(expected)))
        throw new Error(
          `verifier ${claim}, reader ${JSON.stringify(read)} for ${JSON.stringify(text)} against ${JSON.stringify(expected)}`,
        );
      return true;
    }),
    { numRuns: NUM_RUNS * 5 },
  );
  t.ok(claimed > NUM_RUNS / 2, `${claimed} of ${NUM_RUNS * 5} lines proven (${raw} against their own text)`);
});

t.test('examples: what the shortcuts must not take as written', async (t) => {
  const cases: [string, Json, boolean][] = [
    ['a: b\n', { a: 'b' }, true],
    ['a:b\n', { a: 'b' }, false],
    ['a: b \n', { a: 'b ' }, false],
    ['a: b\u00a0\n', { a: 'b\u00a0' }, false],
    ['a\u00a0: b\n', { 'a\u00a0': 'b' }, false],
    ['z: 0\na:b\n', { z: 0, a: 'b' }, false],
    ['a:b: c\n', { a: 'b: c' }, false],
    ['on: b\n', { on: 'b' }, false],
    ['a: on\n', { a: 'on' }, false],
    ['a: 0644\n', { a: '0644' }, false],
    ['a b: c\n', { 'a b': 'c' }, true],
    ['a: b: c\n', { a: 'b: c' }, false],
    ['a: b #c\n', { a: 'b #c' }, false],
    ['a: b\n  c\n', { a: 'b c' }, false],
    ['a #: b\n', { 'a #': 'b' }, false],
    ['- a\n', ['a'], true],
    ['- -a\n', ['-a'], true],
    ['- - a\n', ['- a'], false],
    ["a: 'b'\n", { a: "'b'" }, false],
    ['"a": b\n', { '"a"': 'b' }, false],
  ];
  // A map expected where the node's line is no key line: only a flow map reads as one.
  cases.push(
    ['a:\n  {b: 1}\n', { a: { b: 1 } }, true],
    ['a:\n  {b: 1}\n', { a: { b: 2 } }, false],
    ['a:\n  b\n', { a: { b: null } }, false],
    ['a:\n  "b: 1"\n', { a: { b: 1 } }, false],
    ['a:\n  [1]\n', { a: {} }, false],
    ['a:\n  |\n    b: 1\n', { a: { b: 1 } }, false],
    ['b\n', { b: null }, false],
    ['{b: 1}\n', { b: 1 }, true],
  );
  for (const [text, expected, claim] of cases) {
    t.equal(verifyFragmentFast(text, expected, readsAs) === true, claim, JSON.stringify(text));
  }
});
