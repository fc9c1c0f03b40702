/**
 * Every template function that has a plan rule, with placeholders in every argument position: the class of
 * "a rule that treats an argument as copied text where the function computes with it" (a `printf` width, an
 * `indent` count, a `trunc` length). For each rule'd function of both template engines (Handlebars:
 * `SHARED_PLAN_RULES`; Go: `GO_PLAN_RULES`), generated calls take their arguments from the pod's data (names of
 * 1 to 20 characters, digit strings, slot-safe text that some function reads as a number such as `Infinity`, a
 * map, a list) and from literals, for a fleet of workloads whose values differ. With plans on (unverified, as the
 * CLI runs) and off, each workload's outcome must be the same: the same output, or an error both ways.
 */
import t from 'tap';
import fc from 'fast-check';
import { createTemplateEngine } from '../../src/render/engine.ts';
import { createPlanner, type PlanSource } from '../../src/render/plans.ts';
import { createRenderRun, withRenderRun } from '../../src/render/run-state.ts';
import { SHARED_PLAN_RULES } from '../../src/render/plan-helpers.ts';
import { GO_PLAN_RULES } from '../../src/render/go-plan-rules.ts';
import { run } from '../../src/run.ts';
import { parseFragment } from '../../src/yaml/read/fragment-reader.ts';
import type { Json } from '../../src/model.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** A workload's values: a name, a digit string, a slot-safe odd text, a map and a list holding them. */
const values = fc.record({
  a: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,18}[a-z0-9]$/), fc.constantFrom('a', 'ab', 'reviews')),
  d: fc.integer({ min: 1, max: 999_999 }).map(String),
  o: fc.constantFrom('Infinity', 'abc', 'x1', 'NaN', 'e5', '0b2'),
});
type Values = { a: string; d: string; o: string };

/** An argument: a data path (by engine) or a literal (a Handlebars and a Go spelling). */
const ARGS: ReadonlyArray<{ hbs: string; go: string }> = [
  { hbs: 'pod.a', go: '(index .ObjectMeta.Annotations "x/a")' },
  { hbs: 'pod.d', go: '(index .ObjectMeta.Annotations "x/d")' },
  { hbs: 'pod.o', go: '(index .ObjectMeta.Annotations "x/o")' },
  { hbs: 'pod.m', go: '.ObjectMeta.Annotations' },
  { hbs: 'pod.l', go: '(list (index .ObjectMeta.Annotations "x/a") (index .ObjectMeta.Annotations "x/d"))' },
  { hbs: '"x"', go: '"x"' },
  { hbs: '"%5s"', go: '"%5s"' },
  { hbs: '"[%-9s|%.2s]"', go: '"[%-9s|%.2s]"' },
  { hbs: '"-"', go: '"-"' },
  { hbs: '3', go: '3' },
  { hbs: '"x/a"', go: '"x/a"' },
];
/** Formats and counts first: where a function computes with its first argument (`printf`, `indent`, `trunc`). */
const FIRST = [6, 7, 9, 10, 1, 2];
const call = fc.oneof(
  fc.record({
    arity: fc.integer({ min: 1, max: 3 }),
    args: fc.array(fc.nat(ARGS.length - 1), { minLength: 3, maxLength: 3 }),
  }),
  fc.record({
    arity: fc.integer({ min: 2, max: 3 }),
    args: fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom(0, 1, 2), fc.nat(ARGS.length - 1)),
  }),
);

/** What a user sees of an attempt: the value, or the error without the template's name (it differs by path). */
function outcome(f: () => unknown): unknown {
  try {
    return JSON.stringify(f());
  } catch (e) {
    return `error: ${String((e as Error).message).replace(/template "[^"]*"/g, 'template')}`;
  }
}

