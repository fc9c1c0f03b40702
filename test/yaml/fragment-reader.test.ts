/**
 * The fragment reader (`parseFragment`, the reading of rendered template output) against the `yaml`
 * package in YAML 1.1 mode as Go reads it (`FRAGMENT_YAML_OPTIONS`): whatever the fast reader
 * (`readFragmentFast`) accepts it must read exactly as `yaml` does, whatever `yaml` rejects it must
 * decline, and what it declines is pinned here (the decline list) together with its acceptance rate on
 * the shapes templates produce. Checked on hand-picked cases and on generated fragments (fast-check).
 */
import t from 'tap';
import fc from 'fast-check';
import { AGREED_FLOW } from '../../src/yaml/read/fragment-lines.ts';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { parseFragment, readFragmentFast } from '../../src/yaml/read/fragment-reader.ts';
import { FRAGMENT_YAML_OPTIONS } from '../../src/yaml/read/readers.ts';
import type { Json } from '../../src/model.ts';
import { corpus, needs } from '../helpers/data.ts';

const ISTIO = corpus('conformance/istio');
const BOOKINFO = corpus('real-world/bookinfo/bookinfo.yaml');

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

type Verdict = { accepted: false; yamlOk: boolean } | { accepted: true; problem?: string };

/** Reads `text` with the fast reader and with `yaml`, and compares them. */
function compare(text: string): Verdict {
  let expected: Json | undefined;
  let yamlError: string | undefined;
  try {
    expected = parse(text, FRAGMENT_YAML_OPTIONS) as Json;
  } catch (e) {
    yamlError = (e as Error).message.split('\n')[0];
  }
  const mine = readFragmentFast(text);
  if (mine === undefined) return { accepted: false, yamlOk: yamlError === undefined };
  if (yamlError !== undefined)
    return {
      accepted: true,
      problem: `yaml rejects it (${yamlError}) but the fast reader reads ${JSON.stringify(mine)}`,
    };
  const a = JSON.stringify(mine);
  const b = JSON.stringify(expected ?? null);
  return a === b ? { accepted: true } : { accepted: true, problem: `fast reader: ${a}, yaml: ${b}` };
}

t.test('the forms templates render are read by the fast reader, as yaml reads them', async (t) => {
  const cases = [
    'a: 1\nb: "2"\nc: yes\nd: on\ne: ~\nf:\ng: 1.5\nh: -3\ni: "x\\ty\\"z"\nj: \'it\'\'s\'\nk: 0\n',
    'spec:\n  containers:\n  - name: a\n    args:\n      - "-p"\n      - 15001\n    env: []\n  - name: b\n    ports: [{containerPort: 15090, name: http, protocol: TCP}]\n',
    'metadata:\n  annotations: {\n    a: "1",\n    b.io/c: \'x\',\n  }\n  labels:\n    x: y # comment\n# full comment\n\n  other: z\n',
    'env:\n- name: A\n  value: |\n    line1\n\n    line2\n- name: B\n  value: |-\n    only\n- name: C\n  value: |\n    text\n\nnext: 1\n',
    '- - a\n  - b\n- c\n-\n  d: 1\n',
    'key: value with spaces and colons inside? no\n',
    'emptyDir: {}\nlist: []\nnested: {a: {b: [1, 2, {c: d}]}}\n',
    'url: http://example.com:8080/x\nhost: "[fd00::1]:20001"\n',
    'keep: |+\n  a\n\nafter: 1\n',
    'annotations: {\'sidecar.istio.io/status\': \'{"a":1}\', prometheus.io/port: "15020",}\n',
  ];
  for (const c of cases) {
    const v = compare(c);
    t.ok(v.accepted, `accepted: ${JSON.stringify(c).slice(0, 70)}`);
    if (v.accepted) t.equal(v.problem, undefined, JSON.stringify(c));
  }
  t.same(
    readFragmentFast('a: |+\n  x\n\n'),
    { a: 'x\n\n' },
    '`|+` at the end of the text keeps its empty lines, not one more (the reader added a line break)',
  );
  t.same(
    parseFragment('ports: [{containerPort: 15090, name: http-envoy-prom,},]\n'),
    { ports: [{ containerPort: 15090, name: 'http-envoy-prom' }] },
    'trailing commas, as Istio writes them',
  );
});

t.test('plain scalars: YAML 1.1 as Go reads it (sigs.k8s.io/yaml, go-yaml v2 resolve.go)', async (t) => {
  const read = (s: string): Json => (parseFragment(`v: ${s}\n`) as { v: Json }).v;
  // Each line names a case where an earlier copy of the rules read otherwise.
  t.equal(
    read('1.5e3'),
    1500,
    'an exponent float with a fraction is a float (the fast reader read the string "1.5e3")',
  );
  t.equal(read('.5e3'), 500, '.5e3 is a float');
  t.equal(read('1.e5'), 100000, '1.e5 is a float (yamlStyleFloat)');
  t.equal(read('09'), 9, '09 is the number 9 (not octal, a float to Go, 9 to yaml; the fast reader read "09")');
  t.equal(read('.'), '.', '. is a string: a float needs a digit (the reader read NaN)');
  t.equal(read('-.'), '-.', '-. is a string');
  t.equal(read('e5'), 'e5', 'e5 is a string');
  t.equal(
    read('2024-01-01'),
    '2024-01-01',
    'a timestamp stays text (go-yaml v2 keeps it a string; the reader made a Date)',
  );
  t.equal(read('2001-12-14t21:59:43.10-05:00'), '2001-12-14t21:59:43.10-05:00', 'a full timestamp stays text');
  t.equal(read('1:20'), '1:20', 'base 60 is a string: go-yaml never read it (the reader read 80)');
  // Unchanged YAML 1.1 forms.
  t.equal(read('0644'), 420, 'legacy octal');
  t.equal(read('0x1F'), 31, 'hex');
  t.equal(read('1_000'), 1000, 'digit separators');
  t.equal(read('0b101'), 5, 'binary');
  t.equal(read('yes'), true, 'yes');
  t.equal(read('Off'), false, 'Off');
  t.equal(read('y'), true, 'y');
  t.equal(read('~'), null, '~');
  t.equal(read('.inf'), Infinity, '.inf');
  t.equal(read('"0644"'), '0644', 'quoted: a string');
});

