/**
 * Documents read with the `yaml` package from their own text (src/krm/source.ts): a `yaml`-path stream's
 * documents parsed again when composed (`streamItem`, `KEEP_TREES`), and the documents the fast reader
 * declines in a stream it otherwise reads (`mixedStream`). The trees, the resources and the errors must be
 * those of the whole stream's parse, over every YAML file of the repository and over the YAML forms that make
 * a document depend on what is around it (directives, `...`, comments between documents, indented roots,
 * CRLF, block scalars); and one declined document must not change the output of the others.
 */
import t, { type Test } from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type CST, Composer, Parser, parseAllDocuments } from 'yaml';
import { reparseDocument } from '../../src/krm/items.ts';
import { parseSource, type ParsedSource, type SourceItem } from '../../src/krm/source.ts';
import { run } from '../../src/run.ts';
import { corpus, needs } from '../helpers/data.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NO_TREES = { documents: 0, chars: 0 };
/** The third-party corpora read with the repository's own YAML files. */
const CORPORA = ['conformance', 'real-world', 'krm-inputs'].map((sub) => corpus(sub));
const BOOKINFO = corpus('real-world/bookinfo/bookinfo.yaml');

function* yamlFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* yamlFiles(p);
    else if (/\.ya?ml$/.test(name)) yield p;
  }
}

/**
 * Each non-empty document token of a stream with the offset where the next top-level token starts, and
 * whether it composes without errors. (A document broken at its end, such as a quote left open before the
 * next `---`, is tokenised differently alone, where the input ends instead: it is an error both ways.)
 */
function documents(text: string): Array<{ doc: CST.Document; to: number; ok: boolean }> {
  const tokens = [...new Parser().parse(text)];
  const out: Array<{ doc: CST.Document; to: number; ok: boolean }> = [];
  tokens.forEach((tok, i) => {
    if (tok.type === 'document' && tok.value)
      out.push({ doc: tok, to: tokens[i + 1]?.offset ?? text.length, ok: composes(tok) });
  });
  return tokens.some((tok) => tok.type === 'error') ? [] : out;
}

function composes(doc: CST.Document): boolean {
  return [...new Composer().compose([doc])].every((d) => d.errors.length === 0);
}

/** What both readers must agree on for a resource: its place, kind, name, start and data (or its error). */
function readAs(item: SourceItem): unknown {
  const { position, topPosition, kind, name, start, column } = item;
  let value: unknown;
  try {
    value = item.value;
  } catch (e) {
    value = { error: (e as Error).message };
  }
  return { position, topPosition, kind, name, start, column, value };
}

/** What the pipeline reads of an item: range, kind, name, and the composed data and text tree (or the error). */
function seen(item: SourceItem): unknown {
  const { position, topPosition, kind, name, start, end, column, reader, preamble } = item;
  let content: unknown;
  try {
    content = { value: item.value, node: item.node };
  } catch (e) {
    content = { error: (e as Error).message };
  }
  return { position, topPosition, kind, name, start, end, column, reader, preamble, content };
}

