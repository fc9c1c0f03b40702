#!/usr/bin/env node
// Part of `prepare` (npm ci / npm install in a clone): rebuilds tap with the plugins .taprc names, so that the
// first `npm test` after an install already loads TypeScript with tsx. tap rebuilds itself when the configured
// plugins differ from those it was built with, but only for the runs after the one that noticed: without this,
// the first run after `npm ci` (every CI run) would load tap's ts-node plugin as well as tsx in every test
// process (docs/internals/test-data.md). Does nothing where tap is not installed (an install without dev
// dependencies).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tap = join(ROOT, 'node_modules/.bin/tap');
if (existsSync(tap)) {
  const r = spawnSync(tap, ['build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write(`tap build failed (exit ${r.status}): npm test would load tap's default plugins\n`);
    process.exitCode = 1;
  }
}
