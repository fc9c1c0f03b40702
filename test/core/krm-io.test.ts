import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { parseSource } from '../../src/krm/source.ts';
import { writeOutput } from '../../src/krm/write.ts';
import { emitChanged, seqIndentOf } from '../../src/edit/rewrite.ts';
import type { Json } from '../../src/model.ts';
import { MeshInjectError } from '../../src/results/errors.ts';
import { corpus, needs } from '../helpers/data.ts';

const KRM_DATA = corpus('krm-inputs');
const KRM_INPUTS = KRM_DATA.url ?? new URL('file:///nonexistent/');

type Items = ReturnType<typeof parseSource>['items'];

/** `value` with `v` set at `path` (a copy). */
function setAt(value: Json, path: string[], v: Json): Json {
  if (path.length === 0) return v;
  const o = { ...(value as Record<string, Json>) };
  o[path[0]!] = setAt(o[path[0]!] ?? {}, path.slice(1), v);
  return o;
}

/** Rewrites the text of the resources `change` returns desired data for; everything else stays. */
function edit(text: string, change: (items: Items) => Array<[number, string[], Json]>): string {
  const src = parseSource(text);
  const changed = new Map<number, string>();
  for (const [p, path, v] of change(src.items)) {
    const item = src.items[p]!;
    const out = emitChanged(item, src, setAt(item.value, path, v));
    if (out !== undefined) changed.set(p, out);
  }
  return writeOutput(src, changed, []);
}

t.test('every runner fixture round-trips byte for byte when nothing changes', needs(KRM_DATA), async (t) => {
  const files = readdirSync(KRM_INPUTS).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 8, 'fixtures present');
  for (const f of files) {
    const text = readFileSync(new URL(f, KRM_INPUTS), 'utf8');
    const src = parseSource(text, f);
    t.equal(src.form, 'resource-list', `${f} is a ResourceList`);
    t.ok(src.items.length > 0, `${f} has items`);
    t.equal(writeOutput(src, new Map(), []), text, `${f} unchanged`);
  }
});

