/**
 * Preloaded into every test process (.taprc `node-arg`): sidecar plans are verified (src/render/plans.ts).
 * Every render a plan serves is compared with a full render, and a difference throws, in the test process
 * itself (the flag below) and in every CLI it starts (`MESHINJECT_VERIFY_PLANS=1`, read by src/cli.ts).
 */
globalThis[Symbol.for('meshinject.verifyPlans')] = true;
process.env.MESHINJECT_VERIFY_PLANS ??= '1';
