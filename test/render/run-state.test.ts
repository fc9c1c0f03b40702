/**
 * Issue #35 item 4: a run's rendering state is a value made per run (src/render/run-state.ts), so nothing one run
 * does reaches the next: its plans (recorded, served), its counters, its spent budget, its plan switches. Any
 * sequence of runs in one process gives, for each run, what that run gives on its own: the same output, results,
 * exit code and plan counters. Runs are drawn from a pool that covers both template engines (Handlebars: the
 * custom driver; Go: Istio's version-exact templates), plans on and off, and a run that spends its template
 * budget part-way.
 */
import t from 'tap';
import fc from 'fast-check';
import { run, type RunOptions } from '../../src/run.ts';
import type { PlanStats } from '../../src/render/plans.ts';
import { customTemplateConfig } from '../helpers/config.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 12);

function deployment(name: string, port: number, annotations = '{}'): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: shop}
spec:
  template:
    metadata: {labels: {app: ${name}}, annotations: ${annotations}}
    spec:
      containers:
      - name: ${name}
        image: registry.example/${name}:1.0
        ports: [{name: http, containerPort: ${port}}]
`;
}

const apps = (names: readonly string[], annotations?: string) =>
  names.map((n, i) => deployment(n, 8080 + i, annotations)).join('---\n');

/** Handlebars (custom driver): each workload's render takes 111 steps (test/render/template-budgets.test.ts). */
function customConfig(extra = ''): string {
  const tpl = `spec:\n  containers:\n  - name: s\n    image: "{{#each @root.values.l}}{{#each @root.values.l}}y{{/each}}{{/each}}-{{workload.name}}"\n`;
  return customTemplateConfig(tpl, extra);
}

/** Go templates (Istio's values templates, chosen by `inject.istio.io/templates`): the Go-template engine. */
const GO_CONFIG = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
spec:
  mesh: istio
  policy: enabled
  istio:
    values:
      global: {hub: registry.example/istio, tag: "1.26.0"}
      sidecarInjectorWebhook:
        templates:
          named: |
            metadata:
              labels:
                canonical: {{ index .ObjectMeta.Labels "app" | default .DeploymentMeta.Name | trunc 63 | quote }}
            spec:
              containers:
              - name: sidecar
                image: registry.example/sidecar
                env:
                - name: PORTS
                  value: '[{{ range .Spec.Containers }}{{ range .Ports }}{{ structToJSON . }}{{ end }}{{ end }}]'
`;

interface PoolRun {
  name: string;
  input: string;
  opts: RunOptions;
}

const POOL: readonly PoolRun[] = [
  { name: 'custom, plans on', input: apps(['a', 'b', 'c', 'd']), opts: { functionConfig: customConfig() } },
  {
    name: 'custom, plans off',
    input: apps(['a', 'b', 'c', 'd']),
    opts: { functionConfig: customConfig(), plans: { enabled: false } },
  },
  {
    name: 'custom, plans recorded on repeat',
    input: apps(['e', 'f', 'g']),
    opts: { functionConfig: customConfig(), plans: { recordOnRepeat: true } },
  },
  {
    name: 'custom, a run budget spent at the fourth workload',
    input: apps(['w0', 'w1', 'w2', 'w3', 'w4']),
    opts: { functionConfig: customConfig('  templateBudget: {runSteps: 400}\n') },
  },
  {
    name: 'go templates, plans on',
    input: apps(['web', 'api', 'cart'], '{inject.istio.io/templates: named}'),
    opts: { functionConfig: GO_CONFIG },
  },
];

/** What a user sees of a run, with its plan counters. */
function outcome(p: PoolRun): { stdout: string; stderr: string; exitCode: number; stats: PlanStats } {
  const stats: PlanStats = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  const out = run(p.input, { ...p.opts, plans: { ...p.opts.plans, stats } });
  return { stdout: out.stdout, stderr: out.stderr, exitCode: out.exitCode, stats };
}

t.test('each run of a sequence gives what it gives on its own', async (t) => {
  const alone = POOL.map(outcome);
  // The pool does what it says: the runs are not trivially equal.
  t.equal(alone[0]?.exitCode, 0, alone[0]?.stderr ?? '');
  t.ok((alone[0]?.stats.hits ?? 0) > 0, 'plans serve workloads of the first run');
  t.equal(alone[1]?.stats.hits, 0, 'no plan serves a run with plans off');
  t.equal(alone[3]?.exitCode, 1, 'the budget run stops');
  t.same(
    (alone[3]?.stderr ?? '').match(/\/w\d(?=: .*template step budget of 400 steps)/g),
    ['/w3', '/w4'],
    'three workloads fit in the run budget of 400 steps, the fourth and fifth do not',
  );
  t.equal(alone[4]?.exitCode, 0, alone[4]?.stderr ?? '');
  t.ok((alone[4]?.stats.hits ?? 0) > 0, 'plans serve Go-template workloads');
  fc.assert(
    fc.property(fc.array(fc.nat({ max: POOL.length - 1 }), { minLength: 2, maxLength: 5 }), (picks) => {
      for (const i of picks) {
        const p = POOL[i];
        if (!p) throw new Error(`pool ${i}`);
        const got = outcome(p);
        if (JSON.stringify(got) !== JSON.stringify(alone[i]))
          throw new Error(
            `${p.name} after ${picks.join(',')}: ${JSON.stringify(got.stats)} vs ${JSON.stringify(alone[i]?.stats)}`,
          );
      }
    }),
    { numRuns: RUNS },
  );
});
