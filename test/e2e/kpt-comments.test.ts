// Comments under real kpt (issue #37 item 2): kpt reads a comment above a key as that key's and writes it again
// above it, so a key meshinject inserted between a comment and its key doubled the comment. Every example, run
// through `kpt fn eval` and (packages with a Kptfile) `kpt fn render` twice, then uninjected, keeps each comment
// line exactly as often as its input had it.
import t from 'tap';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, makeTempDir, runTool } from '../helpers/e2e.ts';

const hasKpt = runTool('sh', ['-c', 'command -v kpt']).status === 0;

/** Example packages and the file of each that holds its SidecarInjection. */
const EXAMPLES: Array<[string, string]> = [
  ['shop', 'injection.yaml'],
  ['kuma', 'injection.yaml'],
  ['osm', 'mesh.yaml'],
  ['custom', 'injection.yaml'],
  ['meshinject-simple', 'injection.yaml'],
  ['meshinject-exec', 'injection.yaml'],
];

/** How often each comment line (trimmed) occurs in the YAML files of `dir`, by file (`only`: of these lines). */
function comments(dir: string, only?: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const at = line.indexOf('# ');
      if (at < 0 || (!/^\s*$/.test(line.slice(0, at)) && !/\s$/.test(line.slice(0, at)))) continue;
      const key = `${f}: ${line.slice(at).trim()}`;
      if (!only || only.has(key)) out.set(key, (out.get(key) ?? 0) + 1);
    }
  }
  return out;
}

/** The example's own config turned to uninject (the custom mesh needs its templates to know what it added). */
const uninjectConfig = (cfg: string): string => cfg.replace(/^spec:\n/m, 'spec:\n  mode: uninject\n');

/** A copy of an example package without its checked-in result (`app.injected.yaml`, the same resources again). */
function copyPackage(src: string, dest: string): void {
  cpSync(src, dest, { recursive: true, filter: (f) => !f.endsWith('.injected.yaml') });
}

const tmp = makeTempDir('kpt-comments');
t.teardown(tmp.cleanup);

t.test(
  'kpt fn eval twice, then uninject: every comment once',
  { skip: !hasKpt && 'kpt is not installed' },
  async (t) => {
    for (const [name, cfgFile] of EXAMPLES) {
      const src = join(ROOT, 'examples', name);
      const dir = join(tmp.dir, `eval-${name}`);
      copyPackage(src, dir);
      const want = comments(dir);
      const cfg = join(tmp.dir, `eval-${name}.cfg.yaml`);
      writeFileSync(cfg, readFileSync(join(src, cfgFile), 'utf8'));
      for (const round of [1, 2]) {
        const r = runTool('kpt', ['fn', 'eval', dir, '--exec', BIN, '--fn-config', cfg]);
        t.equal(r.status, 0, `${name}: kpt fn eval, round ${round}: ${r.stderr}`);
        t.same(comments(dir, want), want, `${name}: each comment once after eval round ${round}`);
      }
      const un = join(tmp.dir, `eval-${name}.uninject.yaml`);
      writeFileSync(un, uninjectConfig(readFileSync(cfg, 'utf8')));
      const r = runTool('kpt', ['fn', 'eval', dir, '--exec', BIN, '--fn-config', un]);
      t.equal(r.status, 0, `${name}: kpt fn eval uninject: ${r.stderr}`);
      t.same(comments(dir, want), want, `${name}: each comment once after uninject`);
    }
  },
);

t.test(
  'kpt fn render twice, then uninject: every comment once',
  { skip: !hasKpt && 'kpt is not installed' },
  async (t) => {
    let rendered = 0;
    for (const [name, cfgFile] of EXAMPLES) {
      const src = join(ROOT, 'examples', name);
      // Packages whose Kptfile runs meshinject as a program (the image ones need a container engine).
      if (!existsSync(join(src, 'Kptfile')) || !/exec: /.test(readFileSync(join(src, 'Kptfile'), 'utf8'))) continue;
      const dir = join(tmp.dir, `render-${name}`);
      copyPackage(src, dir);
      const kptfile = readFileSync(join(dir, 'Kptfile'), 'utf8').replace(/exec: \S+/g, `exec: ${BIN}`);
      writeFileSync(join(dir, 'Kptfile'), kptfile);
      const want = comments(dir);
      for (const round of [1, 2]) {
        const r = runTool('kpt', ['fn', 'render', dir, '--allow-exec']);
        t.equal(r.status, 0, `${name}: kpt fn render, round ${round}: ${r.stderr}`);
        t.same(comments(dir, want), want, `${name}: each comment once after render round ${round}`);
      }
      const un = join(tmp.dir, `render-${name}.uninject.yaml`);
      writeFileSync(un, uninjectConfig(readFileSync(join(src, cfgFile), 'utf8')));
      const r = runTool('kpt', ['fn', 'eval', dir, '--exec', BIN, '--fn-config', un]);
      t.equal(r.status, 0, `${name}: kpt fn eval uninject: ${r.stderr}`);
      t.same(comments(dir, want), want, `${name}: each comment once after uninject`);
      rendered++;
    }
    t.ok(rendered >= 4, `${rendered} packages rendered`);
  },
);
