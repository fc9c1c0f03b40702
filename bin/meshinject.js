#!/usr/bin/env node
// Entry point of the `meshinject` bin. Runs the bundled CLI (dist/meshinject.cjs, built by `npm ci` via the
// `prepare` script) through V8's code cache made at build time (dist/meshinject.cjs.cache), which saves
// parsing and compiling on every start. A cache V8 rejects (another Node version) is simply not used.
// MESHINJECT_WRITE_CODE_CACHE=1 (build time only) writes the cache after a warm-up run.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const file = fileURLToPath(new URL('../dist/meshinject.cjs', import.meta.url));
const cacheFile = `${file}.cache`;
const source = readFileSync(file, 'utf8');
let cachedData;
try {
  if (!process.env.MESHINJECT_WRITE_CODE_CACHE) cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: file,
  ...(cachedData ? { cachedData } : {}),
});
if (process.env.MESHINJECT_WRITE_CODE_CACHE) {
  process.once('beforeExit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
