/**
 * Sidecar plans key literal data by its JSON text (src/render/plan-keys.ts `literalKey`): a top-level field that
 * is neither a slot root nor an identity root (Istio's `ProxyConfig`), and a steered subtree of a slot root. The
 * text of a deep-frozen object is worked out once; these tests generate the routes where a memo could serve a
 * stale key (a frozen object with a part that is not, a part changed between workloads, an object frozen after
 * it was keyed, a fresh object with the same text) and hold every planned render to the full render of the
 * same data, with verification off so a stale plan would show as a wrong output rather than an error.
 */
import t from 'tap';
import fc from 'fast-check';
import { createTemplateEngine } from '../../src/render/engine.ts';
import { createPlanner, type PlanSource } from '../../src/render/plans.ts';
import { createRenderRun, withRenderRun } from '../../src/render/run-state.ts';
import { parseFragment } from '../../src/yaml/read/fragment-reader.ts';
import { isSlotSafe, ANY_TOKEN } from '../../src/render/plan-values.ts';
import { plainByFirstLetter } from '../../src/render/plain-start.ts';
import { needsQuotes } from '../../src/yaml/scalars.ts';
import type { Json } from '../../src/model.ts';

const TEMPLATE =
  'name: {{pod.name}}\nb: "{{cfg.a.b}}"\nfirst: "{{cfg.list.[0]}}"\ntags: [{{#each pod.tags}}"{{this}}",{{/each}}]\n';

let n = 0;

/** A planner over TEMPLATE in one run, verification off; `render` gives the planned and the full output. */
function setup() {
  const engine = createTemplateEngine({}, {}, {});
  const name = `literal-keys-${n++}`;
  const source: PlanSource = {
    render: (data) => parseFragment(engine.render(name, TEMPLATE, data)) as Json,
    renderPlanned: (data) => parseFragment(engine.renderPlanned(name, TEMPLATE, data)) as Json,
  };
  const planner = createPlanner({ slotRoots: ['pod'], identityRoots: [] });
  const run = createRenderRun({ plans: { verify: false } });
  return {
    stats: run.plans.stats,
    render(data: Record<string, unknown>) {
      return {
        got: withRenderRun(run, () => planner.render(name, source, data)),
        truth: source.render(data),
      };
    },
  };
}

interface Cfg {
  a: { b: string };
  list: string[];
}

type Step =
  | { op: 'set-b' | 'set-first' | 'set-tag'; value: string }
  | { op: 'freeze-root' | 'freeze-a' | 'freeze-list' | 'freeze-tags' | 'fresh-copy' | 'fresh-tags' };

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'x-1', '8080', 'yes');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom('set-b' as const, 'set-first' as const, 'set-tag' as const), value: word }),
  fc.record({
    op: fc.constantFrom(
      'freeze-root' as const,
      'freeze-a' as const,
      'freeze-list' as const,
      'freeze-tags' as const,
      'fresh-copy' as const,
      'fresh-tags' as const,
    ),
  }),
);

t.test(
  'a literal root or steered subtree, frozen in part or whole and changed where it can be: plans match full renders',
  async (t) => {
    let planned = 0;
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 24 }),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        (steps, names) => {
          const p = setup();
          let cfg: Cfg = { a: { b: 'alpha' }, list: ['beta'] };
          let tags: string[] = ['t1'];
          let i = 0;
          for (const s of steps) {
            // A change is made only where the object allows it: a frozen part stays as it is.
            if (s.op === 'set-b' && !Object.isFrozen(cfg.a)) cfg.a.b = s.value;
            if (s.op === 'set-first' && !Object.isFrozen(cfg.list)) cfg.list[0] = s.value;
            if (s.op === 'set-tag' && !Object.isFrozen(tags)) tags[0] = s.value;
            if (s.op === 'freeze-root') Object.freeze(cfg);
            if (s.op === 'freeze-a') Object.freeze(cfg.a);
            if (s.op === 'freeze-list') Object.freeze(cfg.list);
            if (s.op === 'freeze-tags') Object.freeze(tags);
            if (s.op === 'fresh-copy') cfg = { a: { b: cfg.a.b }, list: [...cfg.list] };
            if (s.op === 'fresh-tags') tags = [...tags];
            const r = p.render({ pod: { name: names[i++ % names.length], tags }, cfg });
            if (JSON.stringify(r.got) !== JSON.stringify(r.truth)) {
              throw new Error(`planned ${JSON.stringify(r.got)} but rendered ${JSON.stringify(r.truth)}`);
            }
          }
          planned += p.stats.hits;
        },
      ),
      { numRuns: 300 },
    );
    t.ok(planned > 100, `plans served workloads (${planned} hits): the routes ran through the plans`);
  },
);

