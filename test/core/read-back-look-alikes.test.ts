/**
 * The read-back's fast routes (src/edit/read-back.ts `checkReadBack`: the verifier, then the fast block reader) give
 * the full check's verdict on documents that hold YAML 1.1 booleans (`yes`, `on`, `n`, as keys and values). Those
 * are strings in both readings a manifest must keep (Kubernetes' YAML 1.1 and YAML 1.2 core) and booleans in Go's
 * reading of template output, which the verifier's scalar rules come from: a route that read `yes` as true would
 * pass a text that writes `yes` where the data says true (Kubernetes reads the string "yes").
 *
 * Generated: an old document written in block style with plain look-alikes, the data it reads as, a change of it,
 * and a new text written from the changed data, sometimes wrongly (a boolean written as `yes`/`no`, a look-alike
 * string written plain, a value left as it was). The oracle is the full check made here from the `yaml` package's
 * two readings of both texts.
 */
import t from 'tap';
import fc from 'fast-check';
import { checkReadBack, equalsWithDelta } from '../../src/edit/read-back.ts';
import type { Json, JsonObject } from '../../src/model.ts';
import { readBlockStream } from '../../src/yaml/read/manifest-reader.ts';
import { readCore, readKubernetes } from '../../src/yaml/read/readers.ts';

const LOOK_ALIKES = ['yes', 'on', 'n', 'Y', 'off', 'NO'];
const KEYS = [...LOOK_ALIKES, 'a', 'image', 'tty'];
const STRINGS = [...LOOK_ALIKES, 'x', 'web'];

type Tree = Json;

const scalar: fc.Arbitrary<Tree> = fc.oneof(fc.constantFrom(...STRINGS), fc.boolean(), fc.constantFrom(1, 0, null));
const tree: fc.Arbitrary<JsonObject> = fc.letrec<{ map: JsonObject; value: Tree }>((tie) => ({
  map: fc
    .uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { minLength: 1, maxLength: 4, selector: ([k]) => k })
    .map((pairs) => Object.fromEntries(pairs) as JsonObject),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    tie('map'),
    fc.array(scalar, { minLength: 1, maxLength: 3 }),
  ),
})).map;

/** How a writer writes scalars: `plain` look-alike strings unquoted; `wrongBooleans` booleans as `yes`/`no`. */
interface Style {
  plain: boolean;
  wrongBooleans: boolean;
}

function scalarText(v: Json, s: Style): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return s.wrongBooleans ? (v ? 'yes' : 'no') : String(v);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return s.plain ? v : JSON.stringify(v);
  throw new Error('not a scalar');
}

/** Block YAML of `v` at `indent` (a map's keys written plain when `s.plain`, quoted otherwise). */
function write(v: JsonObject | Json[], indent: number, s: Style): string {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  const entries: Array<[string, Json]> = Array.isArray(v) ? v.map((x) => ['-', x]) : Object.entries(v);
  for (const [k, x] of entries) {
    const head = Array.isArray(v) ? '-' : `${s.plain ? k : JSON.stringify(k)}:`;
    if (x !== null && typeof x === 'object') lines.push(`${pad}${head}\n${write(x, indent + 2, s)}`);
    else lines.push(`${pad}${head} ${scalarText(x, s)}`);
  }
  return lines.join('\n');
}

/** `doc` with the value at a random path replaced (`pick` chooses the path and the value). */
function change(doc: JsonObject, pick: number[], value: Json): JsonObject {
  const copy = structuredClone(doc);
  let at: JsonObject = copy;
  for (const [depth, p] of pick.entries()) {
    const keys = Object.keys(at);
    const k = keys[p % keys.length] as string;
    const child = at[k];
    if (depth === pick.length - 1 || child === null || typeof child !== 'object' || Array.isArray(child)) {
      at[k] = value;
      return copy;
    }
    at = child;
  }
  return copy;
}

/** The full check, from the `yaml` package's readings of both texts (the oracle). */
function fullVerdict(oldText: string, newText: string, old: Json, next: Json): boolean {
  const [b11, a11, b12, a12] = [
    readKubernetes(oldText, true),
    readKubernetes(newText, true),
    readCore(oldText, true),
    readCore(newText, true),
  ].map((r) => (r.ok && r.values.length === 1 ? { value: r.values[0] } : undefined));
  if (!b11 || !a11 || !b12 || !a12) return false;
  return equalsWithDelta(b11.value, a11.value, old, next) && equalsWithDelta(b12.value, a12.value, old, next, true);
}

t.test('look-alike documents: the fast routes give the full check verdict', async (t) => {
  const counts = { fast: 0, passed: 0, refused: 0 };
  fc.assert(
    fc.property(
      tree,
      fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
      scalar,
      fc.record({ plain: fc.boolean(), wrongBooleans: fc.boolean() }),
      fc.boolean(),
      (doc, pick, value, style, keep) => {
        const oldText = `${write(doc, 0, { plain: true, wrongBooleans: false })}\n`;
        const read = readBlockStream(oldText);
        const first = read?.[0];
        // Only documents the fast block reader reads are `simple` (the pipeline reads the others with `yaml`).
        if (!first || 'declined' in first || read?.length !== 1) return true;
        counts.fast++;
        const old = first.value;
        const next = change(old as JsonObject, pick, value);
        const newText = keep ? oldText : `${write(next, 0, style)}\n`;
        const verdict = checkReadBack(oldText, newText, 0, old, next, true) === undefined;
        if (verdict) counts.passed++;
        else counts.refused++;
        return verdict === fullVerdict(oldText, newText, old, next);
      },
    ),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 600) },
  );
  t.ok(counts.fast > 400, `${counts.fast} documents read by the fast block reader`);
  t.ok(counts.passed > 50 && counts.refused > 50, `${counts.passed} passed, ${counts.refused} refused`);
});

t.test('a boolean written as yes where the data says true is refused; yes kept for "yes" passes', async (t) => {
  const oldText = 'tty: yes\nstdin: false\n';
  const old = { tty: 'yes', stdin: false };
  t.equal(
    checkReadBack(oldText, 'tty: yes\nstdin: yes\n', 0, old, { tty: 'yes', stdin: true }, true),
    'the new text reads differently as YAML 1.1 (kubectl)',
  );
  t.equal(checkReadBack(oldText, 'tty: yes\nstdin: true\n', 0, old, { tty: 'yes', stdin: true }, true), undefined);
  t.equal(checkReadBack(oldText, 'tty: true\nstdin: false\n', 0, old, { tty: true, stdin: false }, true), undefined);
  t.equal(
    checkReadBack(oldText, 'tty: yes\nstdin: false\n', 0, old, { tty: true, stdin: false }, true),
    'the new text reads differently as YAML 1.1 (kubectl)',
  );
});