t.test('the decline list: what the fast reader leaves to yaml, which still reads it', async (t) => {
  const declined: Array<[string, string]> = [
    ['anchor and alias', 'a: &x 1\nb: *x\n'],
    ['tag', 'a: !!str 1\n'],
    ['explicit key', '? a\n: b\n'],
    ['directive', '%YAML 1.1\n---\na: 1\n'],
    ['document marker', '---\na: 1\n'],
    ['tab in indentation', 'a:\n\tb: 1\n'],
    ['multi-line plain scalar', 'plain: first\n  continued\n'],
    ['multi-line quoted scalar', 'q: "first\n  second"\n'],
    ['folded block scalar', 'folded: >\n  a\n  b\n'],
    ['block scalar indentation indicator', 'a: |2\n   x\n'],
    ['merge key (block)', 'base: {a: 1}\nm:\n  <<: {b: 2}\n  c: 3\n'],
    ['merge key (flow)', 'm: {<<: {b: 2}, c: 3}\n'],
    ['__proto__ key', '__proto__: {a: 1}\n'],
    ['duplicate key in flow', 'm: {a: 1, a: 2}\n'],
    ['implicit null in flow', 'm: {a, b: 1}\n'],
    ['non-string key in flow', 'm: {yes: 1}\n'],
    ['hex', 'a: 0x1F\n'],
    ['legacy octal', 'a: 0644\n'],
    ['digit separators', 'a: 1_000\n'],
    ['base 60', 'a: 1:20\n'],
    ['.inf', 'a: .inf\n'],
    ['integer beyond 2^53', 'a: 12345678901234567890\n'],
    ['nested map on the key line', 'a: b: c\n'],
    ['text after a flow collection', 'a: [1, 2] x\n'],
    ['unclosed flow collection', 'a: [1, 2\n'],
    ['wrong indentation', 'a:\n    b: 1\n  c: 2\n'],
  ];
  for (const [name, text] of declined) t.equal(readFragmentFast(text), undefined, `declined: ${name}`);
  // What parseFragment then reads (through yaml), written out by hand.
  const read: Array<[string, Json]> = [
    ['a: &x 1\nb: *x\n', { a: 1, b: 1 }],
    ['a: !!str 1\n', { a: '1' }],
    ['? a\n: b\n', { a: 'b' }],
    ['plain: first\n  continued\n', { plain: 'first continued' }],
    ['folded: >\n  a\n  b\n', { folded: 'a b\n' }],
    ['a: 0x1F\nb: 0644\nc: 1_000\nd: 1:20\n', { a: 31, b: 420, c: 1000, d: '1:20' }],
    ['m: {<<: {b: 2}, c: 3}\n', { m: { b: 2, c: 3 } }],
  ];
  for (const [text, value] of read) t.same(parseFragment(text), value, `read: ${JSON.stringify(text)}`);
  t.throws(() => parseFragment('a: [1, 2\n'), 'not YAML: the yaml error');
  t.same(
    parseFragment('base: &b {a: 1}\nm:\n  <<: *b\n  c: 3\n'),
    { base: { a: 1 }, m: { a: 1, c: 3 } },
    'merge keys are applied, as Go does',
  );
  t.same(parseFragment('a: 1\na: 2\n'), { a: 2 }, 'a repeated key keeps its last value, as Go does');
});

// Generated fragments: the shapes templates produce (nested maps and lists, quoted and plain scalars with
// YAML 1.1 look-alikes, multi-line strings, flow collections, comments, empty values).
const plainText = fc.constantFrom(
  'istio-proxy',
  'docker.io/istio/proxyv2:1.22.0',
  '15020',
  '0',
  '-1',
  '1.5',
  '1.5e3',
  '.5',
  '1.',
  '09',
  '0644',
  '0x1F',
  '1_000',
  '1:20',
  '.inf',
  '.nan',
  '.',
  'e5',
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'true',
  'False',
  '~',
  'null',
  '2024-01-01',
  '12345678901234567890',
  'http://h:80/p',
  '$(POD_NAME)',
  '--log_output_level=default:info',
  'a b c',
  'é ü',
  '-x',
  'x-',
  '1.20',
);
const quotedText = fc.constantFrom(
  '',
  'yes',
  '0644',
  'a "quoted" word',
  "it's",
  'tab\there',
  'line\nbreak',
  '\\',
  '#x',
  '{"a":1}',
  'é',
  '🙂',
  ': x',
);
const keyText = fc.constantFrom(
  'name',
  'image',
  'args',
  'sidecar.istio.io/status',
  'prometheus.io/port',
  'a b',
  '"quoted key"',
  "'single'",
  'yes',
  '1',
  '<<',
  '__proto__',
  'name',
);
const multiline = fc.constantFrom('line1\nline2\n', 'a\n\n  indented\nb', 'keep\n\n', 'x', '# not a comment\n');