t.test('a frozen root changed in its unfrozen part is served the new value', async (t) => {
  const p = setup();
  const cfg: Cfg = Object.freeze({ a: { b: 'alpha' }, list: ['beta'] });
  const tags = ['t1'];
  t.same(p.render({ pod: { name: 'web', tags }, cfg }).got, { name: 'web', b: 'alpha', first: 'beta', tags: ['t1'] });
  p.render({ pod: { name: 'api', tags }, cfg });
  cfg.a.b = 'gamma';
  t.same(p.render({ pod: { name: 'db', tags }, cfg }).got, { name: 'db', b: 'gamma', first: 'beta', tags: ['t1'] });
  Object.freeze(cfg.a);
  Object.freeze(cfg.list);
  t.same(p.render({ pod: { name: 'db', tags }, cfg }).got, { name: 'db', b: 'gamma', first: 'beta', tags: ['t1'] });
  t.same(p.render({ pod: { name: 'mq', tags }, cfg }).got, { name: 'mq', b: 'gamma', first: 'beta', tags: ['t1'] });
  t.ok(p.stats.hits >= 2, 'the deep-frozen root is served by a plan');
});

/** `isSlotSafe` as defined before its shortcut: slot-safe characters, no token, and a plain string for every reader. */
const SAFE = /^[A-Za-z0-9](?:[A-Za-z0-9._:/@-]{0,251}[A-Za-z0-9])?$/;
function slotSafeByDefinition(s: string): boolean {
  return SAFE.test(s) && !ANY_TOKEN.test(s) && !needsQuotes(s);
}

t.test('isSlotSafe: its first-letter shortcut agrees with the definition on every string', async (t) => {
  const chars = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/@-+~ '];
  const text = fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 12 }).map((a) => a.join(''));
  const words = fc.constantFrom(
    ...['y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF'],
    ...['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'null', 'Null', 'NULL', 'e5', 'E12', 'e-3', 'E+7'],
    ...['1e3', '0x1F', '0o17', '2026-11-28', '1:20', 'web', 'istio-proxy', 'mi7ph1x', 'registry.io/a:b'],
  );
  fc.assert(
    fc.property(fc.oneof(text, words, fc.string()), (s) => {
      if (isSlotSafe(s) !== slotSafeByDefinition(s)) throw new Error(`isSlotSafe(${JSON.stringify(s)})`);
    }),
    { numRuns: 5000 },
  );
  for (const s of ['e5', 'E12', 'yes', 'on', 'No', 'null', 'true']) t.notOk(isSlotSafe(s), s);
  for (const s of ['web', 'istio-proxy', 'a1', 'Zeta', 'registry.io/a:b']) t.ok(isSlotSafe(s), s);
});

t.test(
  'a text whose first letter passes the shortcut reads as a string in every YAML reader (the fill skips needsQuotes)',
  async (t) => {
    const letter = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0.-+~'.split(''));
    const rest = fc.oneof(
      fc.string(),
      fc.constantFrom('es', 'o', 'rue', 'alse', 'n', 'ff', 'ull', '5', '12', '-3', '+7', 'ES', 'RUE', 'ULL', 'x1F'),
    );
    let passed = 0;
    fc.assert(
      fc.property(letter, rest, (first, more) => {
        const s = first + more;
        if (!plainByFirstLetter(s.charCodeAt(0))) return;
        passed++;
        if (needsQuotes(s)) throw new Error(`${JSON.stringify(s)} needs quotes`);
      }),
      { numRuns: 5000 },
    );
    t.ok(passed > 1000, `${passed} texts took the shortcut`);
    for (const s of ['e5', 'E12', 'yes', 'no', 'true', 'false', 'on', 'off', 'null', '', '1', '.5'])
      t.notOk(plainByFirstLetter(s.charCodeAt(0)), JSON.stringify(s));
  },
);

t.test(
  'a plan fills maps with odd keys (__proto__, integer-like, filled) as the full render writes them',
  async (t) => {
    const engine = createTemplateEngine({}, {}, {});
    const template =
      'm:\n  zeta: {{pod.name}}\n  "__proto__": {{pod.name}}\n  "10": fixed\n  "2": {{pod.name}}\n  alpha: fixed\n  {{pod.name}}-key: x\n';
    const source: PlanSource = {
      render: (data) => parseFragment(engine.render('odd-keys', template, data)) as Json,
      renderPlanned: (data) => parseFragment(engine.renderPlanned('odd-keys', template, data)) as Json,
    };
    const planner = createPlanner({ slotRoots: ['pod'], identityRoots: [] });
    const run = createRenderRun({ plans: { verify: false } });
    for (const name of ['web', 'api', 'db', 'alpha', 'zeta']) {
      const got = withRenderRun(run, () => planner.render('odd-keys', source, { pod: { name } }));
      const truth = source.render({ pod: { name } });
      t.equal(JSON.stringify(got), JSON.stringify(truth), name);
      t.same(Object.keys((got as { m: object }).m), Object.keys((truth as { m: object }).m), `${name}: keys in order`);
    }
    t.ok(run.plans.stats.hits >= 2, 'served by plans');
  },
);
