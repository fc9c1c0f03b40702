/**
 * Issue #35 item 3: every driver folder has the same file roles, and what drivers share is in the kit
 * (src/drivers/kit/), which names no mesh and imports no driver; a driver imports no other driver's folder
 * (fsm is osm's code with FSM's flavor, docs/internals/writing-a-driver.md). A new driver that skips a role, or
 * reaches into another driver instead of the kit, fails here.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { meshNamesInCore } from '../../scripts/boundary.ts';
import { sourceFiles } from '../../scripts/long-functions.ts';

const DRIVERS = fileURLToPath(new URL('../../src/drivers', import.meta.url));
const KIT = join(DRIVERS, 'kit');
const ROLES = ['index', 'config', 'decide', 'reasons', 'inject', 'uninject'];
/** The drivers whose mesh rewrites the app's probes (`probes.ts`). */
const WITH_PROBES = ['istio', 'kuma', 'osm'];

const folders = readdirSync(DRIVERS).filter((f) => statSync(join(DRIVERS, f)).isDirectory() && f !== 'kit');

/** The driver folder (or `kit`) a path under src/drivers/ is in; undefined for a top-level file (registry, go-parse). */
const folderOf = (path: string): string | undefined => {
  const rel = relative(DRIVERS, path).split('/');
  return rel.length > 1 ? rel[0] : undefined;
};

/** The relative imports of a file, resolved to paths. */
const importsOf = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) =>
    resolve(dirname(file), m[1] ?? ''),
  );

t.test('every driver folder has the file roles', async (t) => {
  t.ok(folders.includes('istio') && folders.includes('kuma'), 'the check reads the driver folders');
  for (const f of folders) {
    if (f === 'fsm') continue;
    const missing = ROLES.filter((r) => !existsSync(join(DRIVERS, f, `${r}.ts`)));
    t.same(missing, [], `${f}: ${ROLES.join(', ')}`);
    t.equal(existsSync(join(DRIVERS, f, 'probes.ts')), WITH_PROBES.includes(f), `${f}: probes.ts where it has probes`);
  }
  t.same(
    readdirSync(join(DRIVERS, 'fsm')).sort(),
    ['config.schema.json', 'index.ts'],
    'fsm: its config section and one line reusing osm',
  );
  t.match(readFileSync(join(DRIVERS, 'fsm', 'index.ts'), 'utf8'), "from '../osm/index.ts'");
});

t.test("the kit names no mesh and imports no driver; a driver imports no other driver's folder", async (t) => {
  const kit = sourceFiles(KIT);
  t.ok(kit.length >= 3, 'the check reads the kit');
  // Relative to the kit folder, every kit file is scanned as core code is (comments may cite a mesh).
  t.same(
    meshNamesInCore(KIT, kit).map((h) => `kit/${h.file}:${h.line}: ${h.text}`),
    [],
  );
  const crossings: string[] = [];
  for (const file of sourceFiles(DRIVERS)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const target of importsOf(file)) {
      if (!target.startsWith(`${DRIVERS}/`)) continue;
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      if (to === 'kit' && from !== 'kit') continue;
      if (from === 'fsm' && to === 'osm') continue;
      crossings.push(`${relative(DRIVERS, file)} imports ${relative(DRIVERS, target)}`);
    }
  }
  t.same(crossings, []);
});
