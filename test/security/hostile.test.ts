/**
 * Hostile and broken inputs (test/fixtures/hostile/ plus a few generated at test time): each must end
 * with either a correct output or a clear error naming the place, exit code 1 or 2, and no partial stdout.
 * "Correct output" for a wrong-typed field means the user's value is still there, unchanged: a function
 * that cannot understand a field must not silently replace or drop it.
 */
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { run, type RunOutput } from '../../src/run.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/hostile/', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/meshinject.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/meshinject.cjs', import.meta.url));

const CONFIG = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: hostile
spec:
  mesh: istio
  policy: enabled
`;

function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

type Path = Array<string | number>;

function getIn(v: unknown, path: Path): unknown {
  let cur = v;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** Every resource of a YAML stream / List / ResourceList text, as plain data. */
function resources(text: string): Array<Record<string, unknown>> {
  const docs = parseAllDocuments(text).map((d) => d.toJS({ maxAliasCount: -1 }) as unknown);
  const out: Array<Record<string, unknown>> = [];
  for (const d of docs) {
    if (d === null || typeof d !== 'object') continue;
    const o = d as Record<string, unknown>;
    if ((o.kind === 'ResourceList' || o.kind === 'List') && Array.isArray(o.items))
      out.push(...(o.items as Array<Record<string, unknown>>));
    else out.push(o);
  }
  return out;
}

/** Asserts an error outcome: exit 1 or 2, the place named on stderr, stdout empty (or, for a ResourceList with exit 1, the input items unchanged plus results). */
function assertError(t: Test, out: RunOutput, input: string, place: RegExp, exitCodes: number[] = [1, 2]): void {
  t.ok(exitCodes.includes(out.exitCode), `exit code ${out.exitCode} is one of ${exitCodes.join('/')}`);
  t.match(out.stderr, place, `stderr names the place (${place})`);
  t.notMatch(out.stderr, /internal error|\n\s+at /, 'no internal error or stack trace');
  const isResourceList = /^kind: ResourceList$/m.test(input);
  if (out.exitCode === 1 && isResourceList) {
    t.same(resources(out.stdout), resources(input), 'ResourceList written back with its items unchanged');
    t.match(out.stdout, /^results:/m, 'with results');
  } else {
    t.equal(out.stdout, '', 'nothing on stdout');
  }
}

/**
 * Asserts the outcome for a wrong-typed field: a clear error naming the field, or exit 0 with the value
 * at `path` (in the first resource) exactly as the user wrote it.
 */
function assertErrorOrPreserved(t: Test, out: RunOutput, input: string, path: Path, place: RegExp): void {
  if (out.exitCode === 0) {
    const before = getIn(resources(input)[0], path);
    const after = getIn(resources(out.stdout)[0], path);
    t.ok(
      isDeepStrictEqual(after, before) ||
        (Array.isArray(after) && Array.isArray(before) && isDeepStrictEqual(after.slice(0, before.length), before)),
      `exit 0, so ${path.join('.')} must keep the user's value: was ${JSON.stringify(before)}, now ${JSON.stringify(after)?.slice(0, 200)}`,
    );
  } else {
    assertError(t, out, input, place);
  }
}

