/**
 * Output that cannot forge (issue 19, item 3): a tenant controls annotation values, names and file names;
 * every line meshinject writes for a person or a CI log (stderr result lines, the summary, the table and
 * GitHub reports, `explain` text, error messages) must stay one line per result, with no raw control
 * character (CR, LF, ESC, BEL, C1), no line or paragraph separator and no bidi override. SARIF, JUnit and
 * JSON stay exact: they are structured, and their own encodings carry any text.
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { escapeLine } from '../../src/results/escape-line.ts';
import { runCli, workspace } from '../helpers/e2e.ts';

/** Characters that must never reach a human-facing line raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters a terminal acts on are what the test rules out
const DANGEROUS = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028-\u202E\u2066-\u2069]/;

/** A value an attacker puts in an annotation: fake result lines, a workflow command, terminal sequences, bidi. */
const FORGED =
  '1.1.1.1/x\n::error file=x.yaml::pwned\r[error] apps/v1/Deployment/shop/fake: forged\u001b]0;title\u0007\u001b[2J\u0085\u009b31m\u2028\u2029\u202ereversed\u2066';

function yamlDq(s: string): string {
  return JSON.stringify(s);
}

function deployment(name: string, annotations: Record<string, string>): string {
  const ann = Object.entries(annotations)
    .map(([k, v]) => `        ${k}: ${yamlDq(v)}`)
    .join('\n');
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: shop
spec:
  template:
    metadata:
      annotations:
${ann}
    spec:
      containers:
      - name: app
        image: nginx
`;
}

const HOSTILE = deployment('web', {
  'sidecar.istio.io/inject': 'true',
  'traffic.sidecar.istio.io/includeOutboundIPRanges': FORGED,
});
const WARNED = deployment('warned', { 'sidecar.istio.io/inject': `yes${FORGED}` });

/** Asserts no dangerous character on any line of `text` and returns its lines. */
function safeLines(t: Test, text: string, what: string): string[] {
  const lines = text.replace(/\n$/, '').split('\n');
  const bad = lines.find((l) => DANGEROUS.test(l));
  t.equal(bad, undefined, `${what}: no raw control, separator or bidi character on any line`);
  return lines;
}

t.test('escapeLine: every dangerous class is escaped visibly, other text kept', async (t) => {
  t.equal(escapeLine('a\nb\rc'), 'a\\nb\\rc');
  t.equal(escapeLine('\u001b[31m\u0007'), '\\x1b[31m\\x07');
  t.equal(escapeLine('\u0085\u009b\u007f'), '\\x85\\x9b\\x7f');
  t.equal(escapeLine('\u2028\u2029\u202a\u202e\u2066\u2069'), '\\u2028\\u2029\\u202a\\u202e\\u2066\\u2069');
  t.equal(escapeLine('tab\there, back\\slash, ünïcode ✓, 日本'), 'tab\there, back\\slash, ünïcode ✓, 日本');
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
      const e = escapeLine(s);
      return !DANGEROUS.test(e) && !e.includes('\n') && escapeLine(e) === e;
    }),
  );
  fc.assert(
    fc.property(
      fc.string({ unit: 'grapheme', maxLength: 100 }).filter((s) => !DANGEROUS.test(s)),
      (s) => escapeLine(s) === s,
    ),
  );
});

t.test('stderr result lines: one line per result, no forged line or terminal sequence', async (t) => {
  const dir = workspace(t, { 'app.yaml': HOSTILE }, 'esc');
  const r = runCli([join(dir, 'app.yaml')]);
  t.equal(r.status, 1, 'the bad annotation is an error result');
  t.equal(r.stdout, '', 'nothing on stdout');
  const lines = safeLines(t, r.stderr, 'stderr');
  t.equal(lines.length, 1, 'one error result, one line');
  t.match(lines[0], /^\[error\] apps\/v1\/Deployment\/shop\/web /);
  t.ok(
    lines[0]!.includes('\\n::error file=x.yaml::pwned\\r[error]'),
    'the forged lines are shown, escaped, inside the one line',
  );
  t.notOk(
    lines.some((l) => l.startsWith('::') || l.startsWith('[error] apps/v1/Deployment/shop/fake')),
    'no forged workflow command or result line',
  );
});

t.test('LOG_TO_STDERR: every result and the summary, one line each', async (t) => {
  const dir = workspace(t, { 'app.yaml': WARNED }, 'esc');
  const r = runCli([join(dir, 'app.yaml')], { env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0);
  const lines = safeLines(t, r.stderr, 'stderr');
  t.same(
    lines.map((l) => l.replace(/^(\[\w+\]|meshinject:).*$/, '$1')),
    ['[warning]', '[info]', 'meshinject:'],
    'a warning, an info and the summary: three lines',
  );
});

t.test('reports: github one command per finding, table one row per workload', async (t) => {
  const dir = workspace(t, { 'app.yaml': HOSTILE, 'warned.yaml': WARNED }, 'esc');
  const r = runCli([
    dir,
    '--report',
    `github=${join(dir, 'gh.txt')}`,
    '--report',
    'table',
    '--report',
    `sarif=${join(dir, 'r.sarif')}`,
    '--report',
    `junit=${join(dir, 'r.xml')}`,
  ]);
  t.equal(r.status, 1);
  const gh = safeLines(t, readFileSync(join(dir, 'gh.txt'), 'utf8'), 'github report');
  t.equal(gh.length, 2, 'one error and one warning, two workflow commands');
  t.ok(
    gh.every((l) => /^::(error|warning) file=/.test(l)),
    'every line is a command meshinject wrote',
  );
  t.ok(
    gh.every((l) => l.indexOf('::error file=x.yaml') > l.indexOf('title=meshinject')),
    'the forged command stays inside the message of a real one',
  );
  const table = safeLines(t, r.stderr.slice(r.stderr.indexOf('NAMESPACE')), 'table');
  t.equal(table.length, 4, 'head, two workloads, totals');
  // Structured reports keep the exact value.
  const sarif = JSON.parse(readFileSync(join(dir, 'r.sarif'), 'utf8'));
  const texts: string[] = sarif.runs[0].results.map((x: { message: { text: string } }) => x.message.text);
  t.ok(
    texts.some((m) => m.includes(FORGED)),
    'SARIF carries the value exactly',
  );
  const junit = new XMLParser({ ignoreAttributes: false, processEntities: true, htmlEntities: true }).parse(
    readFileSync(join(dir, 'r.xml'), 'utf8'),
  );
  t.ok(JSON.stringify(junit).includes('::error file=x.yaml::pwned'), 'JUnit carries the value (XML-escaped)');
});

t.test('explain text: no forged line; explain -o json exact', async (t) => {
  const dir = workspace(t, { 'warned.yaml': WARNED }, 'esc');
  const text = runCli(['explain', join(dir, 'warned.yaml')]);
  t.equal(text.status, 0);
  const lines = safeLines(t, text.stdout, 'explain');
  t.ok(
    lines.every((l, i) =>
      i === 0 ? l.startsWith('Deployment shop/warned') : /^ {2}(\s*\d+\.|warning:|=>| {3}[a-z-]+: [a-z0-9-]+$)/.test(l),
    ),
    'every line is a line explain writes (a driver tag, such as the data-plane mode, under the outcome)',
  );
  const json = runCli(['explain', '-o', 'json', join(dir, 'warned.yaml')]);
  t.ok(JSON.parse(json.stdout)[0].detail.includes(`yes${FORGED}`), 'JSON keeps the exact value');
});

t.test('a file name with a newline and ESC cannot forge a line', async (t) => {
  const dir = workspace(t, {}, 'esc');
  const name = 'a\n[error] forged\u001b[2J.yaml';
  mkdirSync(join(dir, 'in'));
  writeFileSync(join(dir, 'in', name), HOSTILE);
  const r = runCli([join(dir, 'in')]);
  t.equal(r.status, 1);
  const lines = safeLines(t, r.stderr, 'stderr');
  t.equal(lines.length, 1);
  t.ok(lines[0]!.includes('a\\n[error] forged\\x1b[2J.yaml'), 'the file name is shown escaped');
  const missing = runCli([join(dir, 'in', 'x\n::error::y\u001b')]);
  t.equal(missing.status, 2);
  t.equal(safeLines(t, missing.stderr, 'usage error').length, 1, 'a missing path is one error line');
});

t.test('a config error quoting a forged value is one line', async (t) => {
  const dir = workspace(
    t,
    {
      'app.yaml': deployment('web', { a: 'b' }),
      'cfg.yaml': `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  mesh: ${yamlDq(`istio\n[error] forged\u001b[31m`)}\n`,
    },
    'esc',
  );
  const r = runCli(['-c', join(dir, 'cfg.yaml'), join(dir, 'app.yaml')]);
  t.not(r.status, 0);
  const lines = safeLines(t, r.stderr, 'stderr');
  t.notOk(
    lines.some((l) => l.startsWith('[error] forged')),
    'no forged line',
  );
});
