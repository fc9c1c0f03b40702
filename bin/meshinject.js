#!/usr/bin/env node
// Entry point of the `meshinject` bin. Runs the bundled CLI (dist/meshinject.cjs, built by `npm ci` via the
// `prepare` script) through V8's code cache made at build time (dist/meshinject.cjs.cache), which saves
// parsing and compiling on every start. The cache is used only when it is sound, else the bundle is compiled
// from source (slower, same output):
// - it must come from the same build as the bundle: the build ends the bundle with a line
//   `//# meshinject-build <64 hex> cache <64 hex>` (SHA-256 of the bundle before that line, then SHA-256 of the
//   cache file) and starts the cache with the first 64 characters. V8 itself checks only the source's *length*,
//   and runs a cache made from another source of the same length (a rebuild that changed a version string) as
//   if it were this one;
// - its bytes must be those the build wrote: their SHA-256 must be the line's second digest, checked before V8
//   sees them. V8 checks a cache's header, not its body: a cache changed past its header (a constant, a
//   bytecode) would run as changed. The warm-up that writes the cache writes its digest into that line, in
//   place (the same length, so the cache stays valid for the source);
// - V8 must accept it: a cache made by another Node or V8 version, or under other V8 flags, is rejected.
// MESHINJECT_WRITE_CODE_CACHE=1 (build time only) writes the cache after a warm-up run;
// MESHINJECT_CODE_CACHE_REPORT=1 prints on stderr whether the cache was used (accepted, rejected by V8,
// stale: from another build, damaged: not the bytes the build wrote, or absent).
//
// This file is CommonJS (bin/package.json says so): Node then starts it without its ES module loader,
// which saves a few milliseconds on every run.
'use strict';
const { openSync, readFileSync, writeFileSync, writeSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { join } = require('node:path');
const { setFlagsFromString } = require('node:v8');
const vm = require('node:vm');

// Tier up to V8's optimising compiler (TurboFan) late: an interrupt budget of 2 000 000, about 30x V8's default
// (67584). A run of a few hundred workloads executes most of its code a few times only; with the default
// budget, a 10-workload run has TurboFan compile some 40 functions (the YAML reader, the template, the merge:
// on compiler threads, which on a 2-core machine compete with the run) that it then barely uses. With
// 2 000 000 start-up CPU is ~7 % lower and runs of a few hundred workloads ~20 % faster; the CLI lowers the
// budget for an input of 8 MiB or more, and in any run after its first second (src/cli/tier-up.ts: the
// figures, and the start value, which a test checks against this line).
// Set before the bundle is compiled: V8 accepts a code cache only when the flags match those it was made
// with. The build's warm-up runs this file and writes the cache at exit, after setting these flags again: the
// CLI may have changed them during the run (a warm-up slower than a second, as under emulation, tiers up).
const START_FLAGS = '--interrupt-budget=2000000';
setFlagsFromString(START_FLAGS);

const dir = join(__dirname, '..', 'dist');
const file = join(dir, 'meshinject.cjs');
const cacheFile = `${file}.cache`;
const writeCache = Boolean(process.env.MESHINJECT_WRITE_CODE_CACHE);
// esbuild writes ASCII only (its default charset escapes the rest), so latin1 decodes the bundle exactly,
// and faster than UTF-8.
const source = readFileSync(file, 'latin1');
const STAMP = /\n\/\/# meshinject-build ([0-9a-f]{64}) cache ([0-9a-f]{64})\n$/;
const stampLine = STAMP.exec(source.slice(-200));
const build = stampLine ? stampLine[1] : undefined;
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
let cache;
try {
  if (!writeCache && build) cache = readFileSync(cacheFile);
} catch {
  cache = undefined;
}
const sameBuild = Boolean(cache && cache.length > 64 && cache.toString('latin1', 0, 64) === build);
const intact = sameBuild && sha256(cache) === stampLine[2];
const cachedData = intact ? cache.subarray(64) : undefined;
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: file,
  ...(cachedData ? { cachedData } : {}),
});
if (process.env.MESHINJECT_CODE_CACHE_REPORT) {
  const state = !cache
    ? 'absent'
    : !sameBuild
      ? 'stale'
      : !intact
        ? 'damaged'
        : script.cachedDataRejected
          ? 'rejected'
          : 'accepted';
  process.stderr.write(`meshinject: code cache ${state}\n`);
}
if (writeCache && build) {
  process.once('beforeExit', () => {
    setFlagsFromString(START_FLAGS);
    const written = Buffer.concat([Buffer.from(build, 'latin1'), script.createCachedData()]);
    writeFileSync(cacheFile, written);
    // The cache's digest, into the bundle's last line in place: 65 characters from the end (64 hex and "\n").
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, sha256(written), Buffer.byteLength(source, 'latin1') - 65, 'latin1');
    } finally {
      closeSync(fd);
    }
  });
}
const bundle = { exports: {} };
// The bundle requires Node's built-in modules only (the build checks), so this file's require serves it and
// `node:module` (with Node's ES module loader) is never loaded.
script.runInThisContext()(bundle.exports, require, bundle, file, dir);
