/**
 * Bounded templates (issue 19, item 4), tried as a tenant who writes the templates would: loops that nest,
 * partials and Go `template` calls that double at each level, builders asked for a huge result (`until
 * 30000000` under a 64 MB heap, `repeat`, `indent`, `printf` doubling). Each must end, in seconds, as an error
 * result (exit 1) naming the template, its line and the budget; never a V8 crash, never a hang. A config may
 * lower the budgets, not raise them past the ceiling; the run's budget counts the same with plans on or off.
 */
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BIN, workspace } from '../helpers/e2e.ts';
import { customTemplateConfig } from '../helpers/config.ts';
import { DEFAULT_TEMPLATE_BUDGETS, TEMPLATE_BUDGET_CEILINGS } from '../../src/render/budget.ts';

/** A wall-clock bound far above a budget stop (about a second on a quiet machine), for a shared and loaded machine. */
const LIMIT_MS = 90_000;

function deployment(name: string, annotations: Record<string, string> = {}): string {
  const ann = Object.entries(annotations)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ');
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: shop}
spec:
  template:
    metadata: {labels: {app: ${name}}, annotations: {${ann}}}
    spec:
      containers:
      - {name: app, image: nginx}
`;
}

function goConfig(templates: Record<string, string>, extra = ''): string {
  const body = Object.entries(templates)
    .map(([k, v]) => `          ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  return `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
spec:
  mesh: istio
  policy: enabled
${extra}  istio:
    values:
      sidecarInjectorWebhook:
        templates:
${body}
`;
}