type Gen =
  | { kind: 'plain'; s: string }
  | { kind: 'quoted'; s: string; single: boolean }
  | { kind: 'empty' }
  | { kind: 'block'; s: string; header: '|' | '|-' | '|+' | '>' }
  | { kind: 'map'; entries: Array<[string, Gen]>; flow: boolean; trailing: boolean; multiline: boolean }
  | { kind: 'seq'; items: Gen[]; flow: boolean; trailing: boolean; wide: boolean };

const tree: fc.Arbitrary<Gen> = fc.letrec<{ node: Gen }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    plainText.map((s) => ({ kind: 'plain' as const, s })),
    fc.tuple(quotedText, fc.boolean()).map(([s, single]) => ({ kind: 'quoted' as const, s, single })),
    fc.constant({ kind: 'empty' as const }),
    fc
      .tuple(multiline, fc.constantFrom('|' as const, '|-' as const, '|+' as const, '>' as const))
      .map(([s, header]) => ({ kind: 'block' as const, s, header })),
    fc
      .tuple(
        fc.array(fc.tuple(keyText, tie('node')), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
      )
      .map(([entries, flow, trailing, ml]) => ({ kind: 'map' as const, entries, flow, trailing, multiline: ml })),
    fc
      .tuple(fc.array(tie('node'), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean(), fc.boolean())
      .map(([items, flow, trailing, wide]) => ({ kind: 'seq' as const, items, flow, trailing, wide })),
  ),
})).node;

function quote(s: string, single: boolean): string {
  return single && !/[\n\t\\]/.test(s) ? `'${s.replace(/'/g, "''")}'` : JSON.stringify(s);
}

/** A node in flow context (inside `{}` / `[]`), or undefined where it cannot be written there. */
function flowText(g: Gen): string {
  switch (g.kind) {
    case 'plain':
      return g.s;
    case 'quoted':
      return quote(g.s, g.single);
    case 'empty':
      return '""';
    case 'block':
      return JSON.stringify(g.s);
    case 'map':
      return `{${g.entries.map(([k, v]) => `${k}: ${flowText(v)}`).join(', ')}${g.trailing ? ',' : ''}}`;
    case 'seq':
      return `[${g.items.map(flowText).join(', ')}${g.trailing ? ',' : ''}]`;
  }
}

/** The text after `key:` or `- ` for a node whose parent is at `indent`; comments now and then. */
function after(g: Gen, indent: number, salt: number, comments: boolean): string {
  const c = comments && salt % 3 === 0 ? ' # note' : '';
  const pad = ' '.repeat(indent + 2);
  switch (g.kind) {
    case 'plain':
      return ` ${g.s}${c}\n`;
    case 'quoted':
      return ` ${quote(g.s, g.single)}${c}\n`;
    case 'empty':
      return `${c}\n`;
    case 'block':
      return ` ${g.header}${c}\n${g.s
        .split('\n')
        .map((l) => (l === '' ? '' : pad + l))
        .join('\n')}\n`;
    case 'map':
      if (g.flow) {
        if (!g.multiline) return ` ${flowText(g)}${c}\n`;
        return ` {\n${g.entries.map(([k, v]) => `${pad}${k}: ${flowText(v)},${c}\n`).join('')}${' '.repeat(indent)}}\n`;
      }
      return `${c}\n${block(g, indent + 2, salt, comments)}`;
    case 'seq':
      if (g.flow) return ` ${flowText(g)}${c}\n`;
      return `${c}\n${block(g, g.wide ? indent + 2 : indent, salt, comments)}`;
  }
}

/** A block collection whose keys or dashes are at `indent`. */
function block(g: Gen & { kind: 'map' | 'seq' }, indent: number, salt: number, comments: boolean): string {
  const pad = ' '.repeat(indent);
  if (g.kind === 'map')
    return g.entries.map(([k, v], i) => `${pad}${k}:${after(v, indent, salt + i + 1, comments)}`).join('');
  return g.items
    .map((v, i) => {
      if (v.kind === 'map' && !v.flow)
        return `${pad}- ${block(v, indent + 2, salt + i + 1, comments).slice(indent + 2)}`;
      return `${pad}-${after(v, indent, salt + i + 1, comments)}`;
    })
    .join('');
}

const edit = fc.option(
  fc.tuple(
    fc.nat(),
    fc.constantFrom(
      ' ',
      '  ',
      '\t',
      ':',
      ': ',
      '- ',
      '#',
      ' #',
      '"',
      "'",
      '\n',
      ',',
      '[',
      ']',
      '{',
      '}',
      '|',
      '>',
      '&a ',
      '*a',
      '!',
      '? ',
      '---\n',
      '\\',
    ),
  ),
  { nil: undefined, freq: 3 },
);

