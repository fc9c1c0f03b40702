#!/usr/bin/env node
// `npm run demo`: runs the bookinfo example (examples/bookinfo) through the built CLI, prints the
// injected YAML, then a short summary of what was injected and skipped.
//
//   node bin/meshinject.js --config examples/bookinfo/injection.yaml ../shared/real-world/bookinfo/bookinfo.yaml
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const input = '../shared/real-world/bookinfo/bookinfo.yaml';
const config = 'examples/bookinfo/injection.yaml';
const ANNOTATION = 'meshinject.dev/injection';

function fail(message) {
  process.stderr.write(`demo: ${message}\n`);
  process.exitCode = 1;
}

if (!existsSync(new URL('../dist/meshinject.cjs', import.meta.url))) {
  fail('dist/meshinject.cjs is missing: run `npm run build` (or `npm ci`) first');
} else if (!existsSync(new URL(`../${input}`, import.meta.url))) {
  fail(`the bookinfo input is missing: ${input} (relative to ${root})`);
} else {
  const r = spawnSync(process.execPath, ['bin/meshinject.js', '--config', config, input], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, LOG_TO_STDERR: 'false' },
  });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    fail(`meshinject exited with ${r.status ?? r.signal}`);
  } else {
    process.stdout.write(r.stdout);
    const rows = [];
    let other = 0;
    for (const doc of parseAllDocuments(r.stdout)) {
      const obj = doc.toJS();
      if (!obj || typeof obj !== 'object') continue;
      const outcome = obj.metadata?.annotations?.[ANNOTATION];
      if (outcome === undefined) other++;
      else rows.push({ what: `${obj.kind}/${obj.metadata.name}`, outcome });
    }
    const injected = rows.filter((x) => x.outcome.startsWith('injected')).length;
    const width = Math.max(...rows.map((x) => x.what.length), 0);
    const line = '#'.repeat(78);
    process.stdout.write(`\n${line}\n# meshinject demo: ${config} on ${input}\n`);
    for (const x of rows) process.stdout.write(`#   ${x.what.padEnd(width)}  ${x.outcome}\n`);
    process.stdout.write(`# ${injected} workload(s) injected, ${rows.length - injected} skipped; ${other} other resource(s) passed through unchanged\n${line}\n`);
  }
}
