/**
 * Issue #40: the write step's shortcuts (src/edit/rewrite.ts) decide as the longer ways they replace.
 * - `seqIndentOf` cuts the resource's lines one at a time up to its first block sequence instead of splitting the
 *   whole text: the list style it finds is that of the split (a model of it here), on generated line soups.
 * - `emitChangedEdits` leaves out the walk for merge keys and complex keys (`riskyConstruct`) for a resource the
 *   fast block reader read: that reader declines every document holding one, so such a resource never takes
 *   that shortcut, and is still written through a `yaml` Document (its output here).
 * - The edits it keeps for `meshinject diff` are compared with the new text piece by piece instead of being joined
 *   into a second copy of the resource: applied to the input they give the new text, and the editor's own edits
 *   (not one replacing the whole resource) are kept, with CRLF or LF, with or without a final line break.
 * - Text written from memo (a shared part's text, written once per place, src/yaml/emit/emit-block.ts) and proven
 *   from memo (spans the read-back proved once, src/yaml/read/fragment-verifier.ts) proves nothing it should not: a
 *   defect planted in that text is caught by the read-back, which passes only text that reads as intended.
 */
import t from 'tap';
import fc from 'fast-check';
import { emitChangedEdits, firstBlockSequence, seqIndentOf } from '../../src/edit/rewrite.ts';
import { checkReadBack, readsAs } from '../../src/edit/read-back.ts';
import { cloneJson, share } from '../../src/json.ts';
import { parseSource } from '../../src/krm/source.ts';
import type { Json, JsonObject } from '../../src/model.ts';
import { readBlockStream } from '../../src/yaml/read/manifest-reader.ts';
import { readCore, readKubernetes } from '../../src/yaml/read/readers.ts';
import { run } from '../../src/run.ts';

/** The list style as found before (every line split first): the model the line-at-a-time scan must match. */
function modelSeqIndent(text: string): 'compact' | 'wide' | undefined {
  const m = modelFirstList(text);
  return m === undefined ? undefined : m.item > m.key ? 'wide' : 'compact';
}

/** The indents of the key line and the item line of the first block sequence, as the whole-text split finds them. */
function modelFirstList(text: string): { key: number; item: number } | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const key = /^([ \t]*)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?$/.exec(lines[i] ?? '');
    if (!key) continue;
    let j = i + 1;
    while (j < lines.length - 1 && /^[ \t]*(?:#[^\n]*)?\r?$/.test(lines[j] ?? '')) j++;
    const item = /^([ \t]*)- /.exec(lines[j] ?? '');
    if (item) return { key: (key[1] ?? '').length, item: (item[1] ?? '').length };
  }
  return undefined;
}

const LINES = [
  'spec:',
  '  containers:',
  'containers:  # list',
  '- name: a',
  '  - name: b',
  '    - x',
  '',
  '  ',
  '  # note',
  '# top',
  'a: b',
  '\r',
  'key:\r',
  '  - y\r',
  '-x',
  '- ',
  '\tt:',
];

t.test('seqIndentOf finds the list style the whole-text split found', async (t) => {
  let decided = 0;
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...LINES), { maxLength: 12 }), fc.boolean(), (lines, finalBreak) => {
      const text = lines.join('\n') + (finalBreak ? '\n' : '');
      const want = modelSeqIndent(text);
      if (want !== undefined) decided++;
      // Without a block sequence the annotation decides: `wide` here, so that "none found" cannot pass as compact.
      const annotations = { 'internal.config.kubernetes.io/seqindent': 'wide' };
      return seqIndentOf(text, annotations) === (want ?? 'wide');
    }),
    { numRuns: 2000 },
  );
  t.ok(decided > 200, `the texts hold lists often enough to decide (${decided} of 2000)`);
  t.equal(
    seqIndentOf('a:\n  # c\n\n    - x', undefined),
    'wide',
    'a list on the last line, after a comment and a blank',
  );
  t.equal(seqIndentOf('a:\n- x\n', undefined), 'compact');
  t.equal(seqIndentOf('a:', { 'internal.config.kubernetes.io/seqindent': 'wide' }), 'wide', 'no line break: no key');
});