t.test('generated fragments: the fast reader reads them as yaml does, or declines', async (t) => {
  let accepted = 0;
  let declinedValid = 0;
  fc.assert(
    fc.property(tree, fc.boolean(), fc.boolean(), edit, (g, comments, crlf, e) => {
      const root =
        g.kind === 'map' && !g.flow
          ? g
          : {
              kind: 'map' as const,
              entries: [['spec', g] as [string, Gen]],
              flow: false,
              trailing: false,
              multiline: false,
            };
      let text = block(root, 0, 1, comments);
      // Now and then one edit a template could make by mistake (a stray space, colon, quote, dash...).
      if (e) text = text.slice(0, e[0] % (text.length + 1)) + e[1] + text.slice(e[0] % (text.length + 1));
      if (crlf) text = text.replace(/\n/g, '\r\n');
      const v = compare(text);
      if (!v.accepted) {
        if (v.yamlOk) declinedValid++;
        return true;
      }
      accepted++;
      if (v.problem) throw new Error(`${JSON.stringify(text)}: ${v.problem}`);
      return true;
    }),
    { numRuns: NUM_RUNS },
  );
  t.comment(
    `${accepted} of ${NUM_RUNS} generated fragments read by the fast reader; ${declinedValid} valid ones declined`,
  );
  t.ok(
    accepted >= NUM_RUNS * 0.3,
    `acceptance rate: ${accepted} of ${NUM_RUNS} (at least 30%; the generator draws declined forms on purpose)`,
  );
});

t.test('generated fragments without declined forms: all read by the fast reader', async (t) => {
  // The same shapes, restricted to what templates write every day: no look-alikes the fast reader leaves
  // to yaml, no folded scalars, no merge or prototype keys. Every one of them must stay on the fast path.
  const everyday = fc.constantFrom(
    'istio-proxy',
    '15020',
    '-1',
    '1.5',
    'yes',
    'true',
    '~',
    'http://h:80/p',
    '$(POD_NAME)',
    'a b c',
  );
  const simple: fc.Arbitrary<Gen> = fc.letrec<{ node: Gen }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      everyday.map((s) => ({ kind: 'plain' as const, s })),
      fc.tuple(quotedText, fc.boolean()).map(([s, single]) => ({ kind: 'quoted' as const, s, single })),
      fc.constant({ kind: 'empty' as const }),
      fc
        .tuple(
          multiline.filter((s) => !s.startsWith('#') && !s.startsWith('a\n')),
          fc.constantFrom('|' as const, '|-' as const),
        )
        .map(([s, header]) => ({ kind: 'block' as const, s, header })),
      fc
        .tuple(
          fc.uniqueArray(
            fc.tuple(fc.constantFrom('name', 'image', 'sidecar.istio.io/status', '"quoted key"'), tie('node')),
            { minLength: 1, maxLength: 4, selector: (e) => e[0] },
          ),
          fc.boolean(),
          fc.boolean(),
        )
        .map(([entries, flow, trailing]) => ({ kind: 'map' as const, entries, flow, trailing, multiline: false })),
      fc
        .tuple(fc.array(tie('node'), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean())
        .map(([items, wide, trailing]) => ({ kind: 'seq' as const, items, flow: false, trailing, wide })),
    ),
  })).node;
  let accepted = 0;
  const runs = Math.max(100, Math.floor(NUM_RUNS / 4));
  fc.assert(
    fc.property(simple, fc.boolean(), (g, comments) => {
      const root =
        g.kind === 'map' && !g.flow
          ? g
          : {
              kind: 'map' as const,
              entries: [['spec', g] as [string, Gen]],
              flow: false,
              trailing: false,
              multiline: false,
            };
      const text = block(root, 0, 1, comments);
      const v = compare(text);
      if (!v.accepted) throw new Error(`declined: ${JSON.stringify(text)}`);
      if (v.problem) throw new Error(`${JSON.stringify(text)}: ${v.problem}`);
      accepted++;
      return true;
    }),
    { numRuns: runs },
  );
  t.equal(accepted, runs, `${accepted} of ${runs} everyday fragments read by the fast reader`);
});

t.test(
  'real template output: the Istio conformance cases, rendered by a run, are read by the fast reader',
  needs(ISTIO),
  async (t) => {
    const real = await import('../../src/yaml/read/fragment-reader.ts');
    const texts: string[] = [];
    const { run } = await t.mockImport<typeof import('../../src/run.ts')>('../../src/run.ts', {
      '../../src/yaml/read/fragment-reader.ts': {
        ...real,
        parseFragment: (text: string) => {
          texts.push(text);
          return real.parseFragment(text);
        },
      },
    });
    const cases = new URL('cases/', ISTIO.url);
    // Every third case (sorted): one run per case takes a while on a shared machine.
    const names = readdirSync(cases)
      .sort()
      .filter((c) => existsSync(new URL(`${c}/fn-config.yaml`, cases)) && existsSync(new URL(`${c}/input.yaml`, cases)))
      .filter((_, i) => i % 3 === 0);
    for (const c of names) {
      run(readFileSync(new URL(`${c}/input.yaml`, cases), 'utf8'), {
        functionConfig: readFileSync(new URL(`${c}/fn-config.yaml`, cases), 'utf8'),
      });
    }
    const declined = texts.filter((x) => readFragmentFast(x) === undefined);
    t.ok(texts.length > 50, `${texts.length} fragments rendered by ${names.length} cases`);
    t.comment(`${texts.length - declined.length} of ${texts.length} real fragments read by the fast reader`);
    for (const x of declined.slice(0, 3)) t.comment(`declined: ${JSON.stringify(x).slice(0, 300)}`);
    t.ok(
      declined.length <= texts.length * 0.01,
      `acceptance rate on real fragments: ${texts.length - declined.length} of ${texts.length} (at least 99%)`,
    );
    for (const x of texts.slice(0, 200)) {
      const v = compare(x);
      if (v.accepted && v.problem) t.fail(v.problem);
    }
  },
);

