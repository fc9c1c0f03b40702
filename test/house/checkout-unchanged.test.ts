// No test file changes the checkout's build while the suite runs: tap's `before` script records the build files
// (test/setup/checkout-fingerprint.mjs) and the `after` script fails the run when one changed. A test that
// rebuilt dist/ in the checkout (`npm install -g .` runs `prepare`) once made another file's run of the bin read
// a half-written bundle and print nothing. Runs the real `after` script on a planted record.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/e2e.ts';
import { changedFiles, fingerprint } from '../setup/checkout-fingerprint.mjs';

/** Runs the `after` script as tap does (this process its parent) on the record `checkout`. */
function after(checkout: Record<string, string>) {
  const dir = join(tmpdir(), `meshinject-test-data-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'checkout.json'), JSON.stringify(checkout));
  const r = spawnSync(process.execPath, [join(ROOT, 'test/setup/test-data-notice.mjs')], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  return r;
}

t.test('the build files are watched: the bundle, its code cache, the bin, generated sources', async (t) => {
  const now = fingerprint();
  for (const f of [
    'dist/meshinject.cjs',
    'dist/meshinject.cjs.cache',
    'bin/meshinject.js',
    'src/drivers/templates.gen.ts',
  ])
    t.ok(now[f], `${f} is watched`);
  t.notOk(
    Object.keys(now).some((f) => f.startsWith('src/') && !f.includes('.gen.')),
    'hand-written sources are not',
  );
});

t.test('unchanged: exit 0, no complaint', async (t) => {
  const r = after(fingerprint());
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stderr, /changed the checkout/);
});

t.test('a bundle rewritten, a file added or removed: exit 1 naming each file', async (t) => {
  const now = fingerprint();
  const planted: Record<string, string> = {
    ...now,
    'dist/meshinject.cjs': `1 2 ${'0'.repeat(64)}`,
    'dist/old.cjs': '1 2 3',
  };
  delete planted['bin/meshinject.js'];
  t.same(changedFiles(planted, now), ['bin/meshinject.js', 'dist/meshinject.cjs', 'dist/old.cjs']);
  const r = after(planted);
  t.equal(r.status, 1);
  t.match(
    r.stderr,
    /test files changed the checkout's build while the suite ran .*: bin\/meshinject\.js, dist\/meshinject\.cjs, dist\/old\.cjs/,
  );
});