function parsed(text: string, options: Parameters<typeof parseSource>[2] = {}): ParsedSource | string {
  try {
    return parseSource(text, 'in.yaml', options);
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Fails unless both parses give the same items as the pipeline reads them or the same error. Where the two
 * readers read a resource, its data and start are compared, not its text tree: they place trailing comments
 * differently (the fast reader's tree of a document beside a declined one is compared with its tree of the
 * file alone instead).
 */
function sameItems(t: Test, a: ParsedSource | string, b: ParsedSource | string, label: string): void {
  if (typeof a === 'string' || typeof b === 'string') {
    if (a !== b) t.fail(`${label}: ${typeof a === 'string' ? a : 'items'} / ${typeof b === 'string' ? b : 'items'}`);
    return;
  }
  if (a.form !== b.form || a.items.length !== b.items.length)
    t.fail(`${label}: ${a.form} ${a.items.length} / ${b.form} ${b.items.length} items`);
  a.items.forEach((item, i) => {
    const other = b.items[i]!;
    const same = item.reader === other.reader;
    const x = same ? seen(item) : readAs(item);
    const y = same ? seen(other) : readAs(other);
    if (!isDeepStrictEqual(x, y)) t.fail(`${label}: item ${i} differs`);
  });
}

/** Asserts that parsing again gives the stream's trees and that both budgets give the same items. */
function sameBothWays(t: Test, text: string, label: string): number {
  let docs = 0;
  for (const { doc, to, ok } of documents(text)) {
    const again = reparseDocument(text, doc.offset, to, doc.value!.offset, label);
    if (ok ? !isDeepStrictEqual(again, doc) : composes(again))
      t.fail(`${label}: document at ${doc.offset} parsed again differs`);
    docs++;
  }
  const whole = parsed(text, { mixed: false });
  sameItems(t, parsed(text), whole, `${label} (trees kept)`);
  sameItems(t, parsed(text, { keepTrees: NO_TREES }), whole, `${label} (parsed again)`);
  return docs;
}

/** A document the fast reader declines (an anchor), read by itself with the `yaml` package. */
const ANCHORED =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n  labels: &l {app: anchored}\ndata: *l\n';

t.test(
  "every YAML file of the repository and the test data: documents parsed again are the stream's, items the same",
  needs(...CORPORA),
  async (t) => {
    let files = 0;
    let docs = 0;
    let mixed = 0;
    const roots = [ROOT, ...CORPORA.map((c) => c.path ?? '')];
    for (const [root, file] of roots.flatMap((r) => [...yamlFiles(r)].map((f) => [r, f] as const))) {
      const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
      const label = file.slice(root.length);
      docs += sameBothWays(t, text, label);
      files++;
      // The same file with a declined document first and last: the fast reader's items for the others.
      const src = parsed(text);
      if (typeof src === 'string' || src.form !== 'stream' || !src.items.every((it) => it.reader === 'block')) continue;
      // (Declined first: every fourth file, for time; the items after a declined one then move.)
      const body = text.endsWith('\n') ? text : `${text}\n`;
      const variants = [
        ['last', `${body}---\n${ANCHORED}`],
        ...(mixed % 4 === 0 ? [['first', `${ANCHORED}---\n${body}`]] : []),
      ];
      for (const [where, variant] of variants) {
        const read = parsed(variant!) as ParsedSource;
        const readers = read.items.map((it) => it.reader);
        if (readers.filter((r) => r === 'yaml').length !== 1 || readers.length !== src.items.length + 1)
          t.fail(`${label} (declined document ${where}): readers ${readers.join(',')}`);
        sameItems(t, read, parsed(variant!, { mixed: false }), `${label} (declined document ${where})`);
        // Declined last, the others are exactly the items of the file alone (when no line end was added).
        if (
          where === 'last' &&
          body === text &&
          !isDeepStrictEqual(read.items.slice(0, -1).map(seen), src.items.map(seen))
        )
          t.fail(`${label}: the fast reader's items differ beside a declined document`);
      }
      mixed++;
    }
    t.ok(files > 1000, `${files} files`);
    t.ok(docs > 3000, `${docs} documents parsed again`);
    t.ok(mixed > 1000, `${mixed} files read with a declined document first and last`);
  },
);

t.test('one declined document leaves the output of the others as without it', needs(BOOKINFO), async (t) => {
  const bookinfo = readFileSync(BOOKINFO.path ?? '', 'utf8');
  const docs = bookinfo.split(/^---\n/m);
  t.ok(docs.length > 10, `${docs.length} documents`);
  const at = Math.floor(docs.length / 2);
  const withIt = [...docs.slice(0, at), ANCHORED, ...docs.slice(at)].join('---\n');
  const plain = run(bookinfo);
  const mixed = run(withIt);
  t.equal(plain.exitCode, 0, plain.stderr);
  t.equal(mixed.exitCode, 0, mixed.stderr);
  const outDocs = plain.stdout.split(/^---\n/m);
  t.equal(
    mixed.stdout,
    [...outDocs.slice(0, at), ANCHORED, ...outDocs.slice(at)].join('---\n'),
    'the same output, the declined document unchanged in its place',
  );
  t.match(plain.stdout, /istio-proxy/, 'workloads injected');
});

// Forms where a document's text could read differently alone; each is a stream the `yaml` path reads.
const FORMS: Record<string, string> = {
  directives:
    '%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: yes}\n...\n%TAG !e! tag:example.com,2000:\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: !e!n b}\n',
  'document ends and comments':
    '# head\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n# between\n---\n# before\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b} # after\n# tail\n',
  'indented roots':
    '  apiVersion: v1\n  kind: ConfigMap\n  metadata: &m {name: a}\n---\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: *m\n',
  crlf: 'apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n  labels: &l {x: y}\r\ndata: *l\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: b}\r\n',
  'block scalars at the end':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\ndata:\n  keep: |+\n    text\n\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  strip: |-\n    text',
  'empty documents':
    '---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n',
  'flow and JSON documents':
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n---\n{apiVersion: v1, kind: ConfigMap,\n  metadata: {name: b}}\n',
  'merge keys and aliases':
    'base: &b {app: c}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: {name: merged}\n  labels: *b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n b}\ndata: {n: *n}\n',
  'duplicate keys in a later document':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\n---\napiVersion: v1\nkind: ConfigMap\nkind: ConfigMap\nmetadata: {name: b}\n',
  // Streams the fast reader reads but for some documents (`mixedStream`), or gives up on as a whole.
  'declined between read documents': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n${ANCHORED}---\n${ANCHORED}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n`,
  'content on the marker line':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
  'a tab before a comment':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\t# tab\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
  'a document end in a declined document': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n${ANCHORED}...\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n`,
  'a --- line in a quoted scalar':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: "one\n---\n two"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
  'a --- line in a block scalar':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\ndata:\n  x: |\n    one\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
  'empty documents before a declined one': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n# nothing\n---\napiVersion: v1\nkind: ConfigMap\nkind: ConfigMap\nmetadata: {name: &n b}\n`,
  'a stray bracket in a declined document': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n${ANCHORED}x: ]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n`,
  'a declined List':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nmetadata: {labels: &l {x: y}}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, labels: *l}}\n',
};

t.test('forms around documents: parsed again, the same trees, items and errors', async (t) => {
  for (const [label, text] of Object.entries(FORMS)) {
    t.ok(
      sameBothWays(t, text, label) >= 2 || typeof parsed(text, { mixed: false }) === 'string',
      `${label}: documents compared`,
    );
  }
  const mixed = (label: string) => (parsed(FORMS[label]!) as ParsedSource).items.map((it) => it.reader).join(',');
  t.equal(mixed('declined between read documents'), 'block,yaml,yaml,block', 'declined documents between read ones');
  t.equal(mixed('content on the marker line'), 'block,yaml,block', 'a document on its marker line is declined alone');
  t.equal(
    mixed('a document end in a declined document'),
    'yaml,yaml,yaml',
    'a `...` marker: the whole input read with yaml',
  );
  t.equal(mixed('a declined List'), 'yaml,yaml,yaml', 'a List: the whole input read with yaml');
  t.match(
    parsed(FORMS['a stray bracket in a declined document']!),
    /^in\.yaml, line 11: invalid YAML: Unexpected flow-seq-end/,
    'a syntax error in a declined document: reported for the whole input',
  );
  const counted = parsed(FORMS['empty documents before a declined one']!) as ParsedSource;
  t.equal(counted.items.map((it) => it.reader).join(','), 'block,yaml');
  t.throws(
    () => counted.items[1]!.value,
    /^in\.yaml document 4, line 10: .*duplicate key `kind`/,
    'a declined document is named by its place in the stream, empty documents counted',
  );
  const dup = parsed(FORMS['duplicate keys in a later document']!, { keepTrees: NO_TREES }) as ParsedSource;
  t.throws(
    () => dup.items[1]!.value,
    /in\.yaml document 2, line 7: .*duplicate/i,
    'a duplicate key is reported for the document parsed again, with its line',
  );
});

t.test('the name as written: the composed metadata.name wherever it is known', async (t) => {
  const src = parsed(
    `${FORMS['merge keys and aliases']!}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: "c\\u0021"}\n`,
    { keepTrees: NO_TREES },
  ) as ParsedSource;
  t.same(
    src.items.map((it) => it.name),
    [undefined, 'b', 'c!'],
    'a merged name is unknown until composed; quoted names are resolved',
  );
  t.same(
    src.items.map((it) => (it.value as { metadata: { name: string } }).metadata.name),
    ['merged', 'b', 'c!'],
  );
});

t.test('an injector ConfigMap is found by its name, also where the name is only known once composed', async (t) => {
  const injector = (meta: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: ${meta}\ndata:\n  config: |\n    policy: enabled\n    templates:\n      sidecar: |\n        spec:\n          containers:\n          - name: from-the-configmap\n            image: proxy:1\n  values: '{}'\n`;
  const workload =
    'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, labels: &l {app: web}}\nspec:\n  containers:\n  - name: web\n    image: web:1\n';
  const others = Array.from(
    { length: 3 },
    (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-${i}}\ndata: {x: "1"}\n`,
  );
  for (const [label, meta] of [
    ['written', '{name: istio-sidecar-injector, namespace: istio-system}'],
    ['merged', '{<<: {name: istio-sidecar-injector}, namespace: istio-system}'],
  ]) {
    const out = run([workload, ...others, injector(meta!)].join('---\n'));
    t.equal(out.exitCode, 0, `${label}: ${out.stderr}`);
    const pod = parseAllDocuments(out.stdout)
      .map((d) => d.toJS() as { kind: string; spec: { containers: Array<{ name: string }> } })
      .find((r) => r.kind === 'Pod')!;
    t.same(
      pod.spec.containers.map((c) => c.name),
      ['from-the-configmap', 'web'],
      `${label}: the ConfigMap's template injected (Istio's merge puts the template's containers first)`,
    );
    t.match(
      out.stderr + JSON.stringify(out.results),
      /from ConfigMap istio-system\/istio-sidecar-injector in the input/,
      `${label}: named in the notes`,
    );
  }
});