/** A variant of `v` at one place chosen by `pick`: a scalar changed, a key dropped or added (null or not), an item added. */
function mutate(v: Json, pick: number): Json {
  if (Array.isArray(v)) {
    if (v.length === 0 || pick % 5 === 0) return [...v, 'extra'];
    const i = pick % v.length;
    return v.map((x, j) => (j === i ? mutate(x, Math.floor(pick / 7)) : x));
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    // A key added last (null: equal as readsAs compares; or set), or first, before every key the text holds.
    if (keys.length === 0 || pick % 6 === 0) {
      const how = Math.floor(pick / 6) % 3;
      return how === 2 ? { added: 'x', ...v } : { ...v, added: how ? null : 'x' };
    }
    const k = keys[pick % keys.length]!;
    if (pick % 6 === 1) {
      const { [k]: _gone, ...rest } = v;
      return rest;
    }
    return { ...v, [k]: mutate(v[k]!, Math.floor(pick / 7)) };
  }
  return typeof v === 'string' ? `${v}!` : typeof v === 'number' ? v + 1 : v === null ? 'now-set' : !v;
}

/** Whether a map of `text` gives a key twice (`yaml` refuses that with `uniqueKeys`). */
function repeatsAKey(text: string): boolean {
  try {
    parse(text, { ...FRAGMENT_YAML_OPTIONS, uniqueKeys: true });
    return false;
  } catch (e) {
    return /unique/i.test((e as Error).message);
  }
}

/**
 * Whether a map of `v` has a key like an array index (`1`): JavaScript lists such keys first, so the data's
 * key order is not the text's, which the verifier leaves to the reader.
 */
function hasIndexKey(v: Json): boolean {
  if (Array.isArray(v)) return v.some(hasIndexKey);
  if (v === null || typeof v !== 'object') return false;
  return Object.keys(v).some((k) => /^(?:0|[1-9]\d*)$/.test(k) || hasIndexKey(v[k]!));
}

t.test(
  'the read-back verifier: "reads as intended" only when the reader reads the text as the expected data',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    let proven = 0;
    let readable = 0;
    let mutatedProven = 0;
    fc.assert(
      fc.property(tree, fc.boolean(), edit, fc.nat(), (g, comments, e, pick) => {
        const root =
          g.kind === 'map' && !g.flow
            ? g
            : {
                kind: 'map' as const,
                entries: [['spec', g] as [string, Gen]],
                flow: false,
                trailing: false,
                multiline: false,
              };
        let text = block(root, 0, 1, comments);
        if (e) text = text.slice(0, e[0] % (text.length + 1)) + e[1] + text.slice(e[0] % (text.length + 1));
        const read = readFragmentFast(text, AGREED_FLOW);
        if (read === undefined) {
          // What the reader declines, the verifier never claims.
          if (verifyFragmentFast(text, null, readsAs) !== undefined)
            throw new Error(`declined text verified: ${JSON.stringify(text)}`);
          return true;
        }
        if (verifyFragmentFast(text, read, readsAs)) {
          readable++;
          proven++;
        } else if (!repeatsAKey(text) && !hasIndexKey(read)) {
          readable++;
        }
        const other = mutate(read, pick);
        if (verifyFragmentFast(text, other, readsAs)) {
          mutatedProven++;
          // Sound: a claim holds only when the data read compares equal to what was expected.
          if (!readsAs(read, other))
            throw new Error(
              `${JSON.stringify(text)} verified as ${JSON.stringify(other)} but reads as ${JSON.stringify(read)}`,
            );
        }
        return true;
      }),
      { numRuns: NUM_RUNS },
    );
    t.comment(
      `${proven} texts verified against their own reading; ${mutatedProven} mutated expectations verified (each one equal as readsAs compares: a null key added)`,
    );
    // A key given twice (a random edit can make one) and keys out of the text's order are what the verifier leaves to the reader.
    t.equal(
      proven,
      readable,
      `the verifier proves every text the reader reads against its reading (${proven} of ${readable})`,
    );
  },
);

t.test(
  'the read-back verifier on what injection writes: every real edited resource is proven, a one-character change is not',
  needs(BOOKINFO),
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    const { run } = await import('../../src/run.ts');
    const input = readFileSync(BOOKINFO.path ?? '', 'utf8');
    const out = run(input, {
      functionConfig:
        'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: x}\nspec: {mesh: istio, policy: enabled}\n',
    });
    t.equal(out.exitCode, 0, out.stderr);
    const docs = out.stdout.split(/^---\n/m).filter((d) => d.includes('istio-proxy'));
    t.ok(docs.length >= 6, `${docs.length} injected resources`);
    for (const d of docs) {
      const read = parse(d, FRAGMENT_YAML_OPTIONS) as Json;
      t.equal(verifyFragmentFast(d, read, readsAs), true, 'proven against the data yaml reads');
      const port = d.replace('containerPort: 15090', 'containerPort: 15091');
      t.not(port, d);
      t.equal(verifyFragmentFast(port, read, readsAs), undefined, 'a changed port is not proven');
      const key = d.replace('name: istio-proxy', 'name: istio-proxy\n  extra: 1');
      t.equal(verifyFragmentFast(key, read, readsAs), undefined, 'text that reads otherwise is not proven');
    }
  },
);

