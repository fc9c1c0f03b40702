#!/usr/bin/env node
// Entry point of the `meshinject` bin. Runs the bundled CLI (dist/meshinject.cjs, built by `npm ci` via the
// `prepare` script) through V8's code cache made at build time (dist/meshinject.cjs.cache), which saves
// parsing and compiling on every start. A cache V8 rejects (another Node version, other V8 flags) is simply
// not used. MESHINJECT_WRITE_CODE_CACHE=1 (build time only) writes the cache after a warm-up run.
//
// This file is CommonJS (bin/package.json says so): Node then starts it without its ES module loader,
// which saves a few milliseconds on every run.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { setFlagsFromString } = require('node:v8');
const vm = require('node:vm');

// Tier up to V8's optimising compiler (TurboFan) later: about 3x the default interrupt budget (67584). With
// the default, a 10-workload run has TurboFan compile some 40 functions (the YAML reader, the template,
// the merge: 300-450 ms of CPU on compiler threads) it then barely uses; on a 2-core machine those threads
// compete with the run. With 200000 it optimises about a dozen, with 400000 three, but 400000 also made
// 10 000-workload runs ~15% slower, while 200000 measured the same as the default at 1 000 and 10 000.
// Set before the bundle is compiled: V8 accepts a code cache only when the flags match those it was made
// with (the build's warm-up runs this file, so they do).
setFlagsFromString('--interrupt-budget=200000');

const dir = join(__dirname, '..', 'dist');
const file = join(dir, 'meshinject.cjs');
const cacheFile = `${file}.cache`;
const writeCache = Boolean(process.env.MESHINJECT_WRITE_CODE_CACHE);
// esbuild writes ASCII only (its default charset escapes the rest), so latin1 decodes the bundle exactly,
// and faster than UTF-8.
const source = readFileSync(file, 'latin1');
let cachedData;
try {
  if (!writeCache) cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: file,
  ...(cachedData ? { cachedData } : {}),
});
if (writeCache) {
  process.once('beforeExit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const bundle = { exports: {} };
script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dir);
