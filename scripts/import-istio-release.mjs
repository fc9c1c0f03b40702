#!/usr/bin/env node
// Builds an Istio release corpus from an istio/istio git directory (issue #25):
//   npm run import-istio-release -- --from <istio git dir> --tag 1.30.0 --out <dir> [--layout shared|full]
// writes <out>/<tag>/ (a folder outside the repository, e.g. <data dir>/conformance/istio-versions of the test data,
// docs/internals/test-data.md; the repository holds only what this project wrote) from that tag's own TestInjection:
// the case table of pkg/kube/inject/inject_test.go plus the auto-discovered goldens of testdata/inject/, each case's
// injection settings rendered as the tag's harness renders them (scripts/istio-release/settings.mjs), and a
// corpus.json with counts, exclusions and a self-check. Files are read with `git show <tag>:<path>`; nothing is built
// or run from the Istio tree. Layout `full` puts every template into every case's fn-config.yaml (as the 1.26.0
// corpus); `shared` (the default) writes the release's chart templates once (shared-templates.yaml) and leaves in a
// case only the templates that differ, which the conformance runner merges back (case.yaml `sharedTemplates`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { listCases } from './istio-release/cases.mjs';
import { toJsonText, toYamlText } from './istio-release/emit.mjs';
import { mergeFrom, renderSettings } from './istio-release/settings.mjs';
import { describeMissing, missingFunctions } from './istio-release/func-check.ts';

const INJECT = 'pkg/kube/inject';
const CHART = 'manifests/charts/istio-control/istio-discovery';

function usage(msg) {
  process.stderr.write(
    `${msg}\nusage: import-istio-release --from <istio git dir> --tag <tag> --out <dir> [--layout shared|full]\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { layout: 'shared' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (['--from', '--tag', '--out', '--layout'].includes(a) && v !== undefined) {
      o[a.slice(2)] = v;
      i++;
    } else usage(`unexpected argument: ${a}`);
  }
  if (!o.from || !o.tag || !o.out) usage('--from, --tag and --out are required');
  const inRepo = relative(fileURLToPath(new URL('..', import.meta.url)), resolve(o.out));
  if (!inRepo || (!inRepo.startsWith('..') && !isAbsolute(inRepo)))
    usage(`--out ${o.out} is inside the repository: third-party data lives outside it (docs/internals/test-data.md)`);
  if (!['shared', 'full'].includes(o.layout)) usage('--layout is shared or full');
  return o;
}

function gitReader(gitDir, tag) {
  const git = (...args) =>
    execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const cache = new Map();
  const show = (path) => {
    if (!cache.has(path)) cache.set(path, git('show', `${tag}:${path}`));
    return cache.get(path);
  };
  return {
    commit: git('rev-parse', `${tag}^{commit}`).trim(),
    show,
    ls: (dir) => git('ls-tree', '--name-only', `${tag}:${dir}`).split('\n').filter(Boolean).sort(),
    files: { chart: (p) => show(`${CHART}/${p}`), profile: (n) => show(`manifests/profiles/${n}.yaml`) },
  };
}

/** Python-like repr of the settings call (`getInjectionSettings(['a=b'], file)`). */
function settingsText(c) {
  const flags = c.setFlags ? `[${c.setFlags.map((f) => `'${f}'`).join(', ')}]` : 'nil';
  return `rendered like getInjectionSettings(${flags}, ${c.inFilePath ?? '-'})`;
}

function testTable(c) {
  const out = {};
  for (const k of [
    'in',
    'want',
    'setFlags',
    'inFilePath',
    'mesh',
    'skipWebhook',
    'skipInjection',
    'expectedError',
    'expectedLog',
    'setup',
  ]) {
    if (c[k] !== undefined) out[k] = c[k];
  }
  return out;
}

/** Notes for case.yaml: what a tool must do to reproduce this case. */
function notes(k, settings, readsNativeEnv) {
  const n = [];
  if (k.facts.meshNote) n.push(k.facts.meshNote);
  if (readsNativeEnv) {
    const v = k.facts.processEnv?.ENABLE_NATIVE_SIDECARS ?? '<unset>';
    n.push(
      `the templates read the process environment with \`env\`: ENABLE_NATIVE_SIDECARS=${v}; for ENABLE_NATIVE_SIDECARS that is the same bit as spec.nativeSidecars (Go's moveContainer reads the same variable at this tag)`,
    );
  }
  if (k.c.inFilePath) {
    n.push(`settings from IstioOperator file ${k.c.inFilePath} (copied as iop.yaml)`);
    const iop = Object.entries(settings.origin)
      .filter(([, o]) => o.kind === 'iop')
      .map(([name]) => name);
    if (iop.length > 0)
      n.push(
        `user injection templates from the IOP values (${iop.join(', ')}) are in injectorConfig.templates, where the chart puts them`,
      );
  }
  if (k.facts.compliancePolicy)
    n.push(`setup sets the istiod feature COMPLIANCE_POLICY=${k.facts.compliancePolicy}: spec.istio.compliancePolicy`);
  if (k.c.skipWebhook) n.push('upstream compares this golden only through kube-inject (skipWebhook)');
  return n;
}

