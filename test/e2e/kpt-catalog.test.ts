// The kpt functions catalog files (functions/meshinject/): the README has the catalog's sections, its
// FunctionConfig section is generated from schemas/ (UPDATE_GOLDEN=1 rewrites it; any other difference
// fails), its Usage is what `meshinject --help` prints, and metadata.yaml is complete: the image is the
// one the Dockerfile's release workflow pushes, every example package URL names a package in examples/.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, runCli } from '../helpers/e2e.ts';
import { functionConfigReference } from '../../scripts/gen-reference-docs.ts';

const README = join(ROOT, 'functions/meshinject/README.md');
const readme = readFileSync(README, 'utf8');
const metadata = parse(readFileSync(join(ROOT, 'functions/meshinject/metadata.yaml'), 'utf8')) as Record<
  string,
  unknown
>;
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const BEGIN =
  '<!-- BEGIN GENERATED FunctionConfig (test/e2e/kpt-catalog.test.ts from schemas/; UPDATE_GOLDEN=1 rewrites it) -->\n';
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
  t.equal(
    readme.slice(start + BEGIN.length, end),
    want,
    'README FunctionConfig == schemas/ (run UPDATE_GOLDEN=1 after a schema change)',
  );
  for (const field of ['spec.mesh', 'spec.policy', 'spec.namespaceSelector', 'data.mesh'])
    t.match(want, `\`${field}\``, `${field} documented`);
});

t.test('Usage: the README shows what `meshinject --help` prints', async (t) => {
  const help = runCli(['--help']);
  t.equal(help.status, 0);
  const usage = /^Usage:\n((?: {2}.*\n)+)/m.exec(help.stdout);
  t.ok(usage, '--help has a Usage: block');
  const block = /^```\n(Usage:\n[\s\S]*?)```$/m.exec(
    readme.slice(readme.indexOf('## Usage'), readme.indexOf('## FunctionConfig')),
  );
  t.ok(block, 'README Usage section has a plain code block starting with Usage:');
  t.equal(block?.[1], `Usage:\n${usage?.[1] ?? ''}`, 'the same usage lines, verbatim');
});

t.test('metadata.yaml is complete and consistent', async (t) => {
  for (const k of ['image', 'description', 'tags', 'sourceURL', 'examplePackageURLs', 'emails', 'license'])
    t.ok(metadata[k], `${k} set`);
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
