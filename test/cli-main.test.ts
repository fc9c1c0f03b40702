/**
 * Issue #22, the edge: importing the CLI module does nothing (the process entry runs it); plan settings travel
 * in the run options; reasons and opt-outs are the drivers' data (SARIF describes another mesh's reasons,
 * `forbidOptOut` follows `ReasonInfo.optOut`).
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './e2e-helpers.ts';
import { run } from '../src/run.ts';
import { checkWorkloads, type WorkloadRecord } from '../src/reports/check.ts';
import { osmDriver } from '../src/drivers/osm/index.ts';

const deployment = (name: string, ns: string, annotations = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata:
      labels: {app: ${name}}${annotations}
    spec:
      containers:
      - name: ${name}
        image: ${name}:1
`;

t.test('importing the CLI does nothing: no exit code, no stream listeners, no output', async (t) => {
  const listeners = process.stdout.listenerCount('error');
  const cli = await import('../src/cli.ts');
  t.equal(typeof cli.runCli, 'function', 'the module exports the command');
  t.equal(process.exitCode, undefined, 'importing src/cli.ts set no exit code');
  t.equal(process.stdout.listenerCount('error'), listeners, 'and added no stream listener');
});

t.test('the plan switches of the environment reach the run (not a process-wide setting)', async (t) => {
  const dir = t.testdir({ 'web.yaml': deployment('web', 'shop') });
  const plain = runCli([join(dir, 'web.yaml')]);
  t.equal(plain.status, 0, plain.stderr);
  t.notMatch(plain.stderr, /meshinject plans/, 'no stats without MESHINJECT_PLAN_STATS');
  const stats = runCli([join(dir, 'web.yaml')], { env: { MESHINJECT_PLAN_STATS: '1', MESHINJECT_PLANS: '0' } });
  t.equal(stats.status, 0, stats.stderr);
  t.match(stats.stderr, /^meshinject plans: 0 hits of [1-9]\d* lookups \(0 recorded, 0 full renders\)$/m, 'plans off: renders counted, none planned (full renders count plan fallbacks only)');
  t.equal(stats.stdout, plain.stdout, 'the same output with plans off');
  // The CLI records a shape's plan at its second workload (recordOnRepeat, src/render/plans.ts): the first is rendered in full.
  const once = runCli([join(dir, 'web.yaml')], { env: { MESHINJECT_PLAN_STATS: '1' } });
  t.match(once.stderr, /^meshinject plans: 0 hits of 1 lookups \(0 recorded, 1 full renders\)$/m, 'plans on, one workload: rendered in full');
  const twice = t.testdir({ 'shop.yaml': [deployment('web', 'shop'), deployment('api', 'shop'), deployment('cart', 'shop')].join('---\n') });
  const on = runCli([join(twice, 'shop.yaml')], { env: { MESHINJECT_PLAN_STATS: '1' } });
  t.match(on.stderr, /^meshinject plans: 1 hits of 3 lookups \(1 recorded, 1 full renders\)$/m, 'plans on: recorded at the second workload of a shape, served at the third');
  const off = runCli([join(twice, 'shop.yaml')], { env: { MESHINJECT_PLANS: '0' } });
  t.equal(on.stdout, off.stdout, 'the same output as with plans off');
});

t.test('plan settings travel in the run options: counters of this run, plans off for this run only', async (t) => {
  const input = [deployment('a', 'shop'), deployment('b', 'shop'), deployment('c', 'shop')].join('---\n');
  const on = { lookups: 0, hits: 0, recorded: 0, full: 0 };
  const planned = run(input, { plans: { stats: on } });
  t.equal(planned.exitCode, 0);
  t.ok(on.lookups >= 3 && on.hits >= 1, `plans serve repeated shapes (${JSON.stringify(on)})`);
  const off = { lookups: 0, hits: 0, recorded: 0, full: 0 };
  const full = run(input, { plans: { enabled: false, stats: off } });
  t.equal(full.stdout, planned.stdout, 'the same output rendered in full');
  t.same({ hits: off.hits, recorded: off.recorded, full: off.full }, { hits: 0, recorded: 0, full: 0 }, 'no plan looked up, none recorded');
  t.equal(off.lookups, on.lookups, 'the same renders asked for');
  const again = { lookups: 0, hits: 0, recorded: 0, full: 0 };
  run(input, { plans: { stats: again } });
  t.ok(again.hits >= 1, 'the next run has plans again: the switch was not process-wide');
});

t.test("SARIF describes another mesh's reasons from its driver", async (t) => {
  const dir = t.testdir({
    'osm.yaml': 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n  mesh: osm\n',
    'web.yaml': deployment('web', 'nowhere'),
  });
  const r = runCli(['-c', 'osm.yaml', 'web.yaml', '--output-file', 'out.yaml', '--report', 'sarif=r.sarif'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  const rules = JSON.parse(readFileSync(join(dir, 'r.sarif'), 'utf8')).runs[0].tool.driver.rules as Array<{ id: string; shortDescription: { text: string } }>;
  const rule = rules.find((r) => r.id === 'namespace-not-monitored');
  t.ok(rule, `the unmonitored namespace is a finding (rules: ${rules.map((r) => r.id).join(', ')})`);
  t.equal(rule?.shortDescription.text, osmDriver.reasonInfo!['namespace-not-monitored']!.description);
  t.not(rule?.shortDescription.text, 'namespace-not-monitored', 'a description, not the raw id');
});

t.test('check: opt-outs are what the driver declares, not a naming rule', async (t) => {
  const record = (reason: string): WorkloadRecord & { input: number } => ({
    input: 0, position: 0, namespace: 'shop', ok: true,
    id: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop' },
    decision: { inject: false, reason, detail: '', intended: true, warnings: [], trace: [] },
  });
  const rules = { requireInjection: [], forbidOptOut: true };
  const findings = (reason: string, optOuts: Set<string>) =>
    checkWorkloads([record(reason)], [new Map()], new Map(), rules, 'drift', () => 'spec.template', optOuts).results.map((r) => r.tags?.['meshinject.dev/check'] && r.message);
  t.match(findings('opted-out-by-label', new Set(['opted-out-by-label'])), [/^opt-out-forbidden: it opts out \(opted-out-by-label\)/], 'a declared opt-out of any name');
  t.same(findings('label-false', new Set()), [], 'a reason ending in -false that is not declared an opt-out');
  const dir = t.testdir({
    'check.yaml': 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n  check: {forbidOptOut: true}\n',
    'web.yaml': deployment('web', 'shop', '\n      annotations: {sidecar.istio.io/inject: "false"}'),
  });
  const r = runCli(['check', '-c', 'check.yaml', 'web.yaml'], { cwd: dir });
  t.equal(r.status, 1);
  t.match(r.stderr, /opt-out-forbidden: it opts out \(annotation-false\)/, "Istio's declared opt-out fails the check");
});
