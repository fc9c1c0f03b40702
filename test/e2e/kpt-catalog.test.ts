// The kpt functions catalog files (functions/meshinject/): the README has the catalog's sections, its
// FunctionConfig section is generated from schemas/ (UPDATE_GOLDEN=1 rewrites it; any other difference
// fails), its Usage is what `meshinject --help` prints, and metadata.yaml is complete: the image is the
// one the Dockerfile's release workflow pushes, every example package URL names a package in examples/.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, runCli } from '../helpers/e2e.ts';

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  definitions?: Record<string, Schema>;
  'x-expected'?: string;
};

const README = join(ROOT, 'functions/meshinject/README.md');
const readme = readFileSync(README, 'utf8');
const metadata = parse(readFileSync(join(ROOT, 'functions/meshinject/metadata.yaml'), 'utf8')) as Record<string, unknown>;
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function load(file: string): Schema {
  return JSON.parse(readFileSync(join(ROOT, 'schemas', file), 'utf8')) as Schema;
}

/** Follows `#/definitions/x` references; keeps the referring node's own description. */
function resolve(s: Schema, root: Schema): { s: Schema; ref?: string } {
  if (!s.$ref) return { s };
  const name = s.$ref.replace('#/definitions/', '');
  const target = root.definitions?.[name];
  if (!target) throw new Error(`unresolved ${s.$ref}`);
  const inner = resolve(target, root);
  return { s: { ...inner.s, ...(s.description ? { description: s.description } : {}) }, ref: inner.ref ?? name };
}

/** A short type for the table: enum values, `LabelSelector`, `map[string]string`, `[]T`, `string | object`. */
function typeOf(s0: Schema, root: Schema): string {
  const { s, ref } = resolve(s0, root);
  if (s.enum) return s.enum.map((v) => (v === '' ? '""' : String(v))).join(' \\| ');
  if (ref === 'labelSelector') return 'LabelSelector';
  if (ref === 'stringMap') return 'map[string]string';
  const types = Array.isArray(s.type) ? s.type : [s.type ?? 'any'];
  return types.map((x) => (x === 'array' && s.items ? `[]${typeOf(s.items, root)}` : x)).join(' \\| ');
}

/** One table row per field, depth first; objects with declared properties (and arrays of them) are expanded. */
function rows(s0: Schema, path: string, root: Schema, out: string[]): string[] {
  const { s } = resolve(s0, root);
  for (const [key, child0] of Object.entries(s.properties ?? {})) {
    const { s: child, ref } = resolve(child0, root);
    const p = path ? `${path}.${key}` : key;
    const description = (child.description ?? child['x-expected'] ?? '').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
    out.push(`| \`${p}\` | ${typeOf(child0, root)} | ${description} |`);
    if (ref === 'labelSelector' || ref === 'stringMap') continue;
    if (child.properties) rows(child, p, root, out);
    else if (child.items) {
      const { s: item, ref: itemRef } = resolve(child.items, root);
      if (item.properties && itemRef !== 'labelSelector') rows(item, `${p}[]`, root, out);
    }
  }
  return out;
}

/** The FunctionConfig reference generated from schemas/ (the text between the README's markers). */
function functionConfigReference(): string {
  const si = load('sidecar-injection.schema.json');
  const cm = load('configmap.schema.json');
  const header = '| field | type | meaning |\n|---|---|---|';
  const spec = rows(si.properties!.spec!, 'spec', si, []);
  const data = rows(cm.properties!.data!, 'data', cm, []);
  return [
    `### \`SidecarInjection\` (\`${String(si.properties!.apiVersion!.const)}\`)`,
    '',
    (si.description ?? '').trim(),
    '',
    header,
    ...spec,
    '',
    '### `ConfigMap` (`v1`)',
    '',
    (cm.description ?? '').trim(),
    '',
    header,
    ...data,
  ].join('\n');
}

const BEGIN = '<!-- BEGIN GENERATED FunctionConfig (test/e2e/kpt-catalog.test.ts from schemas/; UPDATE_GOLDEN=1 rewrites it) -->\n';
const END = '\n<!-- END GENERATED FunctionConfig -->';

t.test('functions/meshinject/README.md: catalog sections and mdtogo markers', async (t) => {
  const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  for (const h of ['Overview', 'Usage', 'FunctionConfig', 'Examples']) t.ok(headings.includes(h), `section ${h}`);
  t.same(headings.slice(0, 4), ['Overview', 'Usage', 'FunctionConfig', 'Examples'], 'in the catalog order');
  for (const m of ['<!--mdtogo:Short-->', '<!--mdtogo:Long-->', '<!--mdtogo:Examples-->']) t.ok(readme.includes(m), m);
});

t.test('FunctionConfig section equals the reference generated from schemas/', async (t) => {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  t.ok(start >= 0 && end > start, 'generated-section markers present');
  const want = functionConfigReference();
  if (process.env.UPDATE_GOLDEN === '1' && start >= 0 && end > start) {
    writeFileSync(README, readme.slice(0, start + BEGIN.length) + want + readme.slice(end));
  }
  t.equal(readme.slice(start + BEGIN.length, end), want, 'README FunctionConfig == schemas/ (run UPDATE_GOLDEN=1 after a schema change)');
  for (const field of ['spec.mesh', 'spec.policy', 'spec.namespaceSelector', 'data.mesh']) t.match(want, `\`${field}\``, `${field} documented`);
});

t.test('Usage: the README shows what `meshinject --help` prints', async (t) => {
  const help = runCli(['--help']);
  t.equal(help.status, 0);
  const usage = /^Usage:\n((?: {2}.*\n)+)/m.exec(help.stdout);
  t.ok(usage, '--help has a Usage: block');
  const block = /^```\n(Usage:\n[\s\S]*?)```$/m.exec(readme.slice(readme.indexOf('## Usage'), readme.indexOf('## FunctionConfig')));
  t.ok(block, 'README Usage section has a plain code block starting with Usage:');
  t.equal(block?.[1], `Usage:\n${usage?.[1] ?? ''}`, 'the same usage lines, verbatim');
});

t.test('metadata.yaml is complete and consistent', async (t) => {
  for (const k of ['image', 'description', 'tags', 'sourceURL', 'examplePackageURLs', 'emails', 'license']) t.ok(metadata[k], `${k} set`);
  t.equal(metadata.license, 'Apache-2.0');
  t.same(metadata.tags, ['mutator', 'service-mesh']);
  t.notMatch(String(metadata.sourceURL), /example\.invalid/, 'no placeholder source URL');
  const image = String(metadata.image);
  t.match(image, /^ghcr\.io\/[a-z0-9-]+\/meshinject$/, 'an image repository without a tag');
  const urls = metadata.examplePackageURLs as string[];
  t.ok(urls.length >= 3, 'example packages listed');
  for (const url of urls) {
    const m = /\.git\/(examples\/meshinject-[a-z0-9-]+)$/.exec(url);
    t.ok(m, `${url} is a kpt pkg get URL of an examples/ package`);
    if (m) t.ok(existsSync(join(ROOT, m[1]!, 'Kptfile')), `${m[1]} exists with a Kptfile`);
    t.ok(url.startsWith(String(metadata.sourceURL).replace(/\/$/, '')), `${url} is in the source repository`);
    t.ok(readme.includes(m?.[1] ?? '\0'), `the README's Examples link ${m?.[1]}`);
  }
  const workflow = readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8');
  t.match(workflow, image, 'the release workflow pushes this image');
  t.match(readme, `${image}:v${version}`, 'the README names the versioned image reference');
  t.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), `${image}:v${version}`, 'so does the top-level README');
});
