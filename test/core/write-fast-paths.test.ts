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
 */
import t from 'tap';
import fc from 'fast-check';
import { emitChangedEdits, seqIndentOf } from '../../src/edit/rewrite.ts';
import { parseSource } from '../../src/krm/source.ts';
import type { Json, JsonObject } from '../../src/model.ts';
import { readBlockStream } from '../../src/yaml/read/manifest-reader.ts';
import { run } from '../../src/run.ts';

/** The list style as found before (every line split first): the model the line-at-a-time scan must match. */
function modelSeqIndent(text: string): 'compact' | 'wide' | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const key = /^([ \t]*)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?$/.exec(lines[i] ?? '');
    if (!key) continue;
    let j = i + 1;
    while (j < lines.length - 1 && /^[ \t]*(?:#[^\n]*)?\r?$/.test(lines[j] ?? '')) j++;
    const item = /^([ \t]*)- /.exec(lines[j] ?? '');
    if (item) return (item[1] ?? '').length > (key[1] ?? '').length ? 'wide' : 'compact';
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