function caseYaml(k, ctx, settings) {
  const { tag, commit } = ctx;
  const c = k.c;
  const error = c.expectedError !== undefined && c.expectedError !== '';
  const doc = {
    source: `istio/istio@${tag} ${INJECT}/testdata/inject/${c.in} -> ${error ? 'error' : c.want} (TestInjection case ${k.index})`,
    istioTag: tag,
    istioCommit: commit,
    testIndex: k.index,
    category: error ? 'error' : 'kube-inject',
    settings: settingsText(c),
    nativeSidecars: k.facts.nativeText,
    kubeInjectCompared: true,
    webhookCompared: !c.skipWebhook && !error,
    explicitInTestTable: k.explicit,
    testTable: testTable(c),
  };
  if (k.facts.meshDelta) doc.meshDelta = k.facts.meshDelta;
  if (k.facts.processEnv) doc.processEnv = k.facts.processEnv;
  if (k.facts.warning) doc.expectWarningContaining = k.facts.warning;
  if (ctx.layout === 'shared') doc.sharedTemplates = '../../shared-templates.yaml';
  const n = notes(k, settings, ctx.readsNativeEnv);
  if (n.length > 0) doc.notes = n;
  return doc;
}

/** How a template text relates to its source file (the corpus' self-check). */
function templateKind(name, text, origin) {
  const trimmed = origin.text.trim();
  const prefix = origin.kind === 'iop' ? 'iop ' : '';
  if (text === origin.text) return `${name}: ${prefix}verbatim`;
  if (text === `${trimmed}\n`) return `${name}: ${prefix}trimmed (Helm \`trim\`, one final newline)`;
  if (text === trimmed)
    return `${name}: ${prefix}trimmed, no final newline (last entry of the ConfigMap's \`|-\` block)`;
  return undefined;
}

function fnConfig(ctx, k, settings) {
  const meshConfig = structuredClone(settings.meshConfig);
  if (k.facts.meshDelta) mergeFrom(meshConfig, k.facts.meshDelta);
  return {
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    metadata: { name: 'conformance' },
    spec: {
      mesh: 'istio',
      nativeSidecars: k.facts.native,
      istio: {
        version: ctx.tag,
        ...(k.facts.compliancePolicy ? { compliancePolicy: k.facts.compliancePolicy } : {}),
        injectorConfig: structuredClone(settings.injectorConfig),
        values: settings.values,
        meshConfig,
      },
    },
  };
}

