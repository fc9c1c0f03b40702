/**
 * Documents of a `yaml`-path stream parsed again from their own text when composed (src/krm/source.ts,
 * `streamItem`, `KEEP_TREES`): the tree, the resources and the errors must be those of the stream's own
 * parse, over every YAML file of the repository and over the YAML forms that make a document depend on
 * what is around it (directives, `...`, comments between documents, indented roots, CRLF, block scalars).
 */
import t, { type Test } from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { CST, Parser, parseAllDocuments } from 'yaml';
import { parseSource, reparseDocument, type ParsedSource, type SourceItem } from '../src/krm/source.ts';
import { run } from '../src/run.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NO_TREES = { documents: 0, chars: 0 };

function* yamlFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* yamlFiles(p);
    else if (/\.ya?ml$/.test(name)) yield p;
  }
}

/** Each non-empty document token of a stream with the offset where the next top-level token starts. */
function documents(text: string): Array<{ doc: CST.Document; to: number }> {
  const tokens = [...new Parser().parse(text)];
  const out: Array<{ doc: CST.Document; to: number }> = [];
  tokens.forEach((tok, i) => {
    if (tok.type === 'document' && tok.value) out.push({ doc: tok, to: tokens[i + 1]?.offset ?? text.length });
  });
  return tokens.some((tok) => tok.type === 'error') ? [] : out;
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

function parsed(text: string, keep?: typeof NO_TREES): ParsedSource | string {
  try {
    return parseSource(text, 'in.yaml', keep);
  } catch (e) {
    return (e as Error).message;
  }
}

/** Asserts that parsing again gives the stream's trees and that both budgets give the same items. */
function sameBothWays(t: Test, text: string, label: string): number {
  let docs = 0;
  for (const { doc, to } of documents(text)) {
    const again = reparseDocument(text, doc.offset, to, doc.value!.offset, label);
    if (!isDeepStrictEqual(again, doc)) t.fail(`${label}: document at ${doc.offset} parsed again differs`);
    docs++;
  }
  const kept = parsed(text);
  const dropped = parsed(text, NO_TREES);
  if (typeof kept === 'string' || typeof dropped === 'string') {
    if (kept !== dropped) t.fail(`${label}: ${String(kept)} / ${String(dropped)}`);
    return docs;
  }
  if (kept.items.length !== dropped.items.length) t.fail(`${label}: ${kept.items.length} / ${dropped.items.length} items`);
  kept.items.forEach((item, i) => {
    if (!isDeepStrictEqual(seen(item), seen(dropped.items[i]!))) t.fail(`${label}: item ${i} differs`);
  });
  return docs;
}

t.test('every YAML file of the repository: documents parsed again are the stream\'s, items the same', async (t) => {
  let files = 0;
  let docs = 0;
  for (const file of yamlFiles(ROOT)) {
    const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
    docs += sameBothWays(t, text, file.slice(ROOT.length));
    files++;
  }
  t.ok(files > 1000, `${files} files`);
  t.ok(docs > 3000, `${docs} documents parsed again`);
});

// Forms where a document's text could read differently alone; each is a stream the `yaml` path reads.
const FORMS: Record<string, string> = {
  directives: '%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: yes}\n...\n%TAG !e! tag:example.com,2000:\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: !e!n b}\n',
  'document ends and comments': '# head\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n# between\n---\n# before\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b} # after\n# tail\n',
  'indented roots': '  apiVersion: v1\n  kind: ConfigMap\n  metadata: &m {name: a}\n---\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: *m\n',
  crlf: 'apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n  labels: &l {x: y}\r\ndata: *l\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: b}\r\n',
  'block scalars at the end': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\ndata:\n  keep: |+\n    text\n\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  strip: |-\n    text',
  'empty documents': '---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n',
  'flow and JSON documents': '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n---\n{apiVersion: v1, kind: ConfigMap,\n  metadata: {name: b}}\n',
  'merge keys and aliases': 'base: &b {app: c}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: {name: merged}\n  labels: *b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n b}\ndata: {n: *n}\n',
  'duplicate keys in a later document': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\n---\napiVersion: v1\nkind: ConfigMap\nkind: ConfigMap\nmetadata: {name: b}\n',
};

t.test('forms around documents: parsed again, the same trees, items and errors', async (t) => {
  for (const [label, text] of Object.entries(FORMS)) {
    t.ok(sameBothWays(t, text, label) >= 2, `${label}: documents compared`);
  }
  const dup = parsed(FORMS['duplicate keys in a later document']!, NO_TREES) as ParsedSource;
  t.throws(() => dup.items[1]!.value, /in\.yaml document 2, line 7: .*duplicate/i, 'a duplicate key is reported for the document parsed again, with its line');
});

t.test('the name as written: the composed metadata.name wherever it is known', async (t) => {
  const src = parsed(FORMS['merge keys and aliases']! + '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: "c\\u0021"}\n', NO_TREES) as ParsedSource;
  t.same(src.items.map((it) => it.name), [undefined, 'b', 'c!'], 'a merged name is unknown until composed; quoted names are resolved');
  t.same(src.items.map((it) => (it.value as { metadata: { name: string } }).metadata.name), ['merged', 'b', 'c!']);
});

t.test('an injector ConfigMap is found by its name, also where the name is only known once composed', async (t) => {
  const injector = (meta: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: ${meta}\ndata:\n  config: |\n    policy: enabled\n    templates:\n      sidecar: |\n        spec:\n          containers:\n          - name: from-the-configmap\n            image: proxy:1\n  values: '{}'\n`;
  const workload = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, labels: &l {app: web}}\nspec:\n  containers:\n  - name: web\n    image: web:1\n';
  const others = Array.from({ length: 3 }, (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-${i}}\ndata: {x: "1"}\n`);
  for (const [label, meta] of [['written', '{name: istio-sidecar-injector, namespace: istio-system}'], ['merged', '{<<: {name: istio-sidecar-injector}, namespace: istio-system}']]) {
    const out = run([workload, ...others, injector(meta!)].join('---\n'));
    t.equal(out.exitCode, 0, `${label}: ${out.stderr}`);
    const pod = parseAllDocuments(out.stdout).map((d) => d.toJS() as { kind: string; spec: { containers: Array<{ name: string }> } }).find((r) => r.kind === 'Pod')!;
    t.same(pod.spec.containers.map((c) => c.name), ['from-the-configmap', 'web'], `${label}: the ConfigMap's template injected (Istio's merge puts the template's containers first)`);
    t.match(out.stderr + JSON.stringify(out.results), /from ConfigMap istio-system\/istio-sidecar-injector in the input/, `${label}: named in the notes`);
  }
});
