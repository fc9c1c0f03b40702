/**
 * Sidecar plans (src/render/plans.ts): a template rendered once per shape gives, for every workload, what a
 * full render gives. Each case renders a sequence of data through a planner and compares with full renders;
 * the counters say whether a plan served it (the point of plans) or a full render did (where a plan cannot
 * be proven faithful).
 */
import t from 'tap';
import fc from 'fast-check';
import { createTemplateEngine } from '../../src/render/engine.ts';
import { createPlanner, type PlanSource, type PlanStats, type RunPlanSettings } from '../../src/render/plans.ts';
import { createRenderRun, withRenderRun } from '../../src/render/run-state.ts';
import { run } from '../../src/run.ts';
import type { PlanRule } from '../../src/render/plan-helpers.ts';
import { parseFragment } from '../../src/yaml/read/fragment-reader.ts';
import type { Json } from '../../src/model.ts';

let n = 0;

/** A planner over one Handlebars template; data has slot root `pod`. */
function setup(
  template: string,
  helpers: Record<string, (...a: unknown[]) => unknown> = {},
  rules: Record<string, PlanRule> = {},
  plans: RunPlanSettings = {},
) {
  const engine = createTemplateEngine(helpers, {}, rules);
  const name = `plan-test-${n++}`;
  const source: PlanSource = {
    render: (data) => parseFragment(engine.render(name, template, data)) as Json,
    renderPlanned: (data) => parseFragment(engine.renderPlanned(name, template, data)) as Json,
  };
  const planner = createPlanner({ slotRoots: ['pod'], identityRoots: [] });
  // One run for the sequence: the planner's plans live as long as it.
  const state = createRenderRun({ plans });
  const stats = state.plans.stats;
  const render = (pod: Record<string, unknown>) => {
    const before = { ...stats };
    const got = withRenderRun(state, () => planner.render(name, source, { pod }));
    return {
      got,
      // A full render of the same data, on demand (it may throw where the planned one gave an output).
      get truth() {
        return source.render({ pod });
      },
      hit: stats.hits > before.hits,
      full: stats.full > before.full,
    };
  };
  return Object.assign(render, { stats });
}

const zero = (): PlanStats => ({ lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 });

t.test('names copied into the output: the second workload is served by the plan', async (t) => {
  const render = setup(
    'metadata:\n  labels:\n    canonical: {{quote (trimAll "-_." (trunc 63 (coalesce pod.labels.app pod.name)))}}\n  name: {{pod.name}}-proxy\nargs: [--id, "{{pod.name}}.{{pod.ns}}"]\n',
  );
  const a = render({ name: 'reviews', ns: 'shop', labels: { app: 'reviews-v1' } });
  t.same(a.got, a.truth);
  const b = render({ name: 'ratings', ns: 'books', labels: { app: 'ratings' } });
  t.same(b.got, {
    metadata: { labels: { canonical: 'ratings' }, name: 'ratings-proxy' },
    args: ['--id', 'ratings.books'],
  });
  t.same(b.got, b.truth);
  t.ok(b.hit, 'served by the plan of the first');
});

t.test('a value that steers control flow joins the key', async (t) => {
  const render = setup('{{#if (eq pod.name "web")}}front: {{pod.name}}{{else}}back: {{pod.name}}{{/if}}\n');
  for (const name of ['web', 'db', 'web', 'cache', 'db']) {
    const r = render({ name });
    t.same(r.got, r.truth, name);
  }
  t.same(render({ name: 'web' }).got, { front: 'web' });
  t.same(render({ name: 'api' }).got, { back: 'api' });
});

t.test('a filled value that a YAML reader would read as a number or boolean is rendered in full', async (t) => {
  const render = setup('mode: 0x{{pod.name}}\nflag: {{pod.name}}n\n');
  render({ name: 'zz' });
  const r = render({ name: '1F' });
  t.same(r.got, { mode: 31, flag: '1Fn' }, '0x1F reads as 31');
  t.ok(r.full, 'not from the plan');
});

