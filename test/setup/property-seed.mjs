/**
 * Preloaded into every test process (.taprc `node-arg`): the seed of the fast-check property tests.
 *
 * CI gates on a fixed seed, so that a run is repeatable and a red run means a change broke something, not
 * that the dice found an old bug that day. Bug hunts pick other seeds and more runs:
 *   PROPERTY_SEED=random PROPERTY_RUNS=2000 npx tap test/security/property.test.ts
 * (a failure prints its seed and path; fix the bug, then keep the counterexample as an example test).
 *
 * PROPERTY_SEED: unset → 20261123; `random` → fast-check's own random seed; an integer → that seed.
 * test/security/rotating-seed.test.ts runs the security classes' property tests again with the day's seed.
 */
import fc from 'fast-check';

const raw = process.env.PROPERTY_SEED;
if (raw !== 'random') {
  const seed = raw === undefined || raw === '' ? 20261123 : Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`PROPERTY_SEED must be an integer or "random" (got ${raw})`);
  fc.configureGlobal({ seed });
}