/**
 * A line put into a text at a line start: what could follow a proven span (a key, an entry, deeper text, a comment,
 * a line the reader declines wherever it stands: a document marker or a directive, which the line table meets only
 * when the walk reaches it).
 */
const insertedLine = fc.tuple(
  fc.nat(),
  fc.nat({ max: 10 }),
  fc.constantFrom('extra: 1', '- 2', 'x', '# note', '', 'k: [1', '|', 'a: b: c', '---', '...', '%TAG ! x'),
);

t.test(
  'proven spans: a shared subtree is compared by its text once proven, and nothing changes but speed',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    const { share, cloneJson } = await import('../../src/json.ts');
    let skipsPossible = 0;
    let agreed = 0;
    fc.assert(
      fc.property(tree, fc.boolean(), edit, insertedLine, (g, comments, e, [lineAt, indent, line]) => {
        const root =
          g.kind === 'map' && !g.flow
            ? g
            : {
                kind: 'map' as const,
                entries: [['spec', g] as [string, Gen]],
                flow: false,
                trailing: false,
                multiline: false,
              };
        const text = block(root, 0, 1, comments);
        const read = readFragmentFast(text, AGREED_FLOW);
        if (read === undefined) return true;
        // Every collection of the expected data is shared (deep-frozen), as a plan's token-free parts are.
        const expected = share(cloneJson(read));
        // A warm comparison (spans proven on the pristine text first) and a cold one (a comparison of its own,
        // so no spans) must answer alike on the pristine text and on changed ones.
        const warm = (a: Json | undefined, b: Json | undefined) => readsAs(a, b);
        const first = verifyFragmentFast(text, expected, warm);
        const again = verifyFragmentFast(text, expected, warm);
        if (first !== again)
          throw new Error(
            `a second comparison of the same text answers ${again}, the first ${first}: ${JSON.stringify(text)}`,
          );
        if (first) skipsPossible++;
        const lines = text.split('\n');
        const at = lineAt % lines.length;
        const changed = [
          e ? text.slice(0, e[0] % (text.length + 1)) + e[1] + text.slice(e[0] % (text.length + 1)) : text,
          [...lines.slice(0, at), ' '.repeat(indent) + line, ...lines.slice(at)].join('\n'),
        ];
        for (const c of changed) {
          const hot = verifyFragmentFast(c, expected, warm);
          const cold = verifyFragmentFast(c, expected, (a, b) => readsAs(a, b));
          if (hot !== cold)
            throw new Error(
              `with proven spans: ${hot}, without: ${cold}, for ${JSON.stringify(c)} (proven on ${JSON.stringify(text)})`,
            );
          if (hot) {
            const r = readFragmentFast(c, AGREED_FLOW);
            if (r === undefined || !readsAs(r, expected))
              throw new Error(`proven, but reads as ${JSON.stringify(r)}: ${JSON.stringify(c)}`);
          }
          agreed++;
        }
        return true;
      }),
      { numRuns: NUM_RUNS },
    );
    t.ok(
      skipsPossible > NUM_RUNS / 4,
      `${skipsPossible} texts proven with shared expectations (spans recorded), ${agreed} changed texts answered alike with and without them`,
    );
  },
);

t.test('proven spans: a span is reused only where the node ends the same way', async (t) => {
  const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
  const { readsAs } = await import('../../src/edit/read-back.ts');
  const { share } = await import('../../src/json.ts');
  const same = (a: Json | undefined, b: Json | undefined) => readsAs(a, b);
  const probe = share({ httpGet: { path: '/ready', port: 15021 }, periodSeconds: 1 });
  const exp = (extra?: Json) => ({
    containers: [{ name: 'p', readinessProbe: probe, ...(extra === undefined ? {} : { image: extra }) }],
  });
  const base =
    'containers:\n- name: p\n  readinessProbe:\n    httpGet:\n      path: /ready\n      port: 15021\n    periodSeconds: 1\n';
  t.equal(verifyFragmentFast(base, exp(), same), true, "proven line by line, the probe's span recorded");
  t.equal(
    verifyFragmentFast(`${base}  image: x\n`, exp('x'), same),
    true,
    'the same span, then a key of the container: proven',
  );
  t.equal(
    verifyFragmentFast(`${base}    failureThreshold: 3\n`, exp(), same),
    undefined,
    'the same span, then one more key of the probe: not proven (it reads otherwise)',
  );
  t.equal(
    verifyFragmentFast(`${base}      scheme: HTTP\n`, exp(), same),
    undefined,
    'the same span, then a deeper line: not proven',
  );
  t.equal(
    verifyFragmentFast(base.replace('15021', '15022'), exp(), same),
    undefined,
    'another port inside the span: not proven',
  );
  t.equal(
    verifyFragmentFast(base.replace('periodSeconds: 1', 'periodSeconds: 1 # every second'), exp(), same),
    true,
    'a comment inside: compared line by line, proven',
  );
  t.equal(
    verifyFragmentFast(`${base}# trailing comment\n  image: x\n`, exp('x'), same),
    true,
    'a comment after the span does not belong to it',
  );
});