t.test('trunc keeps a plan only for values within its length', async (t) => {
  const render = setup('short: {{trunc 5 pod.name}}\n');
  t.same(render({ name: 'abc' }).got, { short: 'abc' });
  const long = render({ name: 'abcdefgh' });
  t.same(long.got, { short: 'abcde' });
  t.ok(long.full);
  t.ok(render({ name: 'xyz' }).hit);
});

t.test('number slots: a plain port stays a number, a quoted one a string', async (t) => {
  const render = setup('containerPort: {{pod.port}}\nvalue: "{{pod.port}}"\njson: \'{"port": {{pod.port}} }\'\n');
  render({ port: 8080 });
  const r = render({ port: 9443 });
  t.same(r.got, { containerPort: 9443, value: '9443', json: '{"port": 9443 }' });
  t.ok(r.hit);
  const d = setup('uid: {{printf "%d" pod.port}}\n');
  d({ port: 1000 });
  t.same(d({ port: 1337 }).got, { uid: 1337 }, 'a number given to a helper joins the key');
});

t.test(
  'digit strings (an annotation\'s "15020"): a plan serves them, quoted they stay strings, plain they read as integers',
  async (t) => {
    const render = setup(
      'quoted: "{{pod.ports}}"\nplain: {{pod.ports}}\nargs: ["-o", {{quote pod.ports}}]\njoined: "{{pod.ports}},15021"\ntext: p{{pod.ports}}\n',
    );
    render({ ports: '8080' });
    const r = render({ ports: '15020' });
    t.same(r.got, { quoted: '15020', plain: 15020, args: ['-o', '15020'], joined: '15020,15021', text: 'p15020' });
    t.same(r.got, r.truth);
    t.ok(r.hit, 'served by the plan of the first');
    // A value outside the digit-string slots (a sign, a leading zero, seven digits) is part of the key instead.
    for (const ports of ['007', '+15', '1234567', '0']) {
      const o = render({ ports });
      t.same(o.got, o.truth, ports);
      t.notOk(o.hit, `${ports}: not from a plan`);
    }
    // Compared with a constant, a digit string is assumed to differ from it, as a name is.
    const eq = setup('v: {{#if (eq pod.ports "15020")}}admin{{else}}app-{{pod.ports}}{{/if}}\n');
    for (const ports of ['80', '81', '15020', '82']) {
      const o = eq({ ports });
      t.same(o.got, o.truth, `eq with ${ports}`);
      if (ports === '82') t.ok(o.hit, 'served by the plan that assumed 15020 differs');
    }
    // Where the plain scalar around the token would read otherwise (`1:20` sexagesimal in YAML 1.1, `15.5` a
    // float, `-15` a negative integer), the plan is refused or not kept, and the render is in full.
    for (const template of [
      'v: {{pod.ports}}:20\n',
      'v: {{pod.ports}}.5\n',
      'v: -{{pod.ports}}\n',
      'v: {{pod.ports}}0\n',
    ]) {
      const other = setup(template);
      for (const ports of ['12', '34', '56']) {
        const o = other({ ports });
        t.same(o.got, o.truth, `${template.trim()} with ${ports}`);
      }
    }
  },
);

t.test(
  'a filled map key that meets a literal key of the same map gives what a full render gives (either order)',
  async (t) => {
    for (const template of ['labels:\n  {{pod.name}}: x\n  web: y\n', 'labels:\n  web: y\n  {{pod.name}}: x\n']) {
      const render = setup(template);
      render({ name: 'api' });
      t.ok(render({ name: 'db' }).hit, `${template.trim()}: a plan serves other names`);
      let planned: unknown;
      let truth: unknown;
      try {
        planned = render({ name: 'web' }).got;
      } catch (e) {
        planned = `error: ${(e as Error).message}`;
      }
      try {
        truth = parseFragment(
          createTemplateEngine({}, {}, {}).render(`truth-${n++}`, template, { pod: { name: 'web' } }),
        );
      } catch (e) {
        truth = `error: ${(e as Error).message}`;
      }
      t.same(planned, truth, `${template.trim()} with the name web: as a full render`);
    }
  },
);