const wrongTypes: Array<{ file: string; path: Path; place: RegExp }> = [
  { file: 'containers-map.yaml', path: ['spec', 'template', 'spec', 'containers'], place: /containers/ },
  { file: 'container-scalar.yaml', path: ['spec', 'template', 'spec', 'containers'], place: /containers/ },
  { file: 'ports-string.yaml', path: ['spec', 'template', 'spec', 'containers', 0, 'ports'], place: /ports/ },
  {
    file: 'container-port-string.yaml',
    path: ['spec', 'template', 'spec', 'containers', 0, 'ports'],
    place: /containerPort|ports/,
  },
  {
    file: 'annotations-list.yaml',
    path: ['spec', 'template', 'metadata', 'annotations'],
    place: /spec\.template\.metadata\.annotations/,
  },
  { file: 'metadata-annotations-list.yaml', path: ['metadata', 'annotations'], place: /metadata\.annotations/ },
  {
    file: 'labels-list.yaml',
    path: ['spec', 'template', 'metadata', 'labels'],
    place: /spec\.template\.metadata\.labels/,
  },
  { file: 'template-string.yaml', path: ['spec', 'template'], place: /spec\.template/ },
  { file: 'template-metadata-string.yaml', path: ['spec', 'template', 'metadata'], place: /spec\.template\.metadata/ },
  { file: 'spec-list.yaml', path: ['spec'], place: /spec/ },
  { file: 'cronjob-jobtemplate-string.yaml', path: ['spec', 'jobTemplate'], place: /spec\.jobTemplate/ },
  { file: 'name-map.yaml', path: ['metadata', 'name'], place: /metadata\.name/ },
  { file: 'namespace-list.yaml', path: ['metadata', 'namespace'], place: /metadata\.namespace/ },
  { file: 'host-network-string.yaml', path: ['spec', 'template', 'spec', 'hostNetwork'], place: /hostNetwork/ },
  {
    file: 'init-containers-string.yaml',
    path: ['spec', 'template', 'spec', 'initContainers'],
    place: /initContainers/,
  },
  { file: 'volumes-map.yaml', path: ['spec', 'template', 'spec', 'volumes'], place: /volumes/ },
];

t.test('wrong types at the fields meshinject reads: a clear error, or the value kept', async (t) => {
  for (const c of wrongTypes) {
    t.test(c.file, async (t) => {
      const input = fixture(c.file);
      const out = run(input, { functionConfig: CONFIG, inputName: c.file });
      assertErrorOrPreserved(t, out, input, c.path, c.place);
    });
  }
});

t.test('Istio annotations with non-string values are reported, not read as "false"', async (t) => {
  const input = fixture('inject-annotation-number.yaml');
  const out = run(input, { functionConfig: CONFIG, inputName: 'inject-annotation-number.yaml' });
  // Kubernetes annotation values are strings; `sidecar.istio.io/inject: 1` is not a decision.
  const skippedAsFalse = out.exitCode === 0 && /skipped \(annotation-false\)/.test(out.stdout);
  t.notOk(skippedAsFalse, 'the number 1 is not silently taken as sidecar.istio.io/inject "false"');
  if (out.exitCode !== 0) assertError(t, out, input, /sidecar\.istio\.io\/inject/);
});

t.test('missing metadata: injected or a clear error', async (t) => {
  const input = fixture('missing-metadata.yaml');
  const out = run(input, { functionConfig: CONFIG, inputName: 'missing-metadata.yaml' });
  if (out.exitCode === 0) {
    const [d] = resources(out.stdout);
    t.equal(getIn(d, ['kind']), 'Deployment');
    t.same(
      getIn(d, ['spec', 'template', 'spec', 'containers', 0]),
      getIn(resources(input)[0], ['spec', 'template', 'spec', 'containers', 0]),
      'app container kept',
    );
  } else assertError(t, out, input, /metadata/);
});

