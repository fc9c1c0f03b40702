/**
 * Issue #22, the edge: `main(argv, env, io)` runs in-process, returns the exit code and touches nothing of the
 * process (importing it does nothing); plan settings travel in the run options; reasons and opt-outs are the
 * drivers' data (SARIF describes another mesh's reasons, `forbidOptOut` follows `ReasonInfo.optOut`).
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main, type CliIo } from '../src/cli.ts';
import { run } from '../src/run.ts';
import { checkWorkloads, type WorkloadRecord } from '../src/reports/check.ts';
import { osmDriver } from '../src/drivers/osm/index.ts';

/** An io that records what `main` writes. */
function recorder(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdin: -1,
    stdout: { write: (s: string) => void (io.out += s), isTTY: false },
    stderr: { write: (s: string) => void (io.err += s), isTTY: false },
  };
  return io;
}

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

t.test('importing the CLI does nothing; main returns exit codes and writes only to its io', async (t) => {
  t.equal(process.exitCode, undefined, 'importing src/cli.ts set no exit code');
  const version = recorder();
  t.equal(main(['--version'], {}, version), 0);
  t.equal(version.out, 'meshinject 0.1.0\n');
  const bad = recorder();
  t.equal(main(['--revison', 'x'], {}, bad), 2);
  t.equal(bad.out, '');
  t.match(bad.err, /unknown option --revison \(did you mean --revision\?\)/, "a driver's flag is an option of the parser");
  const missing = recorder();
  t.equal(main(['/nonexistent/dir/x.yaml'], {}, missing), 2);
  t.match(missing.err, /^meshinject: error: \/nonexistent\/dir\/x\.yaml: no such file or directory/);
  t.equal(process.exitCode, undefined, 'main sets no process exit code');
});

t.test('main reads the environment it is given, not the process\'s', async (t) => {
  const dir = t.testdir({ 'web.yaml': deployment('web', 'shop') });
  t.equal(process.env.ARGOCD_APP_NAMESPACE, undefined);
  const inShop = recorder();
  t.equal(main([join(dir, 'web.yaml')], {}, inShop), 0, inShop.err);
  t.match(inShop.out, /istio-proxy/);
  const stats = recorder();
  t.equal(main([join(dir, 'web.yaml')], { MESHINJECT_PLAN_STATS: '1', MESHINJECT_PLANS: '0' }, stats), 0, stats.err);
  t.match(stats.err, /^meshinject plans: 0 hits of [1-9]\d* lookups \(0 recorded, 0 full renders\)$/m, 'plans off: renders counted, none planned (full renders count plan fallbacks only)');
  t.equal(stats.out, inShop.out, 'the same output with plans off');
  const none = recorder();
  t.equal(main([join(dir, 'web.yaml')], {}, none), 0);
  t.notMatch(none.err, /meshinject plans/, 'no stats without MESHINJECT_PLAN_STATS in the given env');
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
  const io = recorder();
  const code = main(['-c', join(dir, 'osm.yaml'), join(dir, 'web.yaml'), '--output-file', join(dir, 'out.yaml'), '--report', `sarif=${join(dir, 'r.sarif')}`], {}, io);
  t.equal(code, 0, io.err);
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
  const io = recorder();
  t.equal(main(['check', '-c', join(dir, 'check.yaml'), join(dir, 'web.yaml')], {}, io), 1);
  t.match(io.err, /opt-out-forbidden: it opts out \(annotation-false\)/, "Istio's declared opt-out fails the check");
});