t.test('indent by a count from the data: the count joins the key, the text is still filled', async (t) => {
  const template = 'v: "[{{indentBlock pod.n pod.name}}]"\nw: "[{{indent pod.n pod.name}}]"\n';
  // Unverified, as the CLI runs: a planned result is not checked against a render here.
  const render = setup(template, {}, {}, { verify: false });
  // Errors name the template: the planner's and the reference's names differ.
  const unnamed = (x: unknown) => (typeof x === 'string' ? x.replace(/template "[^"]*"/, 'template') : x);
  const outcome = (f: () => unknown) => {
    try {
      return f();
    } catch (e) {
      return unnamed(`error: ${(e as Error).message}`);
    }
  };
  const reference = createTemplateEngine({}, {}, {});
  let hits = 0;
  for (const [n, name] of [
    ['2', 'web'],
    ['4', 'api'],
    ['4', 'db'],
    ['4', 'shop'],
    ['Infinity', 'cart'],
    ['abc', 'cart'],
  ] as const) {
    const got = outcome(() => {
      const r = render({ n, name });
      if (r.hit) hits++;
      return r.got;
    });
    const truth = outcome(() => parseFragment(reference.render(`truth-${n}-${name}`, template, { pod: { n, name } })));
    t.same(got, truth, `indent ${n} of ${name}`);
  }
  t.ok(hits >= 1, 'the count 4 is served by its plan');
});

t.test('a helper declared as copying text that does more is caught by the two-token check', async (t) => {
  const render = setup(
    'name: {{upper pod.name}}\n',
    { upper: (s: unknown) => String(s).toUpperCase() },
    { upper: 'copy' },
  );
  render({ name: 'web' });
  const r = render({ name: 'api' });
  t.same(r.got, { name: 'API' });
  t.notOk(r.hit, 'no plan was kept');
});

t.test('placeholders cannot be inspected: lookups, keys and iteration by a name fall back', async (t) => {
  const render = setup('{{#each pod.name}}x: 1{{/each}}\nv: {{lookup pod.map pod.name}}\nn: {{len pod.name}}\n');
  for (const name of ['a1', 'b2']) {
    const r = render({ name, map: { a1: 'one', b2: 'two' } });
    t.same(r.got, r.truth, name);
  }
});

t.test(
  'a name compared with a constant: the plan assumes it differs, and a workload with that name is rendered in full',
  async (t) => {
    const render = setup('{{#unless (eq pod.name "istio-proxy")}}app: {{pod.name}}{{/unless}}\n');
    render({ name: 'web' });
    const api = render({ name: 'api' });
    t.same(api.got, { app: 'api' });
    t.ok(api.hit);
    const proxy = render({ name: 'istio-proxy' });
    t.same(proxy.got, null, 'the unless branch is skipped, as a full render skips it');
    t.ok(proxy.full);
  },
);

const GO_CONFIG = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: go}
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
                canonical: {{ index .ObjectMeta.Labels "app" | default .DeploymentMeta.Name | trunc 63 | trimSuffix "-" | quote }}
            spec:
              containers:
              {{- $names := list }}
              {{- range .Spec.Containers }}{{ if ne .Name "istio-proxy" }}{{ $names = append $names .Name }}{{ end }}{{ end }}
              - name: sidecar
                image: registry.example/sidecar
                env:
                - name: APPS
                  value: {{ join "," $names | quote }}
                - name: PORTS
                  value: '[{{ range .Spec.Containers }}{{ range .Ports }}{{ structToJSON . }}{{ end }}{{ end }}]'
`;

const goWorkload = (name: string, port: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: shop}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}, annotations: {inject.istio.io/templates: named}}
    spec:
      containers:
      - name: ${name}-main
        image: registry.example/${name}:1.0
        ports: [{name: http, containerPort: ${port}}]
`;

t.test(
  'Go templates (version-exact Istio) are planned too: the same output as full renders, most served by a plan',
  async (t) => {
    const input = ['web', 'api', 'cart', 'ads', 'mail'].map((n, i) => goWorkload(n, 8080 + i)).join('---\n');
    const full = run(input, { functionConfig: GO_CONFIG, plans: { enabled: false } });
    const before = zero();
    const after = zero();
    const planned = run(input, { functionConfig: GO_CONFIG, plans: { stats: after } });
    t.equal(full.exitCode, 0, full.stderr);
    t.equal(planned.stdout, full.stdout, 'byte for byte');
    t.match(planned.stdout, /name: APPS\n +value: cart-main\n/);
    t.match(planned.stdout, /value: '\[\{"name":"http","containerPort":8082\}\]'/);
    t.ok(after.hits - before.hits >= 3, `plans served ${after.hits - before.hits} of 5`);
  },
);

