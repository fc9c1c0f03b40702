/**
 * The fast block reader (`readBlockStream`) reads each document of a stream exactly as it reads that document
 * alone: the same data, the same text tree (shifted by the document's offset), the same declines. The reader
 * keeps state across documents (its cache of short plain scalars, by a hash of their text): this holds it to
 * depending only on the text. The generated streams repeat keys and values across documents (cache hits) and
 * use more distinct short scalars than the cache has entries (different texts in the same entry).
 */
import t from 'tap';
import fc from 'fast-check';
import { readBlockStream } from '../../src/yaml/read/manifest-reader.ts';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

/** Scalars the reader reads, declines, or reads differently as keys and as values; and many plain words. */
const special = fc.constantFrom(
  'true',
  'yes',
  'null',
  '~',
  '0x1F',
  '007',
  '1_000',
  '.inf',
  '1:20',
  '12',
  '1.5',
  '-1',
  '<<',
  '__proto__',
  'toString',
  'a #b',
  'x y',
  '-k',
  'é',
);
const unit = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom('a', 'b', 'c', 'A', '1', '0', '.', '_') },
  { weight: 1, arbitrary: fc.constantFrom('-', ':', ' ') },
);
const word = fc.string({ unit, minLength: 1, maxLength: 9 });
const scalar = fc.oneof({ weight: 1, arbitrary: special }, { weight: 15, arbitrary: word });
const key = fc.oneof(
  { weight: 1, arbitrary: special },
  {
    weight: 20,
    arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', 'A', 'B', '.', '/'), minLength: 1, maxLength: 6 }),
  },
);

type Gen =
  | { kind: 'scalar'; s: string; q: boolean }
  | { kind: 'map'; entries: Array<[string, Gen]> }
  | { kind: 'seq'; items: Gen[] };
const tree: fc.Arbitrary<Gen> = fc.letrec<{ node: Gen }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('scalar' as const), s: scalar, q: fc.boolean() }),
    fc
      .uniqueArray(fc.tuple(key, tie('node')), { minLength: 1, maxLength: 5, selector: (e) => e[0] })
      .map((entries) => ({ kind: 'map' as const, entries })),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((items) => ({ kind: 'seq' as const, items })),
  ),
})).node;

function render(g: Gen, indent: number): string {
  const pad = ' '.repeat(indent);
  if (g.kind === 'scalar') return `${g.q ? JSON.stringify(g.s) : g.s}\n`;
  if (g.kind === 'map')
    return `\n${g.entries.map(([k, v]) => `${pad}${k}:${v.kind === 'scalar' ? ' ' : ''}${render(v, indent + 2)}`).join('')}`;
  return `\n${g.items.map((v) => `${pad}- ${render(v, indent + 2).replace(/^\n */, '')}`).join('')}`;
}

/** The reader's documents with every offset made relative to `base`. */
function shifted(docs: ReturnType<typeof readBlockStream>, base: number): unknown {
  const offsets = new Set(['start', 'end', 'outerEnd', 'from', 'to']);
  return JSON.parse(JSON.stringify(docs ?? null, (k, v) => (offsets.has(k) && typeof v === 'number' ? v - base : v)));
}

t.test('generated streams: each document reads as it reads alone, whatever came before it', async (t) => {
  let declined = 0;
  let read = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.uniqueArray(fc.tuple(key, tree), { minLength: 1, maxLength: 3, selector: (e) => e[0] }),
          fc.oneof(
            { weight: 3, arbitrary: fc.constant(undefined) },
            {
              weight: 1,
              arbitrary: fc.tuple(fc.nat(), fc.constantFrom(' ', '\t', ':', '- ', '#', '"', '[', '&a ', '---\n')),
            },
          ),
        ),
        { minLength: 1, maxLength: 40 },
      ),
      (docs) => {
        const texts = docs.map(([entries, edit]) => {
          let text = render({ kind: 'map', entries }, 0).replace(/^\n/, '');
          if (edit) {
            const at = edit[0] % (text.length + 1);
            text = text.slice(0, at) + edit[1] + text.slice(at);
          }
          // Each document on its own lines: text after the last newline would run into the next `---` line.
          return `---\n${text}${text.endsWith('\n') ? '' : '\n'}`;
        });
        const alone = texts.map((text) => readBlockStream(text));
        const stream = readBlockStream(texts.join(''));
        if (alone.some((d) => d === undefined)) {
          if (stream !== undefined)
            throw new Error('a document declined alone as a whole input, but not in the stream');
          return;
        }
        if (stream === undefined) throw new Error('the stream declined as a whole, but no document alone');
        let base = 0;
        const expected = alone.flatMap((d, i) => {
          const out = shifted(d, -base) as unknown[];
          base += texts[i]?.length ?? 0;
          return out;
        });
        for (const d of alone.flat()) {
          if (d && 'declined' in d) declined++;
          else read++;
        }
        const actual = shifted(stream, 0);
        if (JSON.stringify(actual) !== JSON.stringify(expected))
          throw new Error(`${JSON.stringify(texts.join(''))}: the stream reads otherwise than its documents alone`);
      },
    ),
    { numRuns: NUM_RUNS },
  );
  // Both kinds occur: the property compares reads and declines, not only one of them.
  t.ok(read > NUM_RUNS, `${read} documents read`);
  t.ok(declined > NUM_RUNS, `${declined} documents declined`);
});
