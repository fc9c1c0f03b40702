#!/usr/bin/env node
// Builds a kpt package from the shared Online Boutique manifests and renders it with meshinject.
//
//   node examples/online-boutique/render.mjs [--out DIR] [--setup-only]
//
// 1. creates DIR (default: a new temporary directory) and copies ./Kptfile, ./injection.yaml and
//    ../../../shared/real-world/online-boutique/*.yaml into it, except kustomization.yaml (a kustomize
//    file, not part of the kpt package; kpt would otherwise feed it to the function and rewrite it);
// 2. rewrites the Kptfile's `exec:` to the absolute path of bin/meshinject.js: kpt resolves a relative
//    exec path against its own working directory, not the package's (krm-ecosystem.md, hazard G10);
// 3. unless --setup-only, runs `kpt fn render DIR --allow-exec` and prints DIR.
// The package is left in DIR for inspection (`git diff --no-index`, `kpt fn render` again, ...).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/meshinject.js', import.meta.url));
const shared = fileURLToPath(new URL('../../../shared/real-world/online-boutique/', import.meta.url));

let out;
let setupOnly = false;
let bad = false;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--setup-only') setupOnly = true;
  else if (argv[i] === '--out' && argv[i + 1] !== undefined) out = argv[++i];
  else bad = true;
}
if (bad) {
  process.stderr.write('usage: node examples/online-boutique/render.mjs [--out DIR] [--setup-only]\n');
  process.exitCode = 2;
} else {
  const dir = out ?? mkdtempSync(join(tmpdir(), 'meshinject-online-boutique-'));
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(shared, 'frontend.yaml'))) {
    process.stderr.write(`render.mjs: the shared manifests are missing: ${shared}\n`);
    process.exitCode = 1;
  } else {
    for (const f of readdirSync(shared)) {
      if (f.endsWith('.yaml') && f !== 'kustomization.yaml') copyFileSync(join(shared, f), join(dir, f));
    }
    copyFileSync(join(here, 'injection.yaml'), join(dir, 'injection.yaml'));
    const kptfile = readFileSync(join(here, 'Kptfile'), 'utf8').replace(/^(\s*- exec: ).*$/m, `$1${bin}`);
    writeFileSync(join(dir, 'Kptfile'), kptfile);
    if (setupOnly) {
      process.stdout.write(`${dir}\n`);
    } else {
      const r = spawnSync('kpt', ['fn', 'render', dir, '--allow-exec'], { stdio: ['ignore', 'inherit', 'inherit'] });
      if (r.error) {
        process.stderr.write(`render.mjs: cannot run kpt: ${r.error.message}\n`);
        process.exitCode = 1;
      } else {
        process.exitCode = r.status ?? 1;
        process.stdout.write(`${r.status === 0 ? 'rendered' : 'render FAILED'}: ${dir}\n`);
      }
    }
  }
}