t.test(
  'a run of shapes that never repeat stops building keys (sparse lookups), and a shape that starts repeating is planned again',
  async (t) => {
    // `mode` steers control flow (`contains` reads it), so each distinct mode is a key of its own: with every mode
    // different, no lookup finds a plan, and after a window the planner looks up one workload in eight.
    const render = setup(
      '{{#if (contains "x" pod.mode)}}x: {{pod.name}}{{else}}other: {{pod.name}}{{/if}}\n',
      {},
      {},
      { recordOnRepeat: true },
    );
    const before = zero();
    {
      for (let i = 0; i < 200; i++) {
        const r = render({ name: `w${i}`, mode: `m${i}` });
        if (JSON.stringify(r.got) !== JSON.stringify(r.truth)) t.fail(`distinct ${i}`);
      }
      const mid = { ...render.stats };
      t.equal(mid.hits - before.hits, 0, 'no distinct shape is served by a plan');
      t.ok(
        mid.recorded - before.recorded <= 1,
        `at most the first is recorded (before the key knew that mode steers): ${mid.recorded - before.recorded}`,
      );
      // A window of 64 lookups by key, then one in eight: 64 + 136 / 8 = 81.
      t.ok(
        mid.keyed - before.keyed <= 82,
        `of 200 workloads of shapes of their own, ${mid.keyed - before.keyed} were looked up by key`,
      );
      for (let i = 0; i < 200; i++) {
        const r = render({ name: `s${i}`, mode: 'same' });
        if (JSON.stringify(r.got) !== JSON.stringify(r.truth)) t.fail(`repeated ${i}`);
      }
    }
    const after = render.stats;
    // Sparse lookups see the repeating shape on their second and third lookups of it (within 3 × 8 workloads),
    // then look up every workload again once a window of eight lookups has found two plans (at most 64 more).
    t.ok(
      after.hits - before.hits >= 200 - 3 * 8 - 64,
      `the repeating shape is served by its plan again: ${after.hits - before.hits} of 200`,
    );
    t.ok(
      after.recorded - before.recorded <= 2,
      `its plan is recorded once: ${after.recorded - before.recorded} in all`,
    );
  },
);

t.test(
  'token-like text of the template itself is rendered as written, in or beyond the slots (property)',
  async (t) => {
    // A plan fills the tokens of its output: text the template writes that looks like one (of either family, a
    // string or a number token, naming a slot the data has or none) is not a slot, so no plan may fill it.
    const literal = fc
      .tuple(
        fc.constantFrom(0, 1),
        fc.boolean(),
        fc.oneof(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 3, max: 99_999 })),
      )
      .map(([family, numeric, i]) =>
        numeric ? `${8 + family}${String(i).padStart(5, '0')}${family ? '82646' : '91737'}` : `mi${7 + family}ph${i}x`,
      );
    let renders = 0;
    fc.assert(
      fc.property(literal, fc.constantFrom('plain', 'quoted', 'joined'), (text, form) => {
        const lit = form === 'plain' ? text : form === 'quoted' ? `"${text}"` : `"{{pod.name}}-${text}"`;
        const render = setup(`lit: ${lit}\nname: {{pod.name}}\nport: {{pod.port}}\n`);
        for (const [name, port] of [
          ['web', 80],
          ['api', 8080],
          ['db', 5432],
        ] as const) {
          const r = render({ name, port });
          if (JSON.stringify(r.got) !== JSON.stringify(r.truth))
            throw new Error(`${lit} for ${name}: ${JSON.stringify(r.got)}`);
          renders++;
        }
      }),
      { numRuns: 40 },
    );
    t.equal(renders, 120, 'every generated template rendered for three workloads');
  },
);
