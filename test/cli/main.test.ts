/**
 * Issue #22, the edge: `main(argv, env, io)` runs in-process with its own environment and streams and resolves
 * to the exit code; importing the CLI module does nothing (the process entry runs it); plan settings travel
 * in the run options; reasons and opt-outs are the drivers' data (SARIF describes another mesh's reasons,
 * `forbidOptOut` follows `ReasonInfo.optOut`).
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/e2e.ts';
import { run } from '../../src/run.ts';
import { checkWorkloads, type WorkloadRecord } from '../../src/check/findings.ts';
import { osmDriver } from '../../src/drivers/osm/index.ts';
import type { CliEnv, CliIo } from '../../src/cli.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const deployment = (name: string, ns: string, annotations = '') =>
  fixtureDeployment(name, { namespace: ns, templateExtra: annotations });

/** A Deployment that names no namespace. */
const unplaced = deployment('web', 'x').replace('  namespace: x\n', '');

/** What one in-process run wrote and returned. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main` in this process with a fake io: stdin from `input`, streams collected (terminals when asked),
 * a clock that advances 125 ms per reading, the working directory `cwd`. `env` is the whole environment.
 */
async function inProcess(
  argv: string[],
  opts: {
    input?: string;
    env?: CliEnv;
    cwd?: string;
    stdoutTty?: boolean;
    stderrTty?: boolean;
    stdoutWrite?: (text: string) => void;
  } = {},
): Promise<Ran> {
  const { main } = await import('../../src/cli.ts');
  const out: string[] = [];
  const err: string[] = [];
  let clock = 1000;
  const io: CliIo = {
    stdin: Buffer.from(opts.input ?? '', 'utf8'),
    stdout: { isTTY: opts.stdoutTty ?? false, write: opts.stdoutWrite ?? ((text: string) => out.push(text)) },
    stderr: { isTTY: opts.stderrTty ?? false, write: (text: string) => err.push(text) },
    cwd: opts.cwd ?? process.cwd(),
    now: () => (clock += 125),
  };
  const code = await main(argv, opts.env ?? {}, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

t.test('importing the CLI does nothing: no exit code, no stream listeners, no output', async (t) => {
  const listeners = process.stdout.listenerCount('error');
  const errListeners = process.stderr.listenerCount('error');
  const writes: string[] = [];
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const recorder = (stream: string) =>
    ((chunk: string) => {
      writes.push(`${stream}: ${chunk}`);
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = recorder('stdout');
  process.stderr.write = recorder('stderr');
  let cli: typeof import('../../src/cli.ts');
  try {
    // A module instance of its own (the query), so that its top level runs here even if another test loaded it.
    cli = await import(`../../src/cli.ts?import-only=${Date.now()}`);
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  }
  t.equal(typeof cli.main, 'function', 'the module exports main');
  t.equal(typeof cli.runCli, 'function', 'and the process binding');
  t.same(writes, [], 'importing wrote nothing');
  t.equal(process.exitCode, undefined, 'importing src/cli.ts set no exit code');
  t.equal(process.stdout.listenerCount('error'), listeners, 'and added no stream listener');
  t.equal(process.stderr.listenerCount('error'), errListeners);
});

t.test('only the process binding and the signal path of atomic writes touch process', async (t) => {
  const { readdirSync } = await import('node:fs');
  const src = new URL('../../src/', import.meta.url);
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  const found: string[] = [];
  for (const f of files) {
    let text = readFileSync(new URL(f, src), 'utf8');
    if (f === 'cli.ts') {
      // runCli, the binding the process entry calls, is allowed: everything else in the module gets io and env.
      const start = text.indexOf('export function runCli(');
      t.ok(start > 0, 'src/cli.ts has runCli');
      text = text.slice(0, start) + text.slice(text.indexOf('\n}\n', start));
    }
    text.split('\n').forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (/^\s*(\*|\/\*\*?)/.test(line) || !/\bprocess\.[a-zA-Z]/.test(code)) return;
      found.push(`src/${f}:${i + 1}: ${line.trim()}`);
    });
  }
  // The Worker of a contained run (src/cli/contained.ts) is a process binding too: its clock, and signals.
  const allowed = (l: string) =>
    (l.startsWith('src/cli/atomic-write.ts:') && /process\.(pid|on|removeListener|exit|kill)\(?/.test(l)) ||
    (l.startsWith('src/cli/contained.ts:') && /process\.(on|removeListener|exit|hrtime)\b/.test(l));
  t.same(
    found.filter((l) => !allowed(l)),
    [],
    'no other line reads or sets process',
  );
  t.ok(found.some(allowed), 'the scan sees the lines it allows (atomic-write: pid, signals, exit)');
});

t.test('main in-process: the bytes, exit code and stderr of the binary for the same input', async (t) => {
  const input = `${deployment('web', 'shop')}---\n${deployment('api', 'shop', '\n      annotations: {sidecar.istio.io/inject: "false"}')}`;
  const env = { MESHINJECT_VERIFY_PLANS: '1' };
  const spawned = runCli([], { input, env });
  t.equal(spawned.status, 0, spawned.stderr);
  const r = await inProcess([], { input, env });
  t.equal(r.code, 0);
  t.ok(r.stdout.includes('name: istio-proxy'), 'injected');
  t.equal(r.stdout, spawned.stdout, 'stdout byte for byte');
  t.equal(r.stderr, spawned.stderr, 'stderr too');
  t.equal(process.exitCode, undefined, 'the process exit code is untouched');
});

t.test('exit codes of inject, check and diff, and a usage error', async (t) => {
  const dir = t.testdir({
    'a.yaml': deployment('web', 'shop'),
    'dup.yaml': `${deployment('web', 'shop')}---\n${deployment('web', 'shop').replace('image: web:1', 'image: web:2')}`,
  });
  const inject = await inProcess(['a.yaml'], { cwd: dir });
  t.match(inject, { code: 0, stderr: '' }, 'inject: 0');
  writeFileSync(join(dir, 'injected.yaml'), inject.stdout);
  const dup = await inProcess(['dup.yaml'], { cwd: dir });
  t.match(dup, { code: 1, stdout: '' }, 'inject with an error result: 1, nothing on stdout');
  t.match(dup.stderr, /^\[error\] apps\/v1\/Deployment\/shop\/web: .*appears twice/m);
  const missing = await inProcess(['nope.yaml'], { cwd: dir });
  t.same(
    missing,
    { code: 2, stdout: '', stderr: 'meshinject: error: nope.yaml: no such file or directory\n' },
    'a missing input: 2, named as given',
  );

  t.equal((await inProcess(['check', 'injected.yaml'], { cwd: dir })).code, 0, 'check of injected manifests: 0');
  const failing = await inProcess(['check', 'a.yaml'], { cwd: dir });
  t.equal(failing.code, 1, 'check of uninjected manifests: 1');
  t.match(failing.stderr, /not-injected/);
  const badFlag = await inProcess(['check', '--fail-on', 'bogus', 'a.yaml'], { cwd: dir });
  t.same(badFlag, {
    code: 2,
    stdout: '',
    stderr:
      'meshinject: option --fail-on must be one of error, drift, warning; got "bogus"\nRun \'meshinject --help\' for usage.\n',
  });

  const changes = await inProcess(['diff', 'a.yaml'], { cwd: dir });
  t.equal(changes.code, 1, 'diff with changes: 1');
  t.match(changes.stdout, /^diff --git a\/a\.yaml b\/a\.yaml\n/);
  t.same(
    await inProcess(['diff', 'injected.yaml'], { cwd: dir }),
    { code: 0, stdout: '', stderr: '' },
    'diff without changes: 0',
  );
  const diffError = await inProcess(['diff', 'dup.yaml'], { cwd: dir });
  t.match(diffError, { code: 2, stdout: '' }, 'diff of an input with error results: 2');

  const usage = await inProcess(['--bogus']);
  t.same(usage, {
    code: 2,
    stdout: '',
    stderr:
      "meshinject: unknown option --bogus; to name a file that starts with '-', put it after '--'\nRun 'meshinject --help' for usage.\n",
  });
  t.equal(process.exitCode, undefined, 'no run touched the process exit code');
});

t.test(
  'the environment is the one given: ARGOCD_APP_NAMESPACE, NO_COLOR, plan stats, nothing from process.env',
  async (t) => {
    const ns = await inProcess(['explain'], { input: unplaced, env: { ARGOCD_APP_NAMESPACE: 'shop' } });
    t.equal(ns.code, 0, ns.stderr);
    t.match(ns.stdout, /^Deployment shop\/web\n/, "Argo CD's application namespace is the default namespace");
    const flag = await inProcess(['explain', '--default-namespace', 'ops'], {
      input: unplaced,
      env: { ARGOCD_APP_NAMESPACE: 'shop' },
    });
    t.match(flag.stdout, /^Deployment ops\/web\n/, '--default-namespace wins over it');
    process.env.ARGOCD_APP_NAMESPACE = 'from-process';
    try {
      const none = await inProcess(['explain'], { input: unplaced, env: {} });
      t.match(none.stdout, /^Deployment default\/web\n/, 'the process environment is not read');
    } finally {
      delete process.env.ARGOCD_APP_NAMESPACE;
    }

    const diff = (env: CliEnv, stdoutTty: boolean) =>
      inProcess(['diff'], { input: deployment('web', 'shop'), env, stdoutTty });
    const tty = await diff({}, true);
    t.equal(tty.code, 1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI colour escape (ESC [) is what the test looks for
    t.match(tty.stdout, /\u001b\[32m\+ {6}- name: istio-proxy\u001b\[m/, 'stdout a terminal: coloured');
    const noColor = await diff({ NO_COLOR: '1' }, true);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI colour escape (ESC [) is what the test looks for
    t.notMatch(noColor.stdout, /\u001b\[/, 'NO_COLOR: plain');
    t.equal(noColor.stdout, (await diff({}, false)).stdout, 'the same as when stdout is not a terminal');

    const stats = await inProcess([], { input: deployment('web', 'shop'), env: { MESHINJECT_PLAN_STATS: '1' } });
    t.match(stats.stderr, /^meshinject plans: \d+ hits of [1-9]\d* lookups/m, 'MESHINJECT_PLAN_STATS from env');
    t.notMatch(
      (await inProcess([], { input: deployment('web', 'shop') })).stderr,
      /meshinject plans/,
      'and not in the next run',
    );

    const native = await inProcess([], {
      input: `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- ${deployment('web', 'shop').trimEnd().replace(/\n/g, '\n  ')}\nfunctionConfig:\n  apiVersion: meshinject.dev/v1alpha1\n  kind: SidecarInjection\n  metadata: {name: m}\n  spec: {nativeSidecars: auto}\n`,
      env: { KUBE_VERSION: '1.33' },
    });
    t.equal(native.code, 0, native.stderr);
    t.match(native.stdout, /restartPolicy: Always/, 'KUBE_VERSION from env: native sidecars on Kubernetes 1.33');
  },
);

t.test(
  'the terminal summary uses the io clock; stdout write errors; the size budget; one run leaves nothing to the next',
  async (t) => {
    const input = deployment('web', 'shop');
    const summary = await inProcess([], { input, stderrTty: true });
    t.equal(
      summary.stderr,
      'meshinject: 1 injected, 0 skipped, 0 error(s) (125 ms)\n',
      'stderr a terminal: the summary, timed by io.now',
    );
    const fail = (code: string) => () => {
      throw Object.assign(new Error(`${code}: write failed`), { code });
    };
    t.same(
      await inProcess([], { input, stdoutWrite: fail('EPIPE') }),
      { code: 0, stdout: '', stderr: '' },
      'a closed pipe: quiet',
    );
    t.same(
      await inProcess([], { input, stdoutWrite: fail('ENOSPC') }),
      { code: 2, stdout: '', stderr: 'meshinject: error: cannot write the output: no space left on device\n' },
      'a full disk: one line, exit 2',
    );
    const big = await inProcess(['--max-input-bytes', '100'], { input });
    t.same(
      big,
      {
        code: 2,
        stdout: '',
        stderr: 'meshinject: error: stdin: input larger than the limit of 100 bytes (--max-input-bytes)\n',
      },
      'stdin bytes count against the budget',
    );
    const after = await inProcess([], { input });
    t.equal(after.code, 0, 'the next run has its own budget');
    const dir = t.testdir({});
    const file = await inProcess(['--output-file', 'out.yaml'], { input, cwd: dir });
    t.same(file, { code: 0, stdout: '', stderr: '' }, '--output-file: nothing on stdout');
    t.equal(readFileSync(join(dir, 'out.yaml'), 'utf8'), after.stdout, 'the file holds what stdout would, in io.cwd');
    const tree = t.testdir({
      m: { 'web.yaml': input, 'other.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n' },
    });
    const inPlace = await inProcess(['diff', '-i', 'm'], { cwd: tree });
    t.same(
      inPlace,
      { code: 0, stdout: '', stderr: 'meshinject: 1 file(s) changed: m/web.yaml\n' },
      'diff -i: relative names from io.cwd, as given',
    );
    t.equal(readFileSync(join(tree, 'm/web.yaml'), 'utf8'), after.stdout, 'the file rewritten in place');
    const report = await inProcess(['check', 'm', '--report', 'junit=r.xml'], { cwd: tree });
    t.equal(report.code, 0, report.stderr);
    t.match(
      readFileSync(join(tree, 'r.xml'), 'utf8'),
      /^<\?xml[\s\S]*<testsuites[\s\S]*web/,
      '--report FORMAT=PATH written in io.cwd',
    );
  },
);

t.test('the plan switches of the environment reach the run (not a process-wide setting)', async (t) => {
  const dir = t.testdir({ 'web.yaml': deployment('web', 'shop') });
  const plain = runCli([join(dir, 'web.yaml')]);
  t.equal(plain.status, 0, plain.stderr);
  t.notMatch(plain.stderr, /meshinject plans/, 'no stats without MESHINJECT_PLAN_STATS');
  const stats = runCli([join(dir, 'web.yaml')], { env: { MESHINJECT_PLAN_STATS: '1', MESHINJECT_PLANS: '0' } });
  t.equal(stats.status, 0, stats.stderr);
  t.match(
    stats.stderr,
    /^meshinject plans: 0 hits of [1-9]\d* lookups \(0 recorded, 0 full renders, 0 by key\)$/m,
    'plans off: renders counted, none planned (full renders count plan fallbacks only)',
  );
  t.equal(stats.stdout, plain.stdout, 'the same output with plans off');
  // The CLI records a shape's plan at its second lookup (recordOnRepeat, src/render/plans.ts): the first is rendered
  // in full. Each workload is looked up twice: by its injection and by the uninject that checks, at inject time,
  // what the status record must keep (src/patch/status-repairs.ts), which renders the same template inputs.
  const once = runCli([join(dir, 'web.yaml')], { env: { MESHINJECT_PLAN_STATS: '1' } });
  t.match(
    once.stderr,
    /^meshinject plans: 0 hits of 2 lookups \(1 recorded, 1 full renders, 2 by key\)$/m,
    'plans on, one workload: rendered in full, then recorded by its uninject check',
  );
  const twice = t.testdir({
    'shop.yaml': [deployment('web', 'shop'), deployment('api', 'shop'), deployment('cart', 'shop')].join('---\n'),
  });
  const on = runCli([join(twice, 'shop.yaml')], { env: { MESHINJECT_PLAN_STATS: '1' } });
  t.match(
    on.stderr,
    /^meshinject plans: 4 hits of 6 lookups \(1 recorded, 1 full renders, 6 by key\)$/m,
    'plans on: recorded at the second lookup of a shape, every later one served',
  );
  const off = runCli([join(twice, 'shop.yaml')], { env: { MESHINJECT_PLANS: '0' } });
  t.equal(on.stdout, off.stdout, 'the same output as with plans off');
});

t.test('plan settings travel in the run options: counters of this run, plans off for this run only', async (t) => {
  const input = [deployment('a', 'shop'), deployment('b', 'shop'), deployment('c', 'shop')].join('---\n');
  const on = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  const planned = run(input, { plans: { stats: on } });
  t.equal(planned.exitCode, 0);
  t.ok(on.lookups >= 3 && on.hits >= 1, `plans serve repeated shapes (${JSON.stringify(on)})`);
  const off = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  const full = run(input, { plans: { enabled: false, stats: off } });
  t.equal(full.stdout, planned.stdout, 'the same output rendered in full');
  t.same(
    { hits: off.hits, recorded: off.recorded, full: off.full },
    { hits: 0, recorded: 0, full: 0 },
    'no plan looked up, none recorded',
  );
  t.equal(off.lookups, on.lookups, 'the same renders asked for');
  const again = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  run(input, { plans: { stats: again } });
  t.ok(again.hits >= 1, 'the next run has plans again: the switch was not process-wide');
});

t.test("SARIF describes another mesh's reasons from its driver", async (t) => {
  const dir = t.testdir({
    'osm.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n  mesh: osm\n',
    'web.yaml': deployment('web', 'nowhere'),
  });
  const r = runCli(['-c', 'osm.yaml', 'web.yaml', '--output-file', 'out.yaml', '--report', 'sarif=r.sarif'], {
    cwd: dir,
  });
  t.equal(r.status, 0, r.stderr);
  const rules = JSON.parse(readFileSync(join(dir, 'r.sarif'), 'utf8')).runs[0].tool.driver.rules as Array<{
    id: string;
    shortDescription: { text: string };
  }>;
  const rule = rules.find((r) => r.id === 'namespace-not-monitored');
  t.ok(rule, `the unmonitored namespace is a finding (rules: ${rules.map((r) => r.id).join(', ')})`);
  t.equal(rule?.shortDescription.text, osmDriver.reasonInfo!['namespace-not-monitored']!.description);
  t.not(rule?.shortDescription.text, 'namespace-not-monitored', 'a description, not the raw id');
});

t.test('check: opt-outs are what the driver declares, not a naming rule', async (t) => {
  const record = (reason: string): WorkloadRecord & { input: number } => ({
    input: 0,
    position: 0,
    namespace: 'shop',
    ok: true,
    id: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop' },
    decision: { inject: false, reason, detail: '', intended: true, warnings: [], trace: [] },
  });
  const rules = { requireInjection: [], forbidOptOut: true };
  const findings = (reason: string, optOuts: Set<string>) =>
    checkWorkloads(
      [record(reason)],
      [new Map()],
      new Map(),
      rules,
      'drift',
      () => 'spec.template',
      optOuts,
    ).results.map((r) => r.tags?.['meshinject.dev/check'] && r.message);
  t.match(
    findings('opted-out-by-label', new Set(['opted-out-by-label'])),
    [/^opt-out-forbidden: it opts out \(opted-out-by-label\)/],
    'a declared opt-out of any name',
  );
  t.same(findings('label-false', new Set()), [], 'a reason ending in -false that is not declared an opt-out');
  const dir = t.testdir({
    'check.yaml':
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n  check: {forbidOptOut: true}\n',
    'web.yaml': deployment('web', 'shop', '\n      annotations: {sidecar.istio.io/inject: "false"}'),
  });
  const r = runCli(['check', '-c', 'check.yaml', 'web.yaml'], { cwd: dir });
  t.equal(r.status, 1);
  t.match(r.stderr, /opt-out-forbidden: it opts out \(annotation-false\)/, "Istio's declared opt-out fails the check");
});

t.test('debugging variables of the yaml package in the environment do not reach stdout', async (t) => {
  // An anchor sends the input through the `yaml` package's parser and composer, which print every lexical
  // token (LOG_TOKENS) and every document (LOG_STREAM) to stdout when these are set (scripts/build.mjs).
  const dir = t.testdir({
    'web.yaml': `${deployment('web', 'shop')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: &l {app: c}\ndata: *l\n`,
  });
  const plain = runCli([join(dir, 'web.yaml')]);
  t.equal(plain.status, 0, plain.stderr);
  t.match(plain.stdout, /istio-proxy/, 'injected');
  const logged = runCli([join(dir, 'web.yaml')], { env: { LOG_TOKENS: '1', LOG_STREAM: '1' } });
  t.equal(logged.status, 0, logged.stderr);
  t.equal(logged.stdout, plain.stdout, 'the same bytes on stdout');
  t.equal(logged.stderr, plain.stderr, 'nothing more on stderr');
});
