// CI reports (src/reports/*): source lines and columns for block YAML, flow YAML, JSON and kind: List
// inputs; JUnit checked by an XML parser; SARIF validated against the OASIS SARIF 2.1.0 JSON schema;
// GitHub workflow commands escaped; the table's rows and totals.
import t from 'tap';
import { createRequire } from 'node:module';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { runInputs } from '../../src/run.ts';
import { locateInput, fieldSteps } from '../../src/reports/locate.ts';
import { buildReport, type Report } from '../../src/reports/report.ts';
import { githubReport, junitReport, sarifReport, tableReport, xmlEscape } from '../../src/reports/formats.ts';

const require = createRequire(import.meta.url);
const Ajv = require('ajv-draft-04') as typeof import('ajv-draft-04').default;
const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;
const SARIF_SCHEMA = require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json') as object;

const BAD = 'sidecar.istio.io/proxyCPU';

/** 1-based line and column of the first occurrence of `needle` (the test's own reckoning, by splitting lines). */
function positionOf(text: string, needle: string, from = 0): { line: number; column: number } {
  const at = text.indexOf(needle, from);
  if (at < 0) throw new Error(`${needle} not in text`);
  const before = text.slice(0, at).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

function reportFor(inputs: Array<{ name: string; text: string }>, check = false): Report {
  const out = runInputs(inputs, check ? { check: { failOn: 'drift' } } : {});
  return buildReport(
    out.results,
    inputs.map((i) => locateInput(i.text, i.name)!),
    {
      mesh: 'istio',
      command: check ? 'check' : 'inject',
      toolVersion: '0.1.0',
      ...(out.fixes ? { fixes: out.fixes } : {}),
    },
  );
}

const BLOCK = `# a comment first
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ok
  namespace: shop
spec:
  template:
    spec: {containers: [{name: a, image: a}]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  namespace: shop
spec:
  template:
    metadata:
      annotations:
        prometheus.io/scrape: "true"
        ${BAD}: lots
    spec:
      containers:
      - name: a
        image: a
`;
const FLOW = `apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: shop}
spec:
  template:
    metadata: {labels: {app: x},
      annotations: {a: b, ${BAD}: lots}}
    spec: {containers: [{name: a, image: a}]}
`;
const JSON_INPUT = `{
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "bad", "namespace": "shop"},
    "spec": {"template": {"metadata": {"annotations": {
        "x": "y", "${BAD}": "lots"}},
      "spec": {"containers": [{"name": "a", "image": "a"}]}}}
}
`;
const LIST = `apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: ok, namespace: shop}
  spec:
    template:
      spec: {containers: [{name: a, image: a}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: bad, namespace: shop}
  spec:
    template:
      metadata:
        annotations: {${BAD}: lots}
      spec: {containers: [{name: a, image: a}]}
`;

for (const [form, text, needle, start] of [
  ['block YAML', BLOCK, `${BAD}: lots`, positionOf(BLOCK, 'apiVersion', BLOCK.indexOf('---'))],
  ['flow YAML', FLOW, `${BAD}: lots`, { line: 1, column: 1 }],
  ['JSON', JSON_INPUT, `"${BAD}"`, { line: 1, column: 1 }],
  ['kind: List', LIST, `${BAD}: lots`, positionOf(LIST, 'apiVersion', LIST.indexOf('name: ok'))],
] as const) {
  t.test(`a pod-template annotation error points at the annotation's line and column (${form})`, async (t) => {
    const report = reportFor([{ name: 'app.yaml', text }]);
    const bad = report.workloads.find((w) => w.name === 'bad');
    t.ok(bad, 'the workload is reported');
    const f = bad!.findings.find((x) => x.level === 'error')!;
    t.equal(f.field, `spec.template.metadata.annotations[${BAD}]`, 'the field path starts at the resource root');
    t.same(
      { file: f.location.file, line: f.location.line, column: f.location.column },
      { file: 'app.yaml', ...positionOf(text, needle) },
    );
    t.same(
      { line: bad!.location.line, column: bad!.location.column },
      start,
      'the workload is located at its first line',
    );
  });
}

t.test('fieldSteps splits paths with dotted keys and indexes', async (t) => {
  t.same(fieldSteps('spec.template.metadata.annotations[sidecar.istio.io/inject]'), [
    'spec',
    'template',
    'metadata',
    'annotations',
    'sidecar.istio.io/inject',
  ]);
  t.same(fieldSteps('spec.containers[1].ports[0].containerPort'), [
    'spec',
    'containers',
    1,
    'ports',
    0,
    'containerPort',
  ]);
});

t.test('several files: each finding names its file and its line there', async (t) => {
  const report = reportFor([
    { name: 'a.yaml', text: FLOW.replace('name: bad', 'name: first') },
    { name: 'dir/b.yaml', text: BLOCK },
  ]);
  const first = report.workloads.find((w) => w.name === 'first')!;
  const bad = report.workloads.find((w) => w.name === 'bad')!;
  t.same([first.location.file, bad.location.file], ['a.yaml', 'dir/b.yaml']);
  t.equal(bad.findings.find((f) => f.level === 'error')!.location.line, positionOf(BLOCK, `${BAD}: lots`).line);
});

const HOSTILE_NAME = `we<b>&"x'\u0001]]>`;
const hostile = BLOCK.replace('name: bad', `name: ${JSON.stringify(HOSTILE_NAME)}`);

t.test('JUnit: one testcase per workload, well-formed XML even with hostile names', async (t) => {
  const xml = junitReport(reportFor([{ name: 'a&b<c>.yaml', text: hostile }]));
  t.equal(XMLValidator.validate(xml), true, 'well-formed');
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
  const suite = doc.testsuites.testsuite;
  const cases = [suite.testcase].flat();
  t.equal(cases.length, 2, 'two workloads, two testcases');
  t.equal(suite.failures, '1');
  const failing = cases.find((c: { failure?: unknown }) => c.failure);
  t.equal(
    failing.name,
    `Deployment shop/${HOSTILE_NAME.replace('\u0001', '\uFFFD')}`,
    'the name survives escaping (a control character becomes U+FFFD)',
  );
  t.equal(failing.file, 'a&b<c>.yaml');
  t.match(
    failing.failure['#text'],
    new RegExp(`^a&b<c>\\.yaml:${positionOf(hostile, `${BAD}: lots`).line}:9: `),
    'file:line:column in the failure',
  );
  t.equal(failing.failure.type, 'bad-annotation');
  t.equal(xmlEscape('a\uD800b'), 'a\uFFFDb', 'a lone surrogate cannot be written in XML');
});

t.test(
  'SARIF: valid against the SARIF 2.1.0 schema, rules = reason codes, regions, fixes for not-injected',
  async (t) => {
    const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(SARIF_SCHEMA);
    const inject = JSON.parse(sarifReport(reportFor([{ name: 'app.yaml', text: hostile }])));
    t.ok(validate(inject), JSON.stringify(validate.errors));
    const check = JSON.parse(
      sarifReport(
        reportFor([{ name: 'dir with space/app.yaml', text: BLOCK.replace(`        ${BAD}: lots\n`, '') }], true),
      ),
    );
    t.ok(validate(check), JSON.stringify(validate.errors));
    const run = check.runs[0];
    t.equal(run.tool.driver.name, 'meshinject');
    const ids = run.tool.driver.rules.map((r: { id: string }) => r.id);
    t.same(ids, ['not-injected'], 'rule ids are reason codes');
    t.equal(run.results.length, 2, 'both Deployments are not injected');
    const r = run.results[1];
    t.equal(r.ruleId, 'not-injected');
    t.equal(r.level, 'error');
    t.equal(r.locations[0].physicalLocation.artifactLocation.uri, 'dir%20with%20space/app.yaml');
    const second = BLOCK.indexOf('name: bad');
    t.equal(
      r.locations[0].physicalLocation.region.startLine,
      positionOf(BLOCK, 'template:', second).line,
      'points at spec.template',
    );
    const fix = r.fixes[0].artifactChanges[0].replacements[0];
    t.equal(
      fix.deletedRegion.startLine,
      positionOf(BLOCK, 'apiVersion', BLOCK.indexOf('---')).line,
      'the fix replaces the resource from its first line',
    );
    t.match(fix.insertedContent.text, /name: istio-proxy/, 'with the injected resource');
    const broken = { ...check, runs: [{ ...run, results: [{ ...r, level: 'fatal' }] }] };
    t.notOk(validate(broken), 'the validator does reject an invalid log');
  },
);

t.test('GitHub annotations: one command per finding, properties and messages escaped', async (t) => {
  const text = githubReport(reportFor([{ name: 'a,b:c%.yaml', text: hostile }]));
  const lines = text.trimEnd().split('\n');
  t.equal(lines.length, 1, 'one error; info results are not annotations');
  const pos = positionOf(hostile, `${BAD}: lots`);
  t.match(
    lines[0],
    new RegExp(
      `^::error file=a%2Cb%3Ac%25\\.yaml,line=${pos.line},col=${pos.column},title=meshinject bad-annotation::`,
    ),
  );
  const multi = githubReport({
    command: 'inject',
    toolVersion: '0',
    workloads: [],
    general: [{ rule: 'invalid-config', level: 'error', fails: true, message: 'a\nb%c', location: {} }],
  });
  t.equal(multi, '::error title=meshinject invalid-config::a%0Ab%25c\n');
});

t.test('table: one row per workload, then totals', async (t) => {
  const table = tableReport(reportFor([{ name: 'app.yaml', text: BLOCK }]));
  const rows = table.trimEnd().split('\n');
  t.match(
    rows[0],
    /^NAMESPACE\s+KIND\s+NAME\s+DECISION\s+REASON\s+MESH\s+DATAPLANE$/,
    "a column for the Istio driver's tag dataplane",
  );
  t.match(rows[1], /^shop\s+Deployment\s+ok\s+injected\s+policy-enabled\s+istio\s+sidecar$/);
  t.match(rows[2], /^shop\s+Deployment\s+bad\s+error\s+bad-annotation\s+istio\s+-$/, 'a workload in error has no tags');
  t.equal(rows[3], '2 workload(s): 1 injected, 1 error; 1 failing finding(s)');
});
