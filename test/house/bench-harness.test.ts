/**
 * The benchmark harness (bench/, issue #24) measures what it claims to: the package it writes is one kpt reads
 * whole, every mesh's bench config injects every workload of it (counted as the bench counts), meshinject on the
 * directory gives what it gives on the file, the identity check reports a difference, and a rewritten report
 * keeps its hand-kept notes.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import {
  countInjected,
  countKptItems,
  MESH_CONFIGS,
  MESHES,
  packageResources,
  writePackage,
} from '../../bench/package.ts';
import { FAST_PATHS_OFF, identityRow, VERIFY_FAST_PATHS } from '../../bench/identity.ts';
import { notesSection } from '../../bench/results.ts';
import { generateShape } from '../../bench/generate.ts';
import { parseSource } from '../../src/krm/source.ts';
import { run } from '../../src/run.ts';

const BIN = fileURLToPath(new URL('../../bin/meshinject.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/meshinject.cjs', import.meta.url));

t.test(
  'each throughput class as a kpt package: kpt reads every resource, every mesh injects every workload',
  async (t) => {
    if (spawnSync('kpt', ['version']).status !== 0) return void t.fail('kpt is not on PATH');
    if (!existsSync(DIST)) return void t.fail('dist/meshinject.cjs is missing: run `npm run build` first');
    const tmp = mkdtempSync(join(tmpdir(), 'meshinject-bench-harness-'));
    t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
    for (const cls of ['mixed', 'all-workloads', 'every-shape-different'] as const) {
      const resources = packageResources(cls, 20);
      const workloads = resources.filter((r) => r.workload).length;
      t.equal(workloads, 20, `${cls}: 20 workloads`);
      if (cls !== 'mixed') t.equal(resources.filter((r) => r.kind === 'Service').length, 4, `${cls}: n/5 Services`);
      const dir = join(tmp, cls);
      const file = writePackage(dir, resources);
      const kpt = spawnSync('sh', ['-c', `kpt fn source "${dir}" > "${tmp}/kpt.yaml"`], { encoding: 'utf8' });
      t.equal(kpt.status, 0, `${cls}: kpt fn source exit 0 ${kpt.stderr}`);
      const list = parse(readFileSync(`${tmp}/kpt.yaml`, 'utf8')) as {
        items: Array<{ kind: string; metadata: { name: string } }>;
      };
      const read = list.items.map((i) => `${i.kind}/${i.metadata.name}`).sort();
      t.same(
        read,
        [...resources.map((r) => `${r.kind}/${r.name}`), 'Kptfile/bench'].sort(),
        `${cls}: kpt read every resource and the Kptfile`,
      );
      t.equal(
        countKptItems(`${tmp}/kpt.yaml`),
        read.length,
        `${cls}: the bench's item count agrees with the parsed list`,
      );
      // The bench runs the other drivers on the mixed class only.
      for (const mesh of cls === 'mixed' ? MESHES : (['istio'] as const)) {
        writeFileSync(`${tmp}/config.yaml`, MESH_CONFIGS[mesh]);
        const onDir = spawnSync('node', [BIN, '-q', '-c', `${tmp}/config.yaml`, dir], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
        t.equal(onDir.status, 0, `${cls} ${mesh}: exit 0 ${onDir.stderr.slice(0, 300)}`);
        writeFileSync(`${tmp}/out.yaml`, onDir.stdout);
        t.equal(countInjected(`${tmp}/out.yaml`, mesh), workloads, `${cls} ${mesh}: every workload injected`);
        const onFile = spawnSync('node', [BIN, '-q', '-c', `${tmp}/config.yaml`, file], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
        t.equal(onFile.stdout, onDir.stdout, `${cls} ${mesh}: the directory gives the output of its resources.yaml`);
      }
    }
  },
);

t.test('the injected count needs the proxy container, not only the annotation', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'meshinject-bench-count-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  writeFileSync(
    `${tmp}/a.yaml`,
    'metadata:\n  annotations:\n    meshinject.dev/injection: injected (linkerd, annotations only)\n',
  );
  t.equal(countInjected(`${tmp}/a.yaml`, 'linkerd'), 0);
  writeFileSync(
    `${tmp}/b.yaml`,
    '{"metadata": {"annotations": {"meshinject.dev/injection": "injected (istio)"}}, "containers": [{"name": "istio-proxy"}]}\n',
  );
  t.equal(countInjected(`${tmp}/b.yaml`, 'istio'), 1, 'JSON output counts');
});

t.test('the identity check reports outputs that differ between the switches, and passes equal ones', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'meshinject-bench-identity-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const differs = await identityRow(
    'env-dependent',
    ['-e', 'process.stdout.write(String(process.env.MESHINJECT_PLANS))'],
    `${tmp}/out`,
  );
  t.equal(differs.identical, false, 'an output that depends on MESHINJECT_PLANS is a mismatch');
  t.ok(differs.runs.length >= 3, 'on, off and verified runs');
  const same = await identityRow('constant', ['-e', 'process.stdout.write("x")'], `${tmp}/out`);
  t.equal(same.identical, true);
  const failing = await identityRow('exit 2', ['-e', 'process.exitCode = 2'], `${tmp}/out`);
  t.equal(failing.identical, false, 'a failing run is never identical, even with equal (empty) outputs');
});

t.test(
  'every switch the identity class sets is one meshinject documents (a misspelt switch would compare equal runs)',
  async (t) => {
    if (!existsSync(DIST)) return void t.fail('dist/meshinject.cjs is missing: run `npm run build` first');
    const help = spawnSync('node', [BIN, '--help'], { encoding: 'utf8' }).stdout;
    for (const [k, v] of Object.entries({ ...FAST_PATHS_OFF, ...VERIFY_FAST_PATHS }))
      t.match(help, new RegExp(`\\b${k}=${v}\\b`), `${k}=${v} in meshinject --help`);
  },
);

t.test('a rewritten report keeps the hand-kept notes', async (t) => {
  const previous =
    '# results\n\n| a | b |\n\n## Notes (by hand, after this run)\n- keep me\n\n## More by hand\nalso kept\n';
  t.equal(notesSection(previous), '## Notes (by hand, after this run)\n- keep me\n\n## More by hand\nalso kept\n');
  t.match(notesSection('# results\n'), /^## Notes \(by hand/, 'a report without notes gets an empty section');
  t.match(notesSection(undefined), /^## Notes \(by hand/);
});

t.test(
  'the one-anchored shape: the fast reader reads every Deployment, the yaml package the one anchored ConfigMap',
  async (t) => {
    const text = generateShape('one-anchored', 5);
    t.same(
      parseSource(text).items.map((it) => `${it.kind}/${it.reader}`),
      [...Array(5).fill('Deployment/block'), 'ConfigMap/yaml'],
    );
    const out = run(text);
    t.equal(out.exitCode, 0, out.stderr);
    t.equal((out.stdout.match(/^ {6}- name: istio-proxy$/gm) ?? []).length, 5, 'every Deployment injected');
  },
);

t.test('the look-alikes shape: the fast reader reads every Deployment; its 1.1 booleans stay strings', async (t) => {
  const text = generateShape('look-alikes', 3);
  const items = parseSource(text).items;
  t.same(
    items.map((it) => `${it.kind}/${it.reader}`),
    Array(3).fill('Deployment/block'),
  );
  const out = run(text);
  t.equal(out.exitCode, 0, out.stderr);
  t.equal((out.stdout.match(/^ {6}- name: istio-proxy$/gm) ?? []).length, 3, 'every Deployment injected');
  t.equal((out.stdout.match(/^ {10}value: no$/gm) ?? []).length, 3, 'the look-alike kept as written');
  t.equal((out.stdout.match(/\{app: web, logging: on, /g) ?? []).length, 3, 'and in the pod labels');
});