/** Lines for `firstBlockSequence`'s search from the item lines: `- ` inside a line, after tabs, after a dash. */
const ITEM_SEARCH_LINES = [
  ...LINES,
  'a: b - c',
  'x - y:',
  ' \t- z',
  '\t- t',
  '-- w',
  '- - v',
  '#- c',
  '  #:',
  'k: # - c',
  'k: - c',
];

t.test(
  'firstBlockSequence: found from the item lines, the key and item indents of the line-by-line scan',
  async (t) => {
    let decided = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...ITEM_SEARCH_LINES), { maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (lines, leadingBreak, finalBreak) => {
          const text = (leadingBreak ? '\n' : '') + lines.join('\n') + (finalBreak ? '\n' : '');
          const want = modelFirstList(text);
          if (want !== undefined) decided++;
          const got = firstBlockSequence(text);
          return got?.key === want?.key && got?.item === want?.item;
        },
      ),
      { numRuns: 3000 },
    );
    t.ok(decided > 400, `the texts hold lists often enough to decide (${decided} of 3000)`);
    t.same(firstBlockSequence('\n- x\n'), undefined, 'an item after a blank first line: no key before it');
    t.same(firstBlockSequence('a: - b\nc:\n\t - d'), { key: 0, item: 2 }, 'a dash inside a line is not an item');
    t.same(firstBlockSequence('k:\n- - a\n'), { key: 0, item: 0 }, 'the first dash of a line');
  },
);

const MERGE_AND_COMPLEX = [
  'base: &b {cpu: 1m}\nlimits:\n  <<: *b\n',
  'a:\n  <<: {x: 1}\n',
  'a:\n  ? b\n  : c\n',
  'a:\n  {x: 1}: c\n',
  'a: {<<: {x: 1}}\n',
];

t.test('the fast block reader declines every document holding a merge key or a complex key', async (t) => {
  for (const text of MERGE_AND_COMPLEX) {
    const docs = readBlockStream(`kind: ConfigMap\n${text}`);
    t.ok(docs === undefined || docs.every((d) => 'declined' in d), JSON.stringify(text));
  }
});

t.test('a workload with a merge key is written faithfully (the Document path): the CLI output', async (t) => {
  const input = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    '  namespace: shop',
    'spec:',
    '  template:',
    '    metadata:',
    '      labels: &l',
    '        app: web',
    '    spec:',
    '      containers:',
    '      - name: web',
    '        image: nginx',
    '        env:',
    '        - &e {name: A, value: "1"}',
    '        resources:',
    '          limits: &lim {cpu: 100m}',
    '          requests:',
    '            <<: *lim',
    '',
  ].join('\n');
  const out = run(input, {
    functionConfig: 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  policy: enabled\n',
  });
  t.equal(out.exitCode, 0, out.stderr);
  t.match(out.stdout, /<<: \*lim/, 'the merge key is kept as written');
  t.match(out.stdout, /- name: istio-proxy/, 'and the workload is injected');
});

/** A resource's text, with its line breaks and final break as generated. */
function deployment(labels: string[], crlf: boolean, finalBreak: boolean, comment: boolean): string {
  const lines = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    ...(comment ? ['  # kept'] : []),
    '  labels:',
    ...labels.map((l, i) => `    l${i}: ${JSON.stringify(l)}`),
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '      - name: web',
    '        image: nginx',
  ];
  const text = lines.join(crlf ? '\r\n' : '\n');
  return finalBreak ? text + (crlf ? '\r\n' : '\n') : text;
}

t.test('the edits emitChangedEdits gives make its text from the input (what `meshinject diff` shows)', async (t) => {
  let fine = 0;
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom('a', 'b c', '', 'yes', '#x'), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      fc.constantFrom('label', 'container', 'both'),
      (labels, crlf, finalBreak, comment, change) => {
        const text = deployment(labels, crlf, finalBreak, comment);
        const source = parseSource(text);
        const item = source.items[0];
        if (!item) return false;
        const next = structuredClone(item.value) as JsonObject;
        const meta = next.metadata as JsonObject;
        const pod = (next.spec as JsonObject).template as JsonObject;
        if (change !== 'container') (meta.labels as JsonObject).added = 'new value';
        if (change !== 'label') ((pod.spec as JsonObject).containers as Json[]).push({ name: 'proxy', image: 'p:1' });
        const out = emitChangedEdits(item, source, next);
        if (!out) return false;
        let built = '';
        let at = item.start;
        for (const e of out.edits) {
          if (e.start < at || e.end > item.end) return false;
          built += text.slice(at, e.start) + e.text;
          at = e.end;
        }
        if (out.edits.length > 1) fine++;
        return built + text.slice(at, item.end) === out.text;
      },
    ),
    { numRuns: 300 },
  );
  t.ok(fine > 50, `the editor's own edits are kept, not only one replacing the resource (${fine} of 300)`);
});

