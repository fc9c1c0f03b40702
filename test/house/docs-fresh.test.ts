/**
 * Issue #39: the generated reference pages are checked in and current. docs/reference/reasons.md must equal
 * what scripts/gen-reference-docs.ts generates from the reason tables (run the script after changing one),
 * and every reason a driver declares, and every shared decision reason, has a row there.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/e2e.ts';
import { CONFIG_PAGE, configFieldsPage, REASONS_PAGE, reasonsPage } from '../../scripts/gen-reference-docs.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';
import { SHARED_REASONS } from '../../src/selection/policy.ts';

const page = readFileSync(join(ROOT, REASONS_PAGE), 'utf8');

t.test(`${REASONS_PAGE} is what scripts/gen-reference-docs.ts generates`, async (t) => {
  t.equal(page, reasonsPage(), 'stale: run `node --import tsx scripts/gen-reference-docs.ts`');
});

t.test(`${CONFIG_PAGE} is what scripts/gen-reference-docs.ts generates from schemas/`, async (t) => {
  const fields = readFileSync(join(ROOT, CONFIG_PAGE), 'utf8');
  t.equal(fields, configFieldsPage(), 'stale: run `node --import tsx scripts/gen-reference-docs.ts`');
  for (const field of [
    'spec.mesh',
    'spec.policy',
    'spec.namespaceSelector',
    'spec.unknownNamespaces',
    'spec.istio.ambient',
    'data.mesh',
  ])
    t.match(fields, `| \`${field}\` |`, `${field} has a row`);
});

t.test("every reason has a row: the shared ones and each driver's", async (t) => {
  for (const code of SHARED_REASONS) t.match(page, `| \`${code}\` |`, `shared reason ${code}`);
  for (const d of DRIVERS) {
    const declared = [...d.reasons, ...Object.keys(d.reasonInfo ?? {})];
    t.ok(declared.length > 0, `${d.name} declares reasons`);
    const start = page.indexOf(`\n## ${d.name}\n`);
    const next = page.indexOf('\n## ', start + 4);
    const section = start < 0 ? '' : page.slice(start, next < 0 ? undefined : next);
    for (const code of declared) t.match(section, `| \`${code}\` |`, `${d.name}: ${code}`);
  }
});

t.test('every relative link of the README and docs/ names a file or folder that exists', async (t) => {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  for (const page of ['README.md', ...walk('docs')]) {
    for (const m of readFileSync(join(ROOT, page), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(m[1]!)) continue;
      t.ok(existsSync(join(ROOT, dirname(page), m[1]!)), `${page}: ${m[1]}`);
    }
  }
});