t.test(
  'proven spans are tied to how the text was read: a one-entry list is a list at its dash, a map at its key',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    const { share } = await import('../../src/json.ts');
    const same = (a: Json | undefined, b: Json | undefined) => readsAs(a, b);
    const item = share({ name: 'istio-init', image: 'proxy:1' });
    const text = 'initContainers:\n- name: istio-init\n  image: proxy:1\n';
    t.equal(
      verifyFragmentFast(text, { initContainers: [item] }, same),
      true,
      "the list of the shared map: proven (the map's span recorded)",
    );
    t.equal(
      verifyFragmentFast(text, { initContainers: item }, same),
      undefined,
      'the shared map itself, where the text holds a list of it: not proven',
    );
    t.equal(verifyFragmentFast(text, { initContainers: share([item]) }, same), true, 'a shared list of it: proven');
    t.equal(
      verifyFragmentFast(
        'initContainers:\n  name: istio-init\n  image: proxy:1\n',
        { initContainers: share([item]) },
        same,
      ),
      undefined,
      'the shared list, where the text holds the map: not proven',
    );
  },
);

t.test(
  'proven spans: a node whose last lines were stepped over as a proven span is itself proven whole, and the walk reads it',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    const { share } = await import('../../src/json.ts');
    // One comparison function throughout (spans are kept per comparison); it counts the scalars it compares.
    let compared = 0;
    const same = (a: Json | undefined, b: Json | undefined) => {
      compared++;
      return readsAs(a, b);
    };
    const httpGet = share({ path: '/ready', port: 15021 });
    const probe = share({ periodSeconds: 1, httpGet });
    const inner = 'outer:\n  probe:\n    path: /ready\n    port: 15021\n';
    t.equal(verifyFragmentFast(inner, { outer: { probe: httpGet } }, same), true, 'httpGet proven at column 4 first');
    const text = 'probe:\n  periodSeconds: 1\n  httpGet:\n    path: /ready\n    port: 15021\n';
    compared = 0;
    t.equal(verifyFragmentFast(text, { probe }, same), true, 'the probe: its key read, httpGet stepped over');
    t.equal(compared, 1, 'only periodSeconds compared (httpGet by its span)');
    compared = 0;
    t.equal(verifyFragmentFast(text, { probe }, same), true, 'the probe again');
    t.equal(compared, 0, "the probe's span holds its last lines too: nothing compared one by one");
    for (const changed of [
      text.replace('15021', '15022'),
      `${text}    scheme: HTTP\n`,
      `${text}  timeoutSeconds: 3\n`,
      text.replace('periodSeconds: 1', 'periodSeconds: 2'),
    ])
      t.equal(verifyFragmentFast(changed, { probe }, same), undefined, `not proven: ${JSON.stringify(changed)}`);
  },
);

/**
 * A multi-line string as the writer emits it (a `|`, `|-` or `|+` block scalar; `emitAfterKey`), whose last lines can
 * look like comments, and lines planted after the node that holds it: what a block scalar would read on.
 */
const blockString = fc.constantFrom('{}\n', 'a\nb', 'keep\n\n', 'x\n# looks like a comment\n', '\n\nlate start\n');
const plantedLine = fc.tuple(fc.nat({ max: 8 }), fc.constantFrom('# planted', 'more', 'x: 1', '- y', '', '  '));

t.test(
  'proven spans holding a block scalar: proven once, then by their text, only where the line after them ends the scalar',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    const { share } = await import('../../src/json.ts');
    const { emitMapLines } = await import('../../src/yaml/emit/emit-block.ts');
    let spansUsed = 0;
    let planted = 0;
    fc.assert(
      fc.property(
        blockString,
        fc.boolean(),
        fc.boolean(),
        plantedLine,
        fc.boolean(),
        (value, wide, last, [indent, line], crlf) => {
          // A proxy container's env entry as a plan shares it (deep-frozen), in a list that is not shared, followed
          // by a key of the container or by nothing.
          const entry = share({ name: 'PROXY_CONFIG', value });
          const expected = last ? { env: [entry] } : { env: [entry], image: 'x' };
          const lf = emitMapLines(expected, 2, { seqIndent: wide ? 'wide' : 'compact' });
          const text = crlf ? lf.replace(/\n/g, '\r\n') : lf;
          let compared = 0;
          const warm = (a: Json | undefined, b: Json | undefined) => {
            compared++;
            return readsAs(a, b);
          };
          const cold = (a: Json | undefined, b: Json | undefined) => readsAs(a, b);
          if (verifyFragmentFast(text, expected, warm) !== true) throw new Error(`not proven: ${JSON.stringify(text)}`);
          const first = compared;
          compared = 0;
          if (verifyFragmentFast(text, expected, warm) !== true) throw new Error(`not proven again: ${text}`);
          if (compared < first) spansUsed++;
          // The line after the entry's text (before `image: x`, or at the end): where a block scalar would read on.
          const lines = text.split(crlf ? '\r\n' : '\n');
          const at = last ? lines.length - 1 : lines.findIndex((l) => l.startsWith('  image:'));
          // A line planted there, or the line before it (the scalar's last) taken away.
          const eol = crlf ? '\r\n' : '\n';
          for (const changed of [
            [...lines.slice(0, at), ' '.repeat(indent) + line, ...lines.slice(at)].join(eol),
            [...lines.slice(0, at - 1), ...lines.slice(at)].join(eol),
          ]) {
            const hot = verifyFragmentFast(changed, expected, warm);
            const fresh = verifyFragmentFast(changed, expected, cold);
            if (hot !== fresh)
              throw new Error(`with proven spans: ${hot}, without: ${fresh}, for ${JSON.stringify(changed)}`);
            if (hot) {
              const r = readFragmentFast(changed, AGREED_FLOW);
              if (r === undefined || !readsAs(r, expected))
                throw new Error(`proven, but reads as ${JSON.stringify(r)}: ${JSON.stringify(changed)}`);
            } else planted++;
          }
          return true;
        },
      ),
      { numRuns: NUM_RUNS },
    );
    // Spans are proven only where a line with content at the entry's column or left of it follows (not at the end of
    // the text, nor before a blank or comment-looking line the scalar reads on): 3 of the 5 strings, half the runs.
    t.ok(spansUsed > NUM_RUNS / 5, `${spansUsed} texts compared by a proven span holding a block scalar`);
    t.ok(planted > NUM_RUNS / 2, `${planted} changed texts that read otherwise: not proven, either way`);
  },
);