/** Scalars whose text a writer can get wrong: YAML 1.1 and 1.2 look-alikes, indicators, quotes, line breaks. */
const TRICKY = fc.constantFrom<Json>(
  'plain',
  'yes',
  'on',
  '0o17',
  '012',
  '1e3',
  '1_000',
  'null',
  '~',
  '',
  ' lead',
  'a: b',
  'x #y',
  '- z',
  "it's",
  '"q"',
  '*',
  '{}',
  'line\nbreak',
  'last\n',
  15021,
  -1,
  true,
  null,
);

/** A container part as a plan shares it: maps and lists of tricky scalars, deep-frozen (`share`). */
const sharedPart = fc
  .letrec<{ node: Json }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      TRICKY,
      fc.dictionary(fc.constantFrom('name', 'value', 'path', 'port', 'args', 'env', 'on', 'x y'), tie('node'), {
        minKeys: 1,
        maxKeys: 4,
      }),
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }),
    ),
  }))
  .node.map((v) => share({ name: 'proxy', image: 'proxy:1', part: v, probe: share({ path: '/ready', port: 15021 }) }));

/** A one-character defect at `at` of `text`: a character replaced, removed or put in. */
function plant(text: string, at: number, how: number, ch: string): string {
  const i = at % text.length;
  if (how % 3 === 0) return text.slice(0, i) + ch + text.slice(i + 1);
  if (how % 3 === 1) return text.slice(0, i) + text.slice(i + 1);
  return text.slice(0, i) + ch + text.slice(i);
}

t.test(
  'a defect planted in text written and proven from memo is caught by the read-back: it passes only text that reads as intended',
  async (t) => {
    let written = 0;
    let caught = 0;
    let passed = 0;
    fc.assert(
      fc.property(
        sharedPart,
        fc.boolean(),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(' ', ':', '-', '#', 'x', '1', '"', "'", '\n', '|', '{', '&'),
        (part, wide, at, how, ch) => {
          // Compact or wide list indentation (the shared part's text is memoised per place and style).
          const text = deployment(['a'], false, true, false);
          const source = parseSource(
            wide ? text.replace('      - name: web\n        image', '        - name: web\n          image') : text,
          );
          const item = source.items[0];
          if (!item) return false;
          const next = cloneJson(item.value) as JsonObject;
          const spec = (next.spec as JsonObject).template as JsonObject;
          ((spec.spec as JsonObject).containers as Json[]).push(part);
          let out: ReturnType<typeof emitChangedEdits>;
          try {
            // Twice: the second time the shared part's text comes from memo and is proven by its span.
            emitChangedEdits(item, source, next);
            out = emitChangedEdits(item, source, next);
          } catch {
            return true; // refused as unfaithful: nothing written
          }
          if (!out) return false;
          written++;
          const original = source.text.slice(item.start, item.end);
          // The defect goes where the shared part was written (from its `- name: proxy` line on).
          const from = out.text.indexOf('- name: proxy');
          if (from < 0) return false;
          const bad = out.text.slice(0, from) + plant(out.text.slice(from), at, how, ch);
          if (bad === out.text) return true;
          const problem = checkReadBack(original, bad, item.column, item.value, next, item.reader === 'block');
          if (problem !== undefined) {
            caught++;
            return true;
          }
          // Passed: it must read as intended, as YAML 1.1 and as YAML 1.2 (an independent reading of the whole text).
          passed++;
          for (const read of [readKubernetes(bad, true), readCore(bad, true)]) {
            if (!read.ok || read.values.length !== 1 || !readsAs(read.values[0], next))
              throw new Error(`the read-back passed a defect that reads otherwise:\n${bad}`);
          }
          return true;
        },
      ),
      { numRuns: 400 },
    );
    t.ok(written > 300, `${written} of 400 workloads written with a shared part`);
    t.ok(caught > written / 2, `${caught} defects caught, ${passed} passed and read as intended`);
  },
);