t.test(
  'a changed resource keeps comments, quoting and flow maps; its neighbours stay byte-identical',
  needs(KRM_DATA),
  async (t) => {
    const text = readFileSync(new URL('kpt-render-configpath.yaml', KRM_INPUTS), 'utf8');
    const out = edit(text, (items) => {
      const i = items.findIndex((it) => (it.value as { kind?: string }).kind === 'StatefulSet');
      return [[i, ['spec', 'template', 'metadata', 'labels', 'injected'], 'true']];
    });
    const before = parseSource(text).items;
    const after = parseSource(out).items;
    t.equal(after.length, before.length);
    for (let i = 0; i < before.length; i++) {
      const a = text.slice(before[i]!.start, before[i]!.end);
      const b = out.slice(after[i]!.start, after[i]!.end);
      if ((before[i]!.value as { kind: string }).kind === 'StatefulSet') {
        t.match(b, /labels: \{app: db, injected: "true"\}/, 'flow map kept, value quoted for YAML 1.1 readers');
        t.match(b, /matchLabels: \{app: db\} # flow style map/, 'line comment kept');
        t.match(b, /existing: "yes"/, 'double quotes kept');
        t.match(b, /config\.kubernetes\.io\/index: '1'/, 'single quotes kept');
      } else {
        t.equal(b, a, `item ${i} byte-identical`);
      }
    }
    t.match(
      out,
      /- # Top-of-file comment: frontend deployment\n {2}apiVersion: apps\/v1/,
      'head comment stays on the first key',
    );
    t.equal(out.match(/Top-of-file comment/g)?.length, 1, 'head comment not duplicated');
  },
);

t.test('the head comment of a changed item is neither moved nor duplicated (hazard G4)', needs(KRM_DATA), async (t) => {
  const text = readFileSync(new URL('kpt-render-configpath.yaml', KRM_INPUTS), 'utf8');
  let out = text;
  for (let run = 0; run < 3; run++) {
    out = edit(out, (items) => {
      const i = items.findIndex((it) => (it.value as { kind?: string }).kind === 'Deployment');
      return [[i, ['metadata', 'labels', 'run'], String(run)]];
    });
  }
  t.equal(out.match(/# Top-of-file comment: frontend deployment/g)?.length, 1);
  t.match(out, /- # Top-of-file comment: frontend deployment\n {2}apiVersion: apps\/v1/);
});

t.test('new lists follow the resource list indentation', async (t) => {
  const wide = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: a\n';
  const compact = wide.replace('    - name: a\n      image: a', '  - name: a\n    image: a');
  t.equal(seqIndentOf(wide, undefined), 'wide');
  t.equal(seqIndentOf(compact, undefined), 'compact');
  for (const [text, expected] of [
    [wide, '  containers:\n    - name: a\n      image: a\n    - name: b\n      args:\n        - x\n'],
    [compact, '  containers:\n  - name: a\n    image: a\n  - name: b\n    args:\n    - x\n'],
  ] as const) {
    const out = edit(text, () => {
      return [
        [
          0,
          ['spec', 'containers'],
          [
            { name: 'a', image: 'a' },
            { name: 'b', args: ['x'] },
          ] as Json,
        ],
      ];
    });
    t.equal(out.slice(out.indexOf('  containers:')), expected);
  }
});

t.test('multi-document streams keep separators, document comments and untouched documents', async (t) => {
  const text =
    '# license header\n---\napiVersion: v1\nkind: Service # svc\nmetadata: {name: s}\n---\n# deployment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i # pinned\n...\n';
  const src = parseSource(text, 'x.yaml');
  t.equal(src.form, 'stream');
  t.equal(src.items.length, 2);
  const out = edit(text, () => {
    return [[1, ['spec', 'template', 'metadata'], { labels: { a: 'b' } }]];
  });
  t.equal(
    out,
    '# license header\n---\napiVersion: v1\nkind: Service # svc\nmetadata: {name: s}\n---\n# deployment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i # pinned\n    metadata:\n      labels:\n        a: b\n...\n',
  );
});

t.test('CRLF input keeps CRLF line endings in changed resources', async (t) => {
  const text = 'apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\nspec:\r\n  containers:\r\n  - name: a\r\n';
  const out = edit(text, () => {
    return [[0, ['metadata', 'labels'], { x: 'y' }]];
  });
  t.notMatch(out.replace(/\r\n/g, ''), /\n/, 'no bare LF');
  t.same(parse(out), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { x: 'y' } },
    spec: { containers: [{ name: 'a' }] },
  });
});

t.test('ResourceList results replace an input results entry and follow the items', async (t) => {
  const text =
    'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: old\n  severity: info\nfunctionConfig:\n  kind: ConfigMap\n';
  const src = parseSource(text);
  const out = writeOutput(src, new Map(), [{ message: 'new', severity: 'warning' }]);
  t.same(parse(out), {
    apiVersion: 'config.kubernetes.io/v1',
    kind: 'ResourceList',
    items: [],
    functionConfig: { kind: 'ConfigMap' },
    results: [{ message: 'new', severity: 'warning' }],
  });
});

t.test('items of a kind: List are resources; a flow items list is re-emitted in flow style', async (t) => {
  const text =
    'apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}]\n';
  const src = parseSource(text);
  t.equal(src.form, 'list');
  const item = src.items[0]!;
  const text2 = emitChanged(item, src, setAt(item.value, ['metadata', 'labels'], { a: 'b' }))!;
  const out = writeOutput(src, new Map([[0, text2]]), []);
  t.same(parse(out).items[0].metadata, { name: 'p', labels: { a: 'b' } });
  t.match(text2, /^\{/, 'still a flow mapping');
});

function billionLaughs(): string {
  let text = 'kind: Bomb\nl0: &l0 [lol]\n';
  for (let i = 1; i <= 9; i++)
    text += `l${i}: &l${i} [${Array(9)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  return text;
}

t.test('bad input is an error that names the place', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n',
      /document 1.*line \d+: .*[Mm]ap keys must be unique/,
    ],
    ['apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n', /no `items`/],
    ['apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n', /`items` must be a sequence/],
    ['- a\n- b\n', /must be a mapping/],
    ['a: [1, 2\nb: 3\n', /line \d+/],
    [billionLaughs(), /[Ee]xcessive alias count/],
    ['{%', /line 1: .*directive indicator/],
  ];
  for (const [text, message] of cases) {
    let err: unknown;
    try {
      // Resources are composed when first read: read them all, as the pipeline does.
      for (const item of parseSource(text, 'in.yaml').items) void item.value;
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof MeshInjectError, `${JSON.stringify(text.slice(0, 30))} is rejected`);
    t.match((err as Error).message, message);
    t.match((err as Error).message, /^in\.yaml/, 'names the input');
  }
});

t.test('a kind: List nested in a ResourceList or stream exposes its items as resources', async (t) => {
  const text =
    '---\napiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n    spec: {containers: []}\n  - apiVersion: v1\n    kind: Service\n    metadata: {name: s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n';
  const src = parseSource(text, 'in.yaml');
  t.equal(src.form, 'stream');
  t.same(
    src.items.map((i) => (i.value as { kind: string }).kind),
    ['List', 'ConfigMap', 'Pod', 'Service'],
  );
  t.same(
    src.items.map((i) => i.topPosition),
    [0, 1, 0, 0],
  );
  const pod = src.items[2]!;
  const out = writeOutput(
    src,
    new Map([[2, emitChanged(pod, src, setAt(pod.value, ['metadata', 'labels'], { x: 'y' }))!]]),
    [],
  );
  t.equal(out, text.replace('metadata: {name: a}', 'metadata: {name: a, labels: {x: "y"}}'));
});