t.test('syntax-level hostility', async (t) => {
  const errors: Array<{ file: string; place: RegExp; exit?: number[] }> = [
    { file: 'invalid-yaml.yaml', place: /invalid-yaml\.yaml.*line \d+/, exit: [2] },
    { file: 'duplicate-keys.yaml', place: /duplicate-keys\.yaml.*line 5/, exit: [2] },
    { file: 'tab-indent.yaml', place: /tab-indent\.yaml.*line 4/, exit: [2] },
    { file: 'billion-laughs.yaml', place: /billion-laughs\.yaml/, exit: [2] },
    { file: 'resourcelist-no-items.yaml', place: /items/, exit: [2] },
    { file: 'resourcelist-items-scalar.yaml', place: /items/, exit: [2] },
    { file: 'resourcelist-item-scalar.yaml', place: /items\[0\]/, exit: [2] },
  ];
  for (const c of errors) {
    t.test(c.file, async (t) => {
      const input = fixture(c.file);
      const out = run(input, { functionConfig: CONFIG, inputName: c.file });
      assertError(t, out, input, c.place, c.exit);
    });
  }

  t.test('anchors and aliases: injected, the ConfigMap untouched', async (t) => {
    const input = fixture('anchors-aliases.yaml');
    const out = run(input, { functionConfig: CONFIG });
    t.equal(out.exitCode, 0, out.stderr);
    const [dep, cm] = resources(out.stdout);
    t.same(getIn(dep, ['spec', 'selector', 'matchLabels']), { app: 'web', tier: 'front' }, 'selector still resolves');
    t.match(getIn(dep, ['spec', 'template', 'metadata', 'labels']), { app: 'web', tier: 'front' }, 'pod labels kept');
    t.ok(
      (getIn(dep, ['spec', 'template', 'spec', 'containers']) as Array<{ name: string }>).some(
        (c) => c.name === 'istio-proxy',
      ),
      'injected',
    );
    t.ok(out.stdout.endsWith(input.slice(input.indexOf('---\n'))), 'ConfigMap with anchors byte-identical');
    t.same(cm, resources(input)[1]);
  });

  t.test('merge keys: the merged container fields survive', async (t) => {
    const input = fixture('merge-keys.yaml');
    const out = run(input, { functionConfig: CONFIG });
    if (out.exitCode !== 0) return assertError(t, out, input, /<<|merge/);
    // kubectl (YAML 1.1) resolves `<<`: the app container must still have its image and port.
    const docs = parseAllDocuments(out.stdout).map((d) => d.toJS({ merge: true } as never) as Record<string, unknown>);
    const app = (getIn(docs[0], ['spec', 'template', 'spec', 'containers']) as Array<Record<string, unknown>>).find(
      (c) => c.name === 'merged',
    );
    t.ok(app, 'app container present');
    t.match(out.stdout, /- <<: &defaults\n\s+image: nginx:1\.27/, 'merge key and anchor kept as written');
  });

  t.test('tabs as separators (valid YAML): injected', async (t) => {
    const out = run(fixture('tab-separators.yaml'), { functionConfig: CONFIG });
    t.equal(out.exitCode, 0, out.stderr);
    t.equal(getIn(resources(out.stdout)[0], ['metadata', 'name']), 'web');
  });

  t.test('BOM: accepted, no BOM in the middle of the output', async (t) => {
    const out = run(fixture('bom.yaml'), { functionConfig: CONFIG });
    t.equal(out.exitCode, 0, out.stderr);
    t.notMatch(out.stdout.slice(1), /\ufeff/);
    t.equal(getIn(resources(out.stdout)[0], ['metadata', 'name']), 'bom');
  });

  t.test('CRLF: injected, line endings stay CRLF, the Service byte-identical', async (t) => {
    const input = fixture('crlf.yaml');
    const out = run(input);
    t.equal(out.exitCode, 0, out.stderr);
    t.equal((out.stdout.match(/(?<!\r)\n/g) ?? []).length, 0, 'no bare LF');
    const svc = input.slice(input.indexOf('- apiVersion: v1\r\n  kind: Service'), input.indexOf('functionConfig:'));
    t.ok(out.stdout.includes(svc), 'Service unchanged');
    t.ok(out.stdout.includes('name: crlf # comment\r\n'), 'comment kept');
  });

  t.test('an empty document between resources is skipped', async (t) => {
    const out = run(fixture('empty-document-between.yaml'), { functionConfig: CONFIG });
    t.equal(out.exitCode, 0, out.stderr);
    t.same(
      resources(out.stdout).map((r) => r.kind),
      ['ConfigMap', 'Deployment'],
    );
  });

  t.test(
    'empty input: an empty stream out, exit 0, and a warning (issue #39: a Helm post-renderer gets what Helm rendered, nothing included)',
    async (t) => {
      for (const text of ['', '\n', '# just a comment\n', '\ufeff']) {
        const out = run(text, { functionConfig: CONFIG });
        t.equal(out.exitCode, 0, JSON.stringify(text));
        t.same(resources(out.stdout), [], 'no resources out');
        t.ok(
          out.results.some((r) => r.severity === 'warning' && /no resources: the output is empty too/.test(r.message)),
          'a warning says so',
        );
      }
      const only = run(fixture('empty-documents.yaml'), { functionConfig: CONFIG, inputName: 'empty-documents.yaml' });
      t.equal(only.exitCode, 0, 'separators and comments only');
      t.same(resources(only.stdout), []);
      t.ok(
        only.results.some((r) => /^empty-documents\.yaml: no resources/.test(r.message)),
        'the warning names the input',
      );
    },
  );

  t.test('deeply nested documents: a clear error naming the line, or the data kept', async (t) => {
    const cases = [
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: ${'['.repeat(100000)}${']'.repeat(100000)}\n`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nspec:\n${Array.from({ length: 5000 }, (_, i) => `${' '.repeat(i + 1)}k:\n`).join('')}${' '.repeat(5001)}v\n`,
      `${fixture('missing-metadata.yaml').replace('spec:\n', `metadata:\n  name: x\n  finalizers: ${'['.repeat(20000)}${']'.repeat(20000)}\nspec:\n`)}`,
    ];
    for (const input of cases) {
      let out: RunOutput;
      try {
        out = run(input, { functionConfig: CONFIG, inputName: 'deep.yaml' });
      } catch (e) {
        t.fail(`run() threw: ${(e as Error).message}`);
        continue;
      }
      if (out.exitCode === 0) t.ok(out.stdout.length >= input.length * 0.9, 'complete output');
      else assertError(t, out, input, /deep\.yaml.*line \d+/, [2]);
    }
  });
});