interface Ran {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function cli(args: string[], opts: { heapMb?: number; env?: Record<string, string> } = {}): Ran {
  const t0 = performance.now();
  const node = opts.heapMb ? [`--max-old-space-size=${opts.heapMb}`] : [];
  const env: NodeJS.ProcessEnv = { ...process.env, MESHINJECT_VERIFY_PLANS: '1', ...opts.env };
  delete env.LOG_TO_STDERR;
  const r = spawnSync(process.execPath, [...node, BIN, ...args], {
    encoding: 'utf8',
    env,
    timeout: LIMIT_MS,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - t0 };
}

/** Runs `config` on one workload and asserts a budget error result naming the template, a line and the budget. */
function assertStopped(
  t: Test,
  dir: string,
  config: string,
  app: string,
  expect: { template: RegExp; budget: RegExp; heapMb?: number },
): void {
  const files = workspaceFiles(dir, { 'cfg.yaml': config, 'app.yaml': app });
  const r = cli(['-c', files['cfg.yaml']!, files['app.yaml']!], expect.heapMb ? { heapMb: expect.heapMb } : {});
  t.equal(r.signal, null, `ended by itself (${Math.round(r.ms)} ms), not killed`);
  t.equal(r.status, 1, 'an error result: exit 1');
  t.equal(r.stdout, '', 'nothing on stdout');
  t.notMatch(r.stderr, /FATAL ERROR|heap out of memory|internal error/, 'no V8 crash, no internal error');
  t.match(r.stderr, expect.template, 'names the template');
  t.match(r.stderr, /line \d+|:\d+:\d+: executing/, 'names a line');
  t.match(r.stderr, expect.budget, 'names the budget');
}

let n = 0;
/** Writes `files` into a fresh folder under `dir`; returns their paths by name. */
function workspaceFiles(dir: string, files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const sub = `case${n++}`;
  for (const [name, text] of Object.entries(files)) {
    const p = join(dir, sub, name);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    out[name] = p;
  }
  return out;
}

const STEP_BUDGET = /step budget of one render, 500000 steps \(spec\.templateBudget\.steps/;

t.test('Handlebars: ten nested #each over ten items stops at the step budget', async (t) => {
  const dir = workspace(t, {}, 'budget');
  const nested = `${'{{#each @root.values.l}}'.repeat(10)}x${'{{/each}}'.repeat(10)}`;
  assertStopped(
    t,
    dir,
    customTemplateConfig(`spec:\n  containers:\n  - name: s\n    image: x\n    args: ["${nested}"]\n`),
    deployment('web'),
    { template: /template "sidecar"/, budget: STEP_BUDGET },
  );
});

t.test('Handlebars: forty partials each calling the previous one twice stop at the step budget', async (t) => {
  const dir = workspace(t, {}, 'budget');
  let partials = '{{#*inline "p0"}}x{{/inline}}';
  for (let i = 1; i <= 40; i++) partials += `{{#*inline "p${i}"}}{{> p${i - 1}}}{{> p${i - 1}}}{{/inline}}`;
  assertStopped(
    t,
    dir,
    customTemplateConfig(`${partials}\nspec:\n  containers:\n  - name: s\n    image: "{{> p40}}"\n`),
    deployment('web'),
    { template: /template "sidecar"/, budget: STEP_BUDGET },
  );
});

t.test('Handlebars: an indent bomb is refused before it is built', async (t) => {
  const dir = workspace(t, {}, 'budget');
  assertStopped(
    t,
    dir,
    customTemplateConfig('spec:\n  containers:\n  - name: s\n    image: "{{indentBlock 300000000 "x"}}"\n'),
    deployment('web'),
    {
      template: /template "sidecar".*line 4/,
      budget: /indent would build 300000001 characters, more than the output budget of one render/,
    },
  );
});

const GO_BOMBS: Record<string, { template: string; budget: RegExp }> = {
  until: {
    template: 'metadata:\n  annotations:\n    n: "{{ len (until 30000000) }}"\n',
    budget: /until would build a list of 30000000 elements, more than the step budget/,
  },
  repeat: {
    template: 'metadata:\n  annotations:\n    n: "{{ repeat 1000000000 "x" }}"\n',
    budget: /repeat would build 1000000000 characters, more than the output budget/,
  },
  doubling: {
    template:
      '{{- $x := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $x = printf "%s%s" $x $x }}{{ end }}\nmetadata: {}\n',
    budget: /printf would build \d+ characters, more than the output budget|step budget of one render, 500000 steps/,
  },
  width: {
    template: 'metadata:\n  annotations:\n    n: "{{ printf "%0900000000d" 1 }}"\n',
    budget: /printf width would build 900000000 characters/,
  },
  loops: {
    template: `${'{{ range until 10 }}'.repeat(10)}x${'{{ end }}'.repeat(10)}\nmetadata: {}\n`,
    budget: STEP_BUDGET,
  },
  calls: {
    template: `{{- define "p0" }}x{{ end }}${Array.from({ length: 40 }, (_, i) => `{{ define "p${i + 1}" }}{{ template "p${i}" }}{{ template "p${i}" }}{{ end }}`).join('')}{{ template "p40" }}\nmetadata: {}\n`,
    budget: STEP_BUDGET,
  },
};

for (const [name, bomb] of Object.entries(GO_BOMBS)) {
  t.test(`Go templates under a 64 MB heap: ${name}`, async (t) => {
    const dir = workspace(t, {}, 'budget');
    assertStopped(
      t,
      dir,
      goConfig({ [name]: bomb.template }),
      deployment('web', { 'inject.istio.io/templates': name }),
      { template: new RegExp(`template: ${name}:\\d+:\\d+: executing`), budget: bomb.budget, heapMb: 64 },
    );
  });
}

t.test('a config lowers the budgets; raising one past its ceiling is a config error', async (t) => {
  const dir = workspace(t, {}, 'budget');
  const loop = (k: number) =>
    `spec:\n  containers:\n  - name: s\n    image: "${'{{#each @root.values.l}}'.repeat(k)}y${'{{/each}}'.repeat(k)}"\n`;
  const small = '  templateBudget: {steps: 500}\n';
  const ok = workspaceFiles(dir, { 'cfg.yaml': customTemplateConfig(loop(2), small), 'app.yaml': deployment('web') });
  t.equal(cli(['-c', ok['cfg.yaml']!, ok['app.yaml']!]).status, 0, '111 steps fit in 500');
  const over = workspaceFiles(dir, { 'cfg.yaml': customTemplateConfig(loop(3), small), 'app.yaml': deployment('web') });
  const r = cli(['-c', over['cfg.yaml']!, over['app.yaml']!]);
  t.equal(r.status, 1, '1111 steps do not');
  t.match(r.stderr, /step budget of one render, 500 steps/);
  const out = workspaceFiles(dir, {
    'cfg.yaml': customTemplateConfig(
      'spec:\n  containers:\n  - name: s\n    image: "{{#each @root.values.l}}0123456789{{/each}}"\n',
      '  templateBudget: {outputSize: 80}\n',
    ),
    'app.yaml': deployment('web'),
  });
  t.match(
    cli(['-c', out['cfg.yaml']!, out['app.yaml']!]).stderr,
    /output budget of one render, 80 characters/,
    'the output budget too',
  );
  for (const [field, ceiling] of Object.entries(TEMPLATE_BUDGET_CEILINGS)) {
    const high = workspaceFiles(dir, {
      'cfg.yaml': customTemplateConfig(loop(1), `  templateBudget: {${field}: ${ceiling + 1}}\n`),
      'app.yaml': deployment('web'),
    });
    const h = cli(['-c', high['cfg.yaml']!, high['app.yaml']!]);
    t.not(h.status, 0, `${field} above its ceiling (${ceiling}) is refused`);
    t.match(h.stderr, new RegExp(`templateBudget\\.${field}`), 'naming the field');
  }
  t.ok(
    DEFAULT_TEMPLATE_BUDGETS.steps <= TEMPLATE_BUDGET_CEILINGS.steps &&
      DEFAULT_TEMPLATE_BUDGETS.runSteps <= TEMPLATE_BUDGET_CEILINGS.runSteps,
  );
});

t.test('the run budget adds every render up, the same with plans on or off', async (t) => {
  const dir = workspace(t, {}, 'budget');
  // Each workload's render takes 111 steps; six workloads of one shape (plans serve five of them).
  const tpl = `spec:\n  containers:\n  - name: s\n    image: "{{#each @root.values.l}}{{#each @root.values.l}}y{{/each}}{{/each}}"\n`;
  const apps = Array.from({ length: 6 }, (_, i) => deployment(`web${i}`)).join('---\n');
  for (const plans of ['1', '0']) {
    const f = workspaceFiles(dir, {
      'cfg.yaml': customTemplateConfig(tpl, '  templateBudget: {runSteps: 400}\n'),
      'app.yaml': apps,
    });
    const r = cli(['-c', f['cfg.yaml']!, f['app.yaml']!], { env: { MESHINJECT_PLANS: plans } });
    t.equal(r.status, 1, `plans ${plans === '1' ? 'on' : 'off'}: the run stops`);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('[error]'));
    t.equal(errors.length, 3, 'three workloads fit in 400 steps, three do not');
    t.match(errors[0], /Deployment\/shop\/web3.*template step budget of 400 steps \(spec\.templateBudget\.runSteps\)/);
  }
  const f = workspaceFiles(dir, { 'cfg.yaml': customTemplateConfig(tpl), 'app.yaml': apps });
  t.equal(cli(['-c', f['cfg.yaml']!, f['app.yaml']!]).status, 0, 'within the default budget, all six are injected');
});