t.test('proven spans holding a block scalar: the proxy configuration entry of an Istio sidecar', async (t) => {
  const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
  const { readsAs } = await import('../../src/edit/read-back.ts');
  const { share } = await import('../../src/json.ts');
  let compared = 0;
  const same = (a: Json | undefined, b: Json | undefined) => {
    compared++;
    return readsAs(a, b);
  };
  const entry = share({ name: 'PROXY_CONFIG', value: '{}\n' });
  const text = '  env:\n  - name: PROXY_CONFIG\n    value: |\n      {}\n  image: x\n';
  t.equal(verifyFragmentFast(text, { env: [entry], image: 'x' }, same), true, 'proven line by line');
  t.equal(compared, 3, 'name, value and image compared');
  compared = 0;
  t.equal(verifyFragmentFast(text, { env: [entry], image: 'x' }, same), true, 'proven again');
  t.equal(compared, 1, 'only image compared: the entry by its span');
  for (const [changed, why] of [
    [text.replace('  image', '      # more\n  image'), 'a comment-looking line of the scalar after the span'],
    [text.replace('  image', '\n  image'), 'a blank line after the span'],
    [text.replace('  image', '      {}\n  image'), 'one more line of the scalar'],
    [text.replace('  image: x\n', ''), 'the span at the end of the text'],
  ] as const) {
    compared = 0;
    const v = verifyFragmentFast(changed, { env: [entry], image: 'x' }, same);
    t.not(compared, 0, `compared line by line: ${why}`);
    if (why.startsWith('the span at the end')) t.equal(v, undefined, `${why}: no image, not proven`);
    else if (why.startsWith('a blank')) t.equal(v, true, `${why}: proven line by line`);
    else t.equal(v, undefined, `${why}: reads otherwise, not proven`);
  }
});

t.test(
  'the verifier reads each key as the reader does, where the text holds the expected key as written',
  async (t) => {
    const { verifyFragmentFast } = await import('../../src/yaml/read/fragment-verifier.ts');
    const { readsAs } = await import('../../src/edit/read-back.ts');
    // Keys that read as themselves and keys that read otherwise in Go's YAML 1.1 (booleans, null, numbers, quotes,
    // trailing spaces), written as they are, each expected as its own text or as what it reads as.
    const keys = ['name', 'yes', 'on', 'y', 'N', '1', '0644', '~', 'null', 'true', '"q"', "'s'", 'a ', 'key.io/x'];
    let proven = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.constantFrom(...keys), fc.boolean(), (written, expectedKey, nested) => {
        const text = nested ? `m:\n  - ${written}: 1\n    z: 2\n` : `${written}: 1\nz: 2\n`;
        const inner = { [expectedKey]: 1, z: 2 };
        const expected = nested ? { m: [inner] } : inner;
        const read = readFragmentFast(text, AGREED_FLOW);
        const want = read !== undefined && readsAs(read, expected);
        const got = verifyFragmentFast(text, expected, readsAs);
        if (got === true && !want)
          throw new Error(
            `proven, but ${JSON.stringify(text)} reads as ${JSON.stringify(read)}, not ${JSON.stringify(expected)}`,
          );
        if (want && got !== true) throw new Error(`not proven: ${JSON.stringify(text)} as ${JSON.stringify(expected)}`);
        if (got) proven++;
        else refused++;
        return true;
      }),
      { numRuns: NUM_RUNS },
    );
    t.ok(proven > 0 && refused > proven, `${proven} proven, ${refused} refused (the key reads otherwise)`);
    // `yes:` is the key true to Go's reading of template output and "yes" to the Kubernetes reading: the verifier
    // proves neither (the read-back reads such a text with the fast block reader).
    t.equal(verifyFragmentFast('yes: 1\n', { yes: 1 }, readsAs), undefined, '`yes:` not proven as the key "yes"');
    t.equal(verifyFragmentFast('yes: 1\n', { true: 1 }, readsAs), undefined, '`yes:` not proven as the key true');
    t.equal(verifyFragmentFast('a: on\n', { a: true }, readsAs), undefined, '`on` not proven as true');
    t.equal(verifyFragmentFast('"q": 1\n', { '"q"': 1 }, readsAs), undefined, 'a quoted key is its content');
  },
);
