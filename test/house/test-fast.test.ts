/**
 * Issue #34: `npm run test:fast` (scripts/test-fast.mjs) runs the quick loop's files in one process per tap
 * job. These check the split a user relies on: every quick file runs exactly once, the groups are balanced,
 * and an entry file imports exactly its files.
 */
import t from 'tap';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { entryText, fastFiles, groups, SPAWNS, testFiles } from '../../scripts/test-fast.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

t.test('groups: every file exactly once, in n balanced groups', async (t) => {
  const sizes = new Map<string, number>(
    Array.from({ length: 40 }, (_, i) => [`test/f${i}.test.ts`, 1 + ((i * 37) % 19) * 100]),
  );
  const files = [...sizes.keys()];
  const g = groups(files, 2, (f: string) => sizes.get(f) ?? 0);
  t.equal(g.length, 2);
  t.same([...g.flat()].sort(), [...files].sort(), 'each file in one group, none lost or doubled');
  const weights = g.map((x: string[]) => x.reduce((a, f) => a + (sizes.get(f) ?? 0), 0));
  const largest = Math.max(...sizes.values());
  t.ok(
    Math.abs((weights[0] ?? 0) - (weights[1] ?? 0)) <= largest,
    `balanced within one file's size: ${weights.join(' / ')}`,
  );
  t.same(
    groups(['a'], 3, () => 1),
    [['a']],
    'no empty group',
  );
});

t.test('the quick loop: files that start no process', async (t) => {
  const fast = fastFiles();
  t.ok(fast.length > 10 && fast.length < testFiles().length, `${fast.length} of ${testFiles().length} files`);
  t.notOk(fast.includes('test/e2e/readme-commands.test.ts'), 'a file that spawns is not in the quick loop');
  t.ok(SPAWNS.test('runCli(['), 'the scan sees a spawn');
});

t.test('an entry imports each of its files once, by file URL, in order', async (t) => {
  const text = entryText(['test/a.test.ts', 'test/b c.test.ts']);
  const urls = [...text.matchAll(/await import\((".*?")\);/g)].map((m) => JSON.parse(m[1] ?? '""'));
  t.same(urls, [pathToFileURL(join(ROOT, 'test/a.test.ts')).href, pathToFileURL(join(ROOT, 'test/b c.test.ts')).href]);
});
