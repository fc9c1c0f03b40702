/**
 * The read-back verifier's scalar shortcuts (src/yaml/read/fragment-verifier.ts, issue #40): a value that is the
 * expected string written in quotes is taken without reading it again (`quotedAs`), a plain one by one pass over it
 * (`plainValue`), and the line table declines document markers by their first character (`scanLine`,
 * src/yaml/read/fragment-lines.ts). Generated values mix what ends, escapes or changes a quoted or plain scalar
 * (quotes inside, `''`, backslashes, a comment or spaces after the closing quote, white space `trimEnd` cuts, `: `,
 * ` #`) and are checked against the fast reader's reading of the same text: the verifier claims "reads as intended"
 * exactly when the reader reads the expected data, above all where the text between the quotes is not the value.
 */
import t from 'tap';
import fc from 'fast-check';
import type { Json } from '../../src/model.ts';
import { AGREED_FLOW } from '../../src/yaml/read/fragment-lines.ts';
import { readFragmentFast } from '../../src/yaml/read/fragment-reader.ts';
import { verifyFragmentFast } from '../../src/yaml/read/fragment-verifier.ts';
import { readsAs } from '../../src/edit/read-back.ts';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** Pieces of a scalar: words, quotes, escapes, comment and key indicators, white space JavaScript trims. */
const piece = fc.constantFrom(
  'a',
  'b c',
  '15020',
  'on',
  '{"k":"v"}',
  "'",
  "''",
  '"',
  '\\',
  '\\"',
  '\\n',
  '\\x41',
  ' #',
  '#',
  ': ',
  ':',
  ' ',
  '\r',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\u000b',
  '~',
  '!',
);
const inner = fc.array(piece, { maxLength: 5 }).map((p) => p.join(''));

/** A value line: the inner text in single or double quotes (or none), then perhaps spaces or a comment. */
const value = fc.record({
  quote: fc.constantFrom("'", '"', ''),
  inner,
  tail: fc.constantFrom('', '', ' ', ' # c', '#c', "'", '"'),
  list: fc.boolean(),
  after: fc.constantFrom('', 'next: 1\n', '    more\n', '# note\n'),
  // What the data expects: the text between the quotes as written (the shortcut's case), or the reader's reading.
  expectInner: fc.boolean(),
});

t.test('the quoted and plain value shortcuts answer as reading the line does', async (t) => {
  let claimed = 0;
  fc.assert(
    fc.property(value, ({ quote, inner, tail, list, after, expectInner }) => {
      const written = `${quote}${inner}${quote}${tail}`;
      const text = `${list ? `a:\n- ${written}` : `a: ${written}`}\n${after}`;
      const read = readFragmentFast(text, AGREED_FLOW);
      const own: Json = expectInner || read === undefined ? { a: list ? [inner] : inner } : read;
      const expected: Json =
        after === 'next: 1\n' && (expectInner || read === undefined) ? { ...(own as object), next: 1 } : own;
      const claim = verifyFragmentFast(text, expected, readsAs);
      const reads = read !== undefined && readsAs(read, expected);
      if (claim) claimed++;
      if ((claim === true && !reads) || (reads && claim !== true))
        throw new Error(
          `verifier ${claim}, reader ${JSON.stringify(read)} for ${JSON.stringify(text)} against ${JSON.stringify(expected)}`,
        );
      return true;
    }),
    { numRuns: NUM_RUNS * 5 },
  );
  t.ok(claimed > NUM_RUNS / 2, `${claimed} of ${NUM_RUNS * 5} values proven`);
});

t.test('examples: quoted values whose text between the quotes is not the value', async (t) => {
  const cases: [string, Json, boolean][] = [
    ["a: 'b'\n", { a: 'b' }, true],
    ['a: "b"\n', { a: 'b' }, true],
    ['a: ""\n', { a: '' }, true],
    ["a: 'it''s'\n", { a: "it''s" }, false],
    ["a: 'it''s'\n", { a: "it's" }, true],
    ['a: "b\\"c"\n', { a: 'b\\"c' }, false],
    ['a: "b\\nc"\n', { a: 'b\\nc' }, false],
    ['a: "b\\\\"\n', { a: 'b\\\\' }, false],
    ["a: 'b\\n'\n", { a: 'b\\n' }, true],
    ["a: 'b\"'\n", { a: 'b"' }, true],
    ['a: "b\'"\n', { a: "b'" }, true],
    ["a: 'b' # c\n", { a: 'b' }, true],
    ["a: 'b'c'\n", { a: "b'c" }, false],
    // No closing quote: the text between the first and the last character is not a quoted value.
    ["a: 'bc\n", { a: 'b' }, false],
    ['a: "b\'\n', { a: 'b' }, false],
    ['a: "b"c"\n', { a: 'b"c' }, false],
    ["a: 'b' \n", { a: 'b' }, true],
    ["a: 'b'\n  c\n", { a: 'b' }, false],
    ['a: b\u3000\n', { a: 'b\u3000' }, false],
    ['a: b\u2028\n', { a: 'b\u2028' }, false],
    ['a: b:\n', { a: 'b:' }, false],
    ['a: b:c\n', { a: 'b:c' }, true],
    ['a: b#c\n', { a: 'b#c' }, true],
  ];
  for (const [text, expected, claim] of cases) {
    t.equal(verifyFragmentFast(text, expected, readsAs) === true, claim, printable(text));
  }
});

/** `text` as a JSON string with every character outside printable ASCII escaped (a U+2028 would split a TAP line). */
function printable(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A line's content (after its indentation) that the line table declines: a document marker or a directive. */
function isMarker(content: string): boolean {
  return content === '---' || content === '...' || content.startsWith('--- ') || content.startsWith('%');
}

t.test('a document marker or a directive on any line, at any indentation, declines', async (t) => {
  const content = fc
    .array(fc.constantFrom('-', '.', '%', ' ', 'x', '---', '...', '--- ', '#'), { minLength: 1, maxLength: 4 })
    .map((p) => p.join('').trim());
  let markers = 0;
  fc.assert(
    fc.property(content, fc.constantFrom('', '  ', '    '), (c, indent) => {
      const text = `a:\n${indent}${c}\n`;
      if (!isMarker(c)) return true;
      markers++;
      // Both the reader and the verifier decline, whatever the data expected.
      if (readFragmentFast(text) !== undefined) throw new Error(`read ${JSON.stringify(text)}`);
      for (const expected of [{ a: c }, { a: [c] }, { a: null }, { a: { [c]: null } }] as Json[])
        if (verifyFragmentFast(text, expected, readsAs) !== undefined)
          throw new Error(`claimed ${JSON.stringify(text)}`);
      return true;
    }),
    { numRuns: NUM_RUNS * 2 },
  );
  t.ok(markers > NUM_RUNS / 10, `${markers} texts with a marker line`);
  for (const text of ['a: 1\n---\n', 'a:\n  ...\n', 'a:\n  --- x\n', 'a: 1\n%YAML 1.1\n'])
    t.equal(readFragmentFast(text), undefined, JSON.stringify(text));
  t.same(readFragmentFast('a:\n  -- -\n'), { a: '-- -' });
  t.same(readFragmentFast('a:\n  .. .\n'), { a: '.. .' });
});
