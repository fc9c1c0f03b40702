#!/usr/bin/env node
// `npm run demo`: runs the shop example (examples/shop, manifests written for this repository) through
// the built CLI, prints the injected YAML, then a short summary of what was injected and skipped and why.
// Needs nothing but this repository and `npm ci`.
//
// The shop's files are the `resources:` of examples/shop/kustomization.yaml; meshinject reads several
// files as one input, so the Namespace objects (and their labels) apply to the workloads of every file.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = 'examples/shop';
const config = `${dir}/injection.yaml`;
const ANNOTATION = 'meshinject.dev/injection';

function fail(message) {
  process.stderr.write(`demo: ${message}\n`);
  process.exitCode = 1;
}

/** The shop's manifest files, in kustomization.yaml's order. */
const files = parse(readFileSync(new URL(`../${dir}/kustomization.yaml`, import.meta.url), 'utf8')).resources.map(
  (f) => `${dir}/${f}`,
);

if (!existsSync(new URL('../dist/meshinject.cjs', import.meta.url))) {
  fail('dist/meshinject.cjs is missing: run `npm run build` (or `npm ci`) first');
} else {
  const r = spawnSync(process.execPath, ['bin/meshinject.js', '--config', config, ...files], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, LOG_TO_STDERR: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
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
      else rows.push({ what: `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, outcome });
    }
    const injected = rows.filter((x) => x.outcome.startsWith('injected')).length;
    const width = Math.max(...rows.map((x) => x.what.length), 0);
    const line = '#'.repeat(78);
    process.stdout.write(`\n${line}\n# meshinject demo: ${config} on the ${dir} manifests\n`);
    for (const x of rows) process.stdout.write(`#   ${x.what.padEnd(width)}  ${x.outcome}\n`);
    process.stdout.write(
      `# ${injected} workload(s) injected, ${rows.length - injected} skipped; ${other} other resource(s) passed through unchanged\n`,
    );
    process.stdout.write(`# the same by hand: npx meshinject --config ${config} ${files.join(' ')}\n${line}\n`);
  }
}