/** Writes one case directory; returns the self-check findings. */
function writeCase(ctx, k, settings, dir) {
  const c = k.c;
  mkdirSync(dir, { recursive: true });
  const fc = fnConfig(ctx, k, settings);
  const kinds = [];
  const problems = [];
  for (const [name, text] of Object.entries(fc.spec.istio.injectorConfig.templates)) {
    const kind = templateKind(name, text, settings.origin[name]);
    if (kind) kinds.push(kind);
    else problems.push(`${k.name}: template ${name} matches neither its file nor the Helm trim rule`);
  }
  const written = structuredClone(fc);
  if (ctx.layout === 'shared') {
    const own = written.spec.istio.injectorConfig.templates;
    for (const [name, text] of Object.entries(own)) if (ctx.shared[name] === text) delete own[name];
    if (Object.keys(own).length === 0) delete written.spec.istio.injectorConfig.templates;
  }
  const text = toYamlText(written);
  if (!isDeepStrictEqual(parse(text), written))
    problems.push(`${k.name}: fn-config.yaml does not parse back to what was written`);
  writeFileSync(join(dir, 'fn-config.yaml'), text);
  writeFileSync(join(dir, 'case.yaml'), toYamlText(caseYaml(k, ctx, settings)));
  writeFileSync(join(dir, 'input.yaml'), ctx.git.show(`${INJECT}/testdata/inject/${c.in}`));
  if (c.expectedError) writeFileSync(join(dir, 'expected-error.txt'), `${c.expectedError}\n`);
  else writeFileSync(join(dir, 'expected.yaml'), ctx.git.show(`${INJECT}/testdata/inject/${c.want}`));
  if (c.inFilePath) writeFileSync(join(dir, 'iop.yaml'), ctx.git.show(`${INJECT}/testdata/inject/${c.inFilePath}`));
  return { kinds, problems };
}

/** SOURCE.md of a release corpus: where it comes from, its license, how it was derived, and its counts. */
function sourceText(opts, corpus) {
  const ex = corpus.excluded.map((e) => `- \`${e.name}\` (TestInjection case ${e.index}): ${e.reason}`).join('\n');
  return `# Source: Istio ${opts.tag} TestInjection corpus

- Repository: https://github.com/istio/istio
- Tag: \`${opts.tag}\`, commit \`${corpus.commit}\`
- License: Apache-2.0 (the Istio project; see LICENSE in that repository)
- Upstream files: pkg/kube/inject/inject_test.go (the \`TestInjection\` case table), pkg/kube/inject/testdata/inject/
  (inputs \`*.yaml\`, goldens \`*.injected\`, IstioOperator files \`*.iop.yaml\`), manifests/profiles/{default,empty}.yaml and
  the istiod chart manifests/charts/istio-control/istio-discovery/ (values.yaml, templates/istiod-injector-configmap.yaml,
  files/*.yaml).

## How it was derived

\`npm run import-istio-release -- --from <istio/istio git dir> --tag ${opts.tag}${opts.layout === 'full' ? ' --layout full' : ''}\` (scripts/import-istio-release.mjs) reads
those files with \`git show ${opts.tag}:<path>\` and writes one case per TestInjection case: \`input.yaml\`, \`expected.yaml\` and
\`iop.yaml\` are the upstream files unchanged; \`fn-config.yaml\` holds the injection settings the tag's harness renders
for the case (\`getInjectionSettings\`: the operator's profile and \`--set\` flags, the chart's values and ConfigMap
templates, the mesh config), reproduced without Go; \`case.yaml\` records the test-table row and what the harness does.
${
  opts.layout === 'shared'
    ? `The chart templates every case shares are written once, in \`shared-templates.yaml\`; a case's \`fn-config.yaml\` keeps
only the templates that differ (IstioOperator templates, the last ConfigMap entry's newline) and its \`case.yaml\`
points at the shared file (\`sharedTemplates\`), which the conformance runner merges back.
`
    : ''
}
## Counts

${corpus.testInjectionCases} TestInjection cases (${corpus.explicit} in the table, ${corpus.autoDiscovered} auto-discovered); ${corpus.written} written
(${corpus.writtenByCategory['kube-inject']} kube-inject, ${corpus.writtenByCategory.error} error); ${corpus.excluded.length} excluded:

${ex || '(none)'}