t.test('functionConfig problems', async (t) => {
  t.test('a functionConfig of the wrong kind', async (t) => {
    const input = fixture('functionconfig-wrong-kind.yaml');
    const out = run(input);
    assertError(t, out, input, /functionConfig.*kind "Deployment"/, [1, 2]);
  });
  t.test('wrong types in SidecarInjection: every field named', async (t) => {
    const deployment = fixture('missing-metadata.yaml').replace('spec:\n', 'metadata:\n  name: web\nspec:\n');
    const out = run(deployment, { functionConfig: fixture('functionconfig-wrong-types.yaml') });
    assertError(t, out, deployment, /spec\.policy/);
    t.match(out.stderr, /spec\.nativeSidecars/);
    t.match(out.stderr, /spec\.istio\.values/);
  });
  t.test('functionConfig that is not YAML', async (t) => {
    const input = fixture('missing-metadata.yaml');
    assertError(t, run(input, { functionConfig: 'spec: [\n' }), input, /functionConfig/, [2]);
  });
});

t.test('template sandboxing: text from annotations and values is never evaluated', async (t) => {
  const evil = '{{#with constructor}}{{name}}{{/with}}';
  const input = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/note: "{{ .Values.global.hub }} ${evil}"
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, "__proto__": "x", constructor: "y"}
      annotations:
        example.com/tpl: "{{ template \\"istio-proxy\\" . }}{{{raw}}}"
        sidecar.istio.io/proxyImage: "registry.example.com/{{ .Values.global.tag }}/proxyv2:{{ printf \\"x\\" }}"
        sidecar.istio.io/logLevel: "${evil}"
    spec:
      containers:
      - name: web
        image: nginx
`;
  const cfg = `${CONFIG}  istio:
    values:
      __proto__: {polluted: "yes"}
      constructor: {prototype: {polluted2: "yes"}}
      global:
        __proto__: {polluted3: "yes"}
        proxy:
          componentLogLevel: "{{ .Values.global.hub }}"
`;
  const out = run(input, { functionConfig: cfg });
  t.equal(out.exitCode, 0, out.stderr);
  const [d] = resources(out.stdout);
  t.equal(getIn(d, ['metadata', 'annotations', 'example.com/note']), `{{ .Values.global.hub }} ${evil}`);
  t.equal(
    getIn(d, ['spec', 'template', 'metadata', 'annotations', 'example.com/tpl']),
    '{{ template "istio-proxy" . }}{{{raw}}}',
  );
  const proxy = (getIn(d, ['spec', 'template', 'spec', 'containers']) as Array<Record<string, unknown>>).find(
    (c) => c.name === 'istio-proxy',
  );
  t.ok(proxy, 'injected');
  t.equal(
    proxy?.image,
    'registry.example.com/{{ .Values.global.tag }}/proxyv2:{{ printf "x" }}',
    'proxyImage annotation used literally',
  );
  const args = (proxy?.args ?? []) as string[];
  t.ok(args.includes(`--proxyLogLevel=${evil}`), 'logLevel annotation used literally');
  t.ok(args.includes('--proxyComponentLogLevel={{ .Values.global.hub }}'), 'values text used literally');
  t.equal(getIn(d, ['spec', 'template', 'metadata', 'labels', 'constructor']), 'y');
  const probe = {} as Record<string, unknown>;
  t.equal(probe.polluted, undefined, 'Object.prototype not polluted');
  t.equal(probe.polluted2, undefined, 'Object.prototype not polluted');
  t.equal(probe.polluted3, undefined, 'Object.prototype not polluted');
});

t.test('template engine: no prototype access from templates', async (t) => {
  const { renderTemplate } = await import('../../src/render/engine.ts');
  const attempts = [
    '{{constructor}}',
    '{{constructor.name}}',
    '{{#with constructor}}{{name}}{{/with}}',
    '{{__proto__}}',
    '{{lookup this "constructor"}}',
    '{{#with (lookup this "constructor")}}{{name}}{{/with}}',
    '{{#with this.constructor.prototype}}{{toString}}{{/with}}',
    '{{#with "s" as |string|}}{{#with string.constructor as |c|}}{{c.name}}{{/with}}{{/with}}',
    // The classic Handlebars RCE gadget chain: must not reach Function.
    '{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}{{this.push (lookup string.sub "constructor")}}{{this.pop}}{{#with string.split as |codelist|}}{{this.pop}}{{this.push "globalThis.meshinjectPwned = 1"}}{{this.pop}}{{#each conslist}}{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}{{/with}}{{/with}}{{/with}}{{/with}}',
  ];
  attempts.forEach((src, i) => {
    let text = '';
    try {
      text = renderTemplate(`hostile/proto-${i}`, src, { name: 'data' });
    } catch (e) {
      t.match(
        (e as Error).message,
        /template "hostile\/proto-\d+" failed/,
        `rejected with a named error: ${src.slice(0, 60)}`,
      );
      return;
    }
    t.notMatch(
      text,
      /Object|Function|String|native code/,
      `no prototype reached: ${src.slice(0, 60)} -> ${JSON.stringify(text.slice(0, 80))}`,
    );
  });
  t.equal((globalThis as Record<string, unknown>).meshinjectPwned, undefined, 'gadget chain did not run');
  t.equal(
    renderTemplate('hostile/literal', '{{v}}', { v: '{{#with constructor}}x{{/with}}' }),
    '{{#with constructor}}x{{/with}}',
    'data is not re-evaluated',
  );
});

t.test('through the CLI binary', async (t) => {
  if (!existsSync(DIST)) {
    t.fail('dist/meshinject.cjs is missing: run `npm run build` first');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'meshinject-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cfgFile = join(dir, 'config.yaml');
  writeFileSync(cfgFile, CONFIG);
  const cli = (args: string[], input?: Buffer) => spawnSync('node', [BIN, ...args], { input, maxBuffer: 1 << 30 });

  t.test('non-UTF-8 bytes: rejected naming the input, or passed through untouched', async (t) => {
    const latin1 = Buffer.concat([
      Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: latin1\ndata:\n  greeting: caf'),
      Buffer.from([0xe9]),
      Buffer.from('\n---\n'),
      readFileSync(join(FIXTURES, 'tab-separators.yaml')),
    ]);
    const file = join(dir, 'latin1.yaml');
    writeFileSync(file, latin1);
    for (const [how, r] of [
      ['file', cli(['--config', cfgFile, file])],
      ['stdin', cli(['--config', cfgFile], latin1)],
    ] as const) {
      if (r.status === 0) {
        const cut = latin1.indexOf('\n---\n') + 5;
        t.ok(
          r.stdout.subarray(0, cut).equals(latin1.subarray(0, cut)),
          `${how}: exit 0, so the ConfigMap bytes (0xE9) must come out unchanged; got ${JSON.stringify(r.stdout.subarray(cut - 20, cut).toString('latin1'))}`,
        );
      } else {
        t.equal(r.status, 2, `${how}: exit 2`);
        t.equal(r.stdout.length, 0, `${how}: nothing on stdout`);
        t.match(r.stderr.toString(), /UTF-8|utf-8|encoding/, `${how}: says what is wrong`);
      }
    }
  });

  t.test('exit codes and stdout of the binary on broken input', async (t) => {
    for (const f of [
      'invalid-yaml.yaml',
      'duplicate-keys.yaml',
      'billion-laughs.yaml',
      'metadata-annotations-list.yaml',
      'containers-map.yaml',
    ]) {
      const r = cli(['--config', cfgFile, join(FIXTURES, f)]);
      t.not(r.status, 0, `${f}: non-zero exit`);
      t.ok(r.status === 1 || r.status === 2, `${f}: exit 1 or 2 (got ${r.status})`);
      t.equal(r.stdout.length, 0, `${f}: nothing on stdout`);
      t.notMatch(r.stderr.toString(), /internal error/, `${f}: no internal error`);
    }
    const rl = cli([join(FIXTURES, 'functionconfig-wrong-kind.yaml')]);
    t.equal(rl.status, 1, 'ResourceList with a wrong functionConfig: exit 1');
    t.same(
      resources(rl.stdout.toString()),
      resources(fixture('functionconfig-wrong-kind.yaml')),
      'items written back unchanged',
    );
    const usage = cli(['--no-such-flag']);
    t.equal(usage.status, 2, 'unknown option: exit 2');
    t.equal(usage.stdout.length, 0, 'unknown option: nothing on stdout');
    const missing = cli([join(dir, 'does-not-exist.yaml')]);
    t.equal(missing.status, 2, 'missing file: exit 2');
    t.match(missing.stderr.toString(), /does-not-exist\.yaml/);
  });

  // Time and memory for this input are benchmark figures (bench/), not assertions: CI machines are shared.
  t.test('a 100 MB list: complete or empty stdout', async (t) => {
    const deployment = readFileSync(join(FIXTURES, 'tab-separators.yaml'), 'utf8').replace(/\t/g, ' ');
    const blob = `    ${'x'.repeat(96)}\n`.repeat(1000);
    const parts: string[] = [];
    for (let i = 0; i < 1000; i++) {
      parts.push(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blob-${i}\ndata:\n  blob: |\n${blob}`);
      if (i % 10 === 0) parts.push(deployment.replace('name: web', `name: web-${i}`));
    }
    const file = join(dir, 'big.yaml');
    const text = parts.join('---\n');
    writeFileSync(file, text);
    t.ok(text.length > 100e6, `input is ${(text.length / 1e6).toFixed(0)} MB`);
    const r = spawnSync('node', [BIN, '--config', cfgFile, file], { maxBuffer: 1 << 30 });
    if (r.status === 0) {
      const outParts = r.stdout.toString().split(/^---\n/m);
      t.equal(outParts.length, parts.length, 'every document written');
      let same = 0;
      let injected = 0;
      parts.forEach((p, i) => {
        if (p.startsWith('apiVersion: v1\nkind: ConfigMap')) same += outParts[i] === p ? 1 : 0;
        else injected += /name: istio-proxy/.test(outParts[i] ?? '') ? 1 : 0;
      });
      t.equal(same, 1000, 'every ConfigMap byte-identical');
      t.equal(injected, 100, 'every Deployment injected');
    } else {
      t.equal(r.status, 2, 'refused: exit 2');
      t.equal(r.stdout.length, 0, 'refused: nothing on stdout');
    }
  });
});

// Every fixture is used by some test above.
t.test('fixture inventory', async (t) => {
  const used = new Set([
    ...wrongTypes.map((c) => c.file),
    'inject-annotation-number.yaml',
    'missing-metadata.yaml',
    'invalid-yaml.yaml',
    'duplicate-keys.yaml',
    'tab-indent.yaml',
    'billion-laughs.yaml',
    'empty-documents.yaml',
    'resourcelist-no-items.yaml',
    'resourcelist-items-scalar.yaml',
    'resourcelist-item-scalar.yaml',
    'anchors-aliases.yaml',
    'merge-keys.yaml',
    'tab-separators.yaml',
    'bom.yaml',
    'crlf.yaml',
    'empty-document-between.yaml',
    'functionconfig-wrong-kind.yaml',
    'functionconfig-wrong-types.yaml',
    'kind-number.yaml',
  ]);
  t.same(
    readdirSync(FIXTURES).filter((f) => !used.has(f)),
    [],
    'no unused fixture',
  );
  const out = run(fixture('kind-number.yaml'), { functionConfig: CONFIG });
  t.equal(out.exitCode, 0, 'kind: 5 is not a workload');
  t.equal(out.stdout, fixture('kind-number.yaml'), 'passed through byte for byte');
});
