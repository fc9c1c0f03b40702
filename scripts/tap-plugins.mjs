#!/usr/bin/env node
// Part of `prepare` (npm ci / npm install in a clone): rebuilds tap with the plugins .taprc names, so that the
// first `npm test` after an install already loads TypeScript with tsx. tap rebuilds itself when the configured
// plugins differ from those it was built with, but only for the runs after the one that noticed: without this,
// the first run after `npm ci` (every CI run) would load tap's ts-node plugin as well as tsx in every test
// process (docs/internals/test-data.md). Builds only when tap's built plugin set differs from the configured
// one, as tap itself decides (`pluginSignature`): a rebuild rewrites tap's files under node_modules, which test
// processes running at that moment load. Does nothing where tap is not installed (an install without dev
// dependencies).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tap = join(ROOT, 'node_modules/.bin/tap');

/**
 * Whether tap's built plugin set is the one .taprc configures (false when either cannot be read): the built
 * set is the `signature` tap's build writes into its test class, the configured one `pluginSignature` of tap's
 * configuration (the comparison tap's runner makes before it rebuilds).
 */
async function builtAsConfigured() {
  try {
    const built = readFileSync(join(ROOT, 'node_modules/@tapjs/test/test-built/dist/esm/index.js'), 'utf8');
    const m = /export const signature = `([^`]*)`/.exec(built);
    if (!m) return false;
    process.chdir(ROOT);
    const config = join(ROOT, 'node_modules/@tapjs/config/dist/esm/index.js');
    const { TapConfig } = await import(pathToFileURL(config).href);
    return m[1].replace(/\\n/g, '\n') === (await TapConfig.load()).pluginSignature;
  } catch {
    return false;
  }
}

if (existsSync(tap) && !(await builtAsConfigured())) {
  const r = spawnSync(tap, ['build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write(`tap build failed (exit ${r.status}): npm test would load tap's default plugins\n`);
    process.exitCode = 1;
  }
}