let n = 0;
t.test("Handlebars: every rule'd helper, placeholders in every position, plans on = off", async (t) => {
  const helpers = Object.keys(SHARED_PLAN_RULES);
  let cases = 0;
  let hits = 0;
  for (const helper of helpers)
    fc.assert(
      fc.property(fc.constant(helper), call, fc.array(values, { minLength: 3, maxLength: 4 }), (h, c, fleet) => {
        const args = c.args.slice(0, c.arity).map((i) => ARGS[i]?.hbs ?? '"x"');
        const template = `v: {{json (${h} ${args.join(' ')})}}\n`;
        const engine = createTemplateEngine({}, {}, {});
        const name = `rules-${n++}`;
        const source: PlanSource = {
          render: (data) => parseFragment(engine.render(name, template, data)) as Json,
          renderPlanned: (data) => parseFragment(engine.renderPlanned(name, template, data)) as Json,
        };
        const planner = createPlanner({ slotRoots: ['pod'], identityRoots: [] });
        const state = createRenderRun({ plans: { verify: false } });
        for (const v of fleet as Values[]) {
          const pod = { ...v, m: { 'x/a': v.a, 'x/d': v.d }, l: [v.a, v.d] };
          const before = state.plans.stats.hits;
          const planned = outcome(() => withRenderRun(state, () => planner.render(name, source, { pod })));
          hits += state.plans.stats.hits - before;
          const full = outcome(() => source.render({ pod }));
          cases++;
          if (planned !== full) {
            t.equal(planned, full, `${template.trim()} with ${JSON.stringify(v)}`);
            return false;
          }
        }
        return true;
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 15) },
    );
  t.ok(cases >= helpers.length * 15 * 3, `${cases} renders compared`);
  t.ok(hits >= cases / 4, `${hits} of them served by a plan`);
});

/** A Deployment fleet whose pod annotations carry each workload's values. */
function fleetYaml(fleet: readonly Values[]): string {
  return fleet
    .map(
      (v, i) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w${i}\nspec:\n  template:\n    metadata:\n      annotations:\n        x/a: "${v.a}"\n        x/d: "${v.d}"\n        x/o: "${v.o}"\n    spec:\n      containers:\n      - name: app\n        image: app:1\n`,
    )
    .join('---\n');
}

t.test("Go templates: every rule'd function, placeholders in every position, plans on = off", async (t) => {
  const functions = [...GO_PLAN_RULES.keys()];
  let cases = 0;
  const stats = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  for (const fn of functions)
    fc.assert(
      fc.property(fc.constant(fn), call, fc.array(values, { minLength: 3, maxLength: 4 }), (f, c, fleet) => {
        const args = c.args.slice(0, c.arity).map((i) => ARGS[i]?.go ?? '"x"');
        const template = [
          'metadata:',
          '  annotations:',
          `    example.com/out: {{ printf "%v" (${f} ${args.join(' ')}) | quote }}`,
          'spec:',
          '  containers:',
          '  - name: istio-proxy',
          '    image: proxy:1',
        ].join('\n');
        const functionConfig = JSON.stringify({
          apiVersion: 'meshinject.dev/v1alpha1',
          kind: 'SidecarInjection',
          spec: {
            policy: 'enabled',
            mesh: 'istio',
            istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: template } } },
          },
        });
        const input = fleetYaml(fleet as Values[]);
        const g = globalThis as Record<symbol, unknown>;
        const preload = g[VERIFY_GLOBAL];
        try {
          g[VERIFY_GLOBAL] = false;
          const on = run(input, {
            functionConfig,
            plans: { enabled: true, verify: false, recordOnRepeat: false, stats },
          });
          const off = run(input, { functionConfig, plans: { enabled: false, verify: false } });
          cases++;
          const seen = (r: typeof on) => JSON.stringify([r.exitCode, r.stdout, r.stderr]);
          if (seen(on) !== seen(off)) {
            t.equal(seen(on), seen(off), `${f} ${args.join(' ')} with ${JSON.stringify(fleet)}`);
            return false;
          }
        } finally {
          g[VERIFY_GLOBAL] = preload;
        }
        return true;
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 12) },
    );
  t.ok(cases >= functions.length * 12, `${cases} fleets compared`);
  t.ok(stats.hits >= stats.lookups / 10, `${stats.hits} of ${stats.lookups} renders served by a plan`);
});
