/**
 * Issue #36: the property tests of the security classes run in CI with the fixed seed (every test process,
 * test/setup/property-seed.mjs) and here again with a rotating one: the UTC date as YYYYMMDD, so each day's
 * runs try other generated members of each class, and a failure names the seed that replays it
 * (`PROPERTY_SEED=<seed> npx tap <file>`). The fixed seed keeps a red run meaning "a change broke something";
 * the rotating one keeps the generators looking.
 */
import t from 'tap';
import { nestedTapReport, runNestedTap } from '../helpers/nested-tap.ts';

/** The seed of `day`: its UTC date as the integer YYYYMMDD (20261128 on 28 November 2026). */
function rotatingSeed(day: Date): number {
  return day.getUTCFullYear() * 10000 + (day.getUTCMonth() + 1) * 100 + day.getUTCDate();
}

/** The property tests of each class of issue #36 (and the output escaping of §5), quick enough to run twice. */
const CLASS_FILES = [
  'test/security/property.test.ts', // budgets, hostile inputs through every driver and engine
  'test/security/prototype-keys.test.ts', // §2 user keys never reach a prototype
  'test/security/quoted-values.test.ts', // §5 values quoted in messages are cut
  'test/config/platform-word.test.ts', // §3 a tenant only narrows the platform's settings
  'test/render/template-shared-values.test.ts', // §1 a value that shares itself
  'test/render/template-recursion.test.ts', // §5 recursion errors name the place
  'test/cli/output-aliasing.test.ts', // §4 two outputs, one file
  'test/yaml/output-escaping.test.ts', // §5 one escaper for every YAML written
];

t.test('rotatingSeed: the UTC date as YYYYMMDD', async (t) => {
  t.equal(rotatingSeed(new Date(Date.UTC(2026, 10, 28, 23, 59))), 20261128);
  t.equal(rotatingSeed(new Date(Date.UTC(2027, 0, 1))), 20270101);
});

t.test("the security classes' property tests pass with today's rotating seed", async (t) => {
  const seed = process.env.PROPERTY_ROTATING_SEED ?? String(rotatingSeed(new Date()));
  t.comment(`rotating seed ${seed}; replay: PROPERTY_SEED=${seed} npx tap ${CLASS_FILES.join(' ')}`);
  const r = runNestedTap(CLASS_FILES, { PROPERTY_SEED: seed });
  t.equal(r.status, 0, `seed ${seed}: ${r.status === 0 ? 'passed' : nestedTapReport(r)}`);
});
