/**
 * Issue #34: tap loads TypeScript with tsx only (.taprc drops tap's ts-node plugin; `prepare` rebuilds tap with
 * that plugin list, scripts/tap-plugins.mjs). A test process that also loaded ts-node would cost several
 * seconds of CPU more per file: in a fresh clone's first `npm test` (CI) this fails if `prepare` did not rebuild.
 */
import t from 'tap';

t.test('this test process loads TypeScript with tsx, not with ts-node', async (t) => {
  const args = process.execArgv.join(' ');
  t.match(args, /--import=tsx\b/, 'tsx is a preload');
  t.notMatch(args, /@tapjs\/typescript/, `tap's ts-node plugin is not: ${args}`);
});
