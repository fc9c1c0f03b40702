/**
 * Linear time on hostile text (issue 19, item 5): every regular expression applied to input (plain scalar
 * resolution in YAML 1.1 and 1.2, the quoting rule, selectors, label keys and values, quantities, durations,
 * list-indent detection, names) runs in linear time. Each attack string of 10^5 to 10^6 characters is timed
 * against a baseline of the same size in the same run: the same function on benign text that it reads to
 * the end, and never less than a plain linear pass over the attack itself. The machine is shared and noisy,
 * so the bound is a ratio (20x), not a time; a quadratic pattern is thousands of times slower at this size
 * (`1_1...1x` of 100 000 characters took 11 s in the YAML 1.1 resolver before the fix).
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOAT_1_1, FLOAT_EXP_1_1, needsQuotes, resolvePlain } from '../../src/yaml/scalars.ts';
import { seqIndentOf } from '../../src/edit/rewrite.ts';
import { checkLabelKey, checkLabelValue, parseSelectorString } from '../../src/selection/label-selector.ts';
import { canonicalQuantity } from '../../src/drivers/istio/quantity.ts';
import { parseGoDuration, readQuantity } from '../../src/drivers/linkerd/overrides.ts';
import { snakeCase } from '../../src/drivers/linkerd/containers.ts';
import { configMapVersion } from '../../src/drivers/istio/configmap-source.ts';
import { goTrimSpace } from '../../src/render/gotemplate/sprig.ts';
import { escapeLine } from '../../src/results/escape-line.ts';
import { BIN, workspace } from '../helpers/e2e.ts';

const RATIO = 20;
const N = 200_000;

/** Milliseconds of the fastest of `runs` calls. */
function timeOf(f: () => unknown, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/**
 * A linear pass over `s` that calls a function per character: the floor of every baseline, as costly as the
 * dearest linear work here (escaping, replacing with a callback), so that the ratio measures growth only.
 */
function linearPass(s: string): unknown {
  return s.replace(/[\s\S]/g, (c) => c).length;
}

/** `s` repeated to `n` characters. */
const rep = (s: string, n = N): string => s.repeat(Math.ceil(n / s.length)).slice(0, n);

interface Case {
  name: string;
  run: (s: string) => unknown;
  benign: string;
  attacks: string[];
}

const NUMBERISH = [
  `${rep('1_', N)}x`,
  `${rep('1')}x`,
  `${rep('0')}x`,
  `.${rep('1')}x`,
  `${rep('1', N / 2)}.${rep('1', N / 2)}x`,
  `${rep('_1')}x`,
  `${rep('1:')}x`,
  `${rep('1:1')}.x`,
  `1e${rep('1')}x`,
  `${rep('1.')}x`,
  `${rep('1_', N)}.x`,
  `+${rep('0_')}e`,
  `2001-01-01 1:11:11.${rep('1')}x`,
];

const CASES: Case[] = [
  {
    name: 'YAML 1.1 plain scalar resolution',
    run: (s) => resolvePlain(s, '1.1'),
    benign: rep('1'),
    attacks: NUMBERISH,
  },
  {
    name: 'YAML 1.2 plain scalar resolution',
    run: (s) => resolvePlain(s, '1.2'),
    benign: rep('1'),
    attacks: NUMBERISH,
  },
  { name: 'the quoting rule (needsQuotes)', run: needsQuotes, benign: rep('1'), attacks: NUMBERISH },
  {
    name: 'YAML 1.1 float patterns',
    run: (s) => [FLOAT_1_1.test(s), FLOAT_EXP_1_1.test(s)],
    benign: `1.${rep('1')}`,
    attacks: NUMBERISH,
  },
  {
    name: 'label selector strings',
    run: parseSelectorString,
    benign: `app=${rep('a')}`,
    attacks: [
      rep('a'),
      `${rep('a-')}!`,
      `${rep('a.')}!`,
      `${rep('a,')}`,
      `a in (${rep('x,')}`,
      `${rep(' ')}a`,
      `a${rep(' ')}in`,
      rep('!'),
      rep('a in ('),
      rep('a='),
    ],
  },
  {
    name: 'label keys and values',
    run: (s) => [checkLabelKey(s), checkLabelValue(s)],
    benign: rep('a'),
    attacks: [`${rep('a')}!`, `${rep('a-')}!`, `${rep('a.')}!`, `${rep('a/')}!`, `${rep('a_')}-`],
  },
  {
    name: 'Kubernetes quantities (Istio)',
    run: canonicalQuantity,
    benign: rep('1'),
    attacks: [
      `${rep('1')}x`,
      `1.${rep('1')}x`,
      `1e${rep('1')}x`,
      `${rep('1')}.1.`,
      `${rep(' ')}1 x`,
      rep('1'),
      `${rep('1')}Ki`,
      `0.${rep('1')}`,
      '1e2147483647',
      '1e-2147483647',
      `${rep('9')}e-99`,
    ],
  },
  {
    name: 'quantities and durations (Linkerd)',
    run: (s) => [readQuantity(s), parseGoDuration(s)],
    benign: rep('1'),
    attacks: [`${rep('1')}x`, `1.${rep('1')}x`, `${rep('1m')}x`, `${rep('1.')}s`, `${rep('1ms')}!`],
  },
  {
    name: 'list indent of a resource text',
    run: (s) => seqIndentOf(s, undefined),
    benign: rep('a: b\n'),
    attacks: [`${rep(':#')}\n`, rep('a:\n'), `a${rep(':')}\n`, rep('a: #:\n'), `a:\n${rep('\n')}x`],
  },
  {
    name: 'names (snake case, chart versions)',
    run: (s) => [snakeCase(s), configMapVersion({ 'helm.sh/chart': s })],
    benign: rep('ab'),
    attacks: [rep('A'), rep('aA'), `${rep('-1.1.1')} x`, rep('-v1.1.'), `${rep('-1.1.1')}\n`],
  },
  {
    name: 'Go TrimSpace (sprig trim)',
    run: goTrimSpace,
    benign: rep('a'),
    attacks: [`${rep(' ')}x `, `${rep(' x')} `, `${rep('\t\n')}x\u0085`],
  },
  {
    name: 'output line escaping',
    run: escapeLine,
    benign: rep('a'),
    attacks: [rep('\n'), rep('\u001b['), rep('\u202e\u2028')],
  },
];

for (const c of CASES) {
  t.test(`linear time: ${c.name}`, async (t) => {
    const base = Math.max(
      timeOf(() => c.run(c.benign)),
      timeOf(() => linearPass(c.benign)),
    );
    for (const attack of c.attacks) {
      const took = timeOf(() => c.run(attack), 1);
      t.ok(
        took <= RATIO * base,
        `${escapeLine(JSON.stringify(attack.slice(0, 16)))}... (${attack.length} chars): ${took.toFixed(1)} ms, baseline ${base.toFixed(1)} ms (at most ${RATIO}x)`,
      );
    }
  });
}

t.test('property: random repetitions of number and selector characters stay linear', async (t) => {
  const base = Math.max(
    timeOf(() => resolvePlain(rep('1'), '1.1')),
    timeOf(() => linearPass(rep('1'))),
  );
  const alphabet = fc.constantFrom('1', '0', '_', '.', ':', 'e', '+', '-', 'x', ' ', '#', '=', ',', 'a', 'A', '(');
  fc.assert(
    fc.property(
      fc.array(alphabet, { minLength: 1, maxLength: 4 }),
      fc.constantFrom('', 'x', '.', '_', ' '),
      (unit, tail) => {
        const s = rep(unit.join(''), N) + tail;
        const took = timeOf(
          () => [
            resolvePlain(s, '1.1'),
            resolvePlain(s, '1.2'),
            needsQuotes(s),
            parseSelectorString(s),
            canonicalQuantity(s),
            seqIndentOf(s, undefined),
          ],
          1,
        );
        // Six functions against one: a ratio of six times RATIO.
        return took <= 6 * RATIO * base;
      },
    ),
    { numRuns: 40 },
  );
  t.pass('no repetition took more than the bound');
});

t.test(
  'the CLI on a manifest of hostile scalars (10^6 characters) against a benign one of the same size',
  async (t) => {
    const n = 1_000_000;
    const manifest = (v: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    big: ${v}
spec:
  template:
    metadata:
      annotations:
        x: ${v}
    spec:
      containers:
      - name: app
        image: nginx
        args: [${v}, ${v}]
`;
    const dir = workspace(
      t,
      { 'base.yaml': manifest(rep('a', n)), 'attack.yaml': manifest(`${rep('1_', n)}x`) },
      'linear',
    );
    writeFileSync(join(dir, 'attack2.yaml'), manifest(`${rep('1', n / 2)}.${rep('1', n / 2)}x`));
    const cli = (file: string, timeout?: number) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [BIN, join(dir, file)], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        ...(timeout ? { timeout } : {}),
      });
      return { ms: performance.now() - t0, status: r.status, signal: r.signal };
    };
    const base = Math.min(cli('base.yaml').ms, cli('base.yaml').ms);
    for (const f of ['attack.yaml', 'attack2.yaml']) {
      const r = cli(f, Math.round(RATIO * base));
      t.equal(
        r.signal,
        null,
        `${f}: done within ${RATIO}x the benign run (${base.toFixed(0)} ms; took ${r.ms.toFixed(0)} ms)`,
      );
      t.equal(r.status, 0, `${f}: injected`);
    }
  },
);