\`corpus.json\` lists the cases, the exclusions with their test-table rows and the builder's self-check.
`;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const m = /^v?1\.(\d+)\./.exec(opts.tag);
  if (!m) usage(`not an Istio 1.x tag: ${opts.tag}`);
  const minor = Number(m[1]);
  if (minor < 26)
    usage(
      `${opts.tag}: tags before 1.26 read committed settings files (testdata/inputs/*.gen.yaml); this builder reproduces the render-at-test-time harness of 1.26+`,
    );
  const git = gitReader(opts.from, opts.tag);
  const testSrc = git.show(`${INJECT}/inject_test.go`);
  const list = listCases(testSrc, git.ls(`${INJECT}/testdata/inject`), minor);
  const cache = new Map();
  const settingsFor = (c) => {
    const key = JSON.stringify([c.setFlags ?? [], c.inFilePath ?? '']);
    if (!cache.has(key))
      cache.set(
        key,
        renderSettings(
          git.files,
          c.setFlags ?? [],
          c.inFilePath ? git.show(`${INJECT}/testdata/inject/${c.inFilePath}`) : undefined,
        ),
      );
    return cache.get(key);
  };
  const defaults = settingsFor({});
  const ctx = {
    tag: opts.tag,
    commit: git.commit,
    git,
    layout: opts.layout,
    shared: defaults.injectorConfig.templates,
    readsNativeEnv: /env "ENABLE_NATIVE_SIDECARS"/.test(defaults.injectorConfig.templates.sidecar ?? ''),
  };
  const root = resolve(opts.out, opts.tag);
  rmSync(join(root, 'cases'), { recursive: true, force: true });
  const kindCounts = {};
  const problems = [];
  const written = [];
  const excluded = [];
  for (const k of list.cases) {
    if (k.excluded) {
      excluded.push({ index: k.index, name: k.name, reason: k.excluded, testTable: testTable(k.c) });
      continue;
    }
    const r = writeCase(ctx, k, settingsFor(k.c), join(root, 'cases', k.name));
    for (const kind of r.kinds) kindCounts[kind] = (kindCounts[kind] ?? 0) + 1;
    problems.push(...r.problems);
    written.push(k);
  }
  if (opts.layout === 'shared')
    writeFileSync(join(root, 'shared-templates.yaml'), toYamlText({ templates: ctx.shared }));
  else rmSync(join(root, 'shared-templates.yaml'), { force: true });
  const byCategory = {};
  for (const k of written) {
    const cat = k.c.expectedError ? 'error' : 'kube-inject';
    byCategory[cat] = (byCategory[cat] ?? 0) + 1;
  }
  const corpus = {
    tag: opts.tag,
    commit: git.commit,
    harness: 'render-at-test-time',
    harnessDetail:
      'TestInjection renders the chart per settings via getInjectionSettings (webhook_test.go) -> render.GenerateManifest(iop, setFlags + installPackagePath, profile=empty, components.pilot.enabled=true); reproduced by this builder',
    nativeSidecarsDefault: list.model.text,
    testInjectionCases: list.cases.length,
    explicit: list.explicit,
    autoDiscovered: list.auto,
    written: written.length,
    writtenByCategory: { 'kube-inject': byCategory['kube-inject'] ?? 0, error: byCategory.error ?? 0 },
    excluded,
    dependsOnTagGoBehaviour: {},
    cases: written.map((k) => k.name),
    verify: {
      summary: `${written.length} fn-configs parse; ${problems.length} template problems`,
      templates: kindCounts,
      problems,
    },
    crosscheck: { skipped: 'no committed gen files at this tag (its harness renders the chart at test time)' },
  };
  writeFileSync(join(root, 'corpus.json'), toJsonText(corpus));
  writeFileSync(join(root, 'SOURCE.md'), sourceText(opts, corpus));
  const templates = {};
  for (const st of cache.values()) {
    for (const [n, text] of Object.entries(st.injectorConfig.templates)) {
      if (!Object.values(templates).includes(text))
        templates[n in templates ? `${n} (${Object.keys(templates).length})` : n] = text;
    }
  }
  const missing = describeMissing(missingFunctions(opts.tag, templates));
  process.stdout.write(
    `${opts.tag} (${git.commit}): ${list.cases.length} TestInjection cases (${list.explicit} + ${list.auto}), ${written.length} written (${JSON.stringify(corpus.writtenByCategory)}), ${excluded.length} excluded${excluded.length ? `: ${excluded.map((e) => `${e.name} [${e.index}]`).join(', ')}` : ''}; ${problems.length} problems\n`,
  );
  for (const p of problems) process.stderr.write(`problem: ${p}\n`);
  for (const f of missing)
    process.stderr.write(`to port: ${f} is not in meshinject's func map (src/drivers/istio/go-funcs.ts)\n`);
  if (problems.length > 0) process.exitCode = 1;
}

main();
