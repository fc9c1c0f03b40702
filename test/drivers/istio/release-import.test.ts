import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { caseFnConfig } from '../../../scripts/conformance/runner.ts';
import { makeTempDir } from '../../helpers/e2e.ts';
// @ts-expect-error plain ESM helper of the importer (no types)
import { parseCaseTable, parseFlagValue } from '../../../scripts/istio-release/go-source.mjs';
// @ts-expect-error plain ESM helper of the importer (no types)
import { caseName, listCases } from '../../../scripts/istio-release/cases.mjs';
// @ts-expect-error plain ESM helper of the importer (no types)
import { injectorShape, mergeOverwrite, setPath } from '../../../scripts/istio-release/settings.mjs';
// @ts-expect-error plain ESM helper of the importer (no types)
import { toYamlText } from '../../../scripts/istio-release/emit.mjs';
import { corpus, needs } from '../../helpers/data.ts';

// The release importer (scripts/import-istio-release.mjs, issue #25) on synthetic inputs, and the release corpora it
// wrote: what the conformance runner reads must be there and agree with corpus.json.
const VERSIONS = corpus('conformance/istio-versions');
const versionsRoot = VERSIONS.path ?? '';

const GO = `
func TestOther(t *testing.T) { cases := []testCase{{in: "nope.yaml"}} }
func TestInjection(t *testing.T) {
	cases := []testCase{
		// a comment with { braces }
		{
			in:   "hello.yaml",
			want: "hello.yaml.cni.injected",
			setFlags: []string{
				"components.cni.enabled=true",
				\`values.global.proxy.excludeIPRanges=10.96.0.2/24,10.96.0.3/24\`,
			},
		},
		{
			in:   "gateway.yaml",
			want: "gateway.yaml.injected",
		},
		{
			in:   "gateway.yaml",
			want: "gateway.yaml.injected",
		},
		{
			in:   "native.yaml",
			want: "native.yaml.injected",
		},
		{
			in:   "native.yaml",
			want: "native.yaml.injected",
			setup: func(t test.Failer) {
				test.SetForTest(t, &features.EnableNativeSidecars, features.NativeSidecarModeDisabled)
			},
		},
		{
			in:            "bad.yaml",
			expectedError: "includeipranges",
		},
		{
			in:   "hello.yaml",
			want: "hello-tproxy.yaml.injected",
			mesh: func(m *meshapi.MeshConfig) {
				m.DefaultConfig.InterceptionMode = meshapi.ProxyConfig_TPROXY
			},
			skipWebhook: true,
		},
	}
	nodes := KubeletVersion: "v1.33.0"
}`;

t.test('the TestInjection case table is read from Go source', async (t) => {
  const cases = parseCaseTable(GO);
  t.equal(cases.length, 7, "only TestInjection's table");
  t.same(cases[0], {
    in: 'hello.yaml',
    want: 'hello.yaml.cni.injected',
    setFlags: ['components.cni.enabled=true', 'values.global.proxy.excludeIPRanges=10.96.0.2/24,10.96.0.3/24'],
  });
  t.equal(cases[6].mesh, 'func { m.DefaultConfig.InterceptionMode = meshapi.ProxyConfig_TPROXY }');
  t.equal(cases[6].skipWebhook, true);
  t.throws(
    () => parseCaseTable('func TestInjection(t *testing.T) { cases := []testCase{ { in: someVar } } }'),
    /unsupported value/,
  );
  t.throws(() => parseCaseTable('package inject'), /no func TestInjection/);
});

t.test('cases: names, duplicates, native sidecars, auto-discovered goldens', async (t) => {
  const files = [
    'bad.yaml',
    'extra.yaml',
    'extra.yaml.injected',
    'gateway.yaml',
    'hello.yaml',
    'hello.yaml.injected',
    'x.iop.yaml',
    'ready_live.yaml',
  ];
  const list = listCases(GO, files, 30);
  const names = list.cases.map(
    (k: { name: string; excluded?: string }) => `${k.name}${k.excluded ? ' (excluded)' : ''}`,
  );
  t.same(names, [
    'hello-cni',
    'gateway',
    'gateway (excluded)',
    'native',
    'native-native-off',
    'bad',
    'hello-tproxy',
    'extra',
    'hello',
    'ready-live',
  ]);
  t.equal(list.explicit, 7);
  t.equal(list.auto, 3, 'inputs without a table row, not IOP files');
  const byName = Object.fromEntries(list.cases.map((k: { name: string }) => [k.name, k]));
  t.equal(byName.native.facts.native, true, '1.28+: auto with kubelet >= 1.33 nodes is on');
  t.equal(byName['native-native-off'].facts.native, false);
  t.same(byName['hello-tproxy'].facts.meshDelta, { defaultConfig: { interceptionMode: 'TPROXY' } });
  t.equal(caseName({ in: 'x.yaml', want: 'hello.proxyHoldsApplication.yaml.injected' }), 'hello-proxyHoldsApplication');
  t.throws(
    () =>
      listCases(
        GO.replace('InterceptionMode = meshapi.ProxyConfig_TPROXY', 'InterceptionMode = meshapi.ProxyConfig_REDIRECT'),
        files,
        30,
      ),
    /unknown mesh func .*add it to MESH_FUNCS/,
  );
  t.throws(() => listCases(GO.replace('v1.33.0', 'v1.28.0'), files, 30), /native sidecar default unknown/);
  t.equal(
    listCases(
      GO.replace(
        /\t\t\{\n\t\t\tin: {3}"native.yaml",\n\t\t\twant: "native.yaml.injected",\n\t\t\tsetup[\s\S]*?\n\t\t\},\n/,
        '',
      ),
      files,
      26,
    ).cases.find((k: { name: string }) => k.name === 'native').facts.native,
    false,
    '1.26: off by default',
  );
});

t.test('operator --set values and the chart merge', async (t) => {
  t.equal(parseFlagValue('0'), 0);
  t.equal(parseFlagValue('true'), true);
  t.equal(parseFlagValue('1.5'), 1.5);
  t.equal(parseFlagValue('127.0.0.1/24,10.96.0.1/24'), '127.0.0.1/24,10.96.0.1/24');
  t.equal(parseFlagValue('a\\,b'), 'a,b');
  const m: Record<string, unknown> = {};
  setPath(m, 'spec.values.global.tag=007');
  setPath(m, 'spec.values.global.proxy.statusPort=0');
  t.same(m, { spec: { values: { global: { tag: '007', proxy: { statusPort: 0 } } } } }, 'tags stay strings');
  t.throws(() => setPath(m, 'spec.values.list[0].a=1'), /unsupported --set path/);
  t.same(
    mergeOverwrite({ r: { cpu: '1', mem: '2' }, l: [1, 2], keep: 1 }, { r: { cpu: null }, l: [3] }),
    { r: { cpu: null, mem: '2' }, l: [3], keep: 1 },
    'null overwrites, lists replace',
  );
  t.throws(() => injectorShape('config: |-\n  policy: enabled\n'), /changed shape/);
});

t.test('emitted YAML parses back to the same data', async (t) => {
  const data = {
    a: 'x: "y"',
    b: 'line\n  indented\n',
    c: 'no newline\nat end',
    d: 'two\n\n',
    e: [],
    f: {},
    g: [{ h: 1, i: [true, null] }, 'z'],
    'k/x.y': 2.5,
    'needs quote': 'q',
  };
  t.same(parse(toYamlText(data)), data);
});

t.test("shared templates: merged under the case's own, never read from outside the corpus", async (t) => {
  const tmp = makeTempDir('shared');
  t.teardown(tmp.cleanup);
  const dir = join(tmp.dir, 'rel/cases/c');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(tmp.dir, 'rel/shared-templates.yaml'),
    'templates:\n  sidecar: "shared sidecar"\n  gateway: "shared gateway"\n',
  );
  writeFileSync(
    join(dir, 'fn-config.yaml'),
    'spec:\n  istio:\n    injectorConfig:\n      templates:\n        gateway: "own gateway"\n',
  );
  const fc = parse(caseFnConfig(dir, { sharedTemplates: '../../shared-templates.yaml' })) as {
    spec: { istio: { injectorConfig: { templates: Record<string, string> } } };
  };
  t.same(fc.spec.istio.injectorConfig.templates, { sidecar: 'shared sidecar', gateway: 'own gateway' });
  writeFileSync(join(tmp.dir, 'secret.yaml'), 'templates: {x: y}\n');
  t.throws(() => caseFnConfig(dir, { sharedTemplates: '../../../secret.yaml' }), /inside the corpus/);
  t.equal(
    caseFnConfig(dir, {}),
    readFileSync(join(dir, 'fn-config.yaml'), 'utf8'),
    'no sharedTemplates: the file as it is',
  );
});

t.test(
  'the release corpora of the test data agree with their corpus.json and SOURCE.md',
  needs(VERSIONS),
  async (t) => {
    for (const release of readdirSync(versionsRoot, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)) {
      const dir = join(versionsRoot, release);
      const corpus = JSON.parse(readFileSync(join(dir, 'corpus.json'), 'utf8')) as {
        tag: string;
        cases: string[];
        written: number;
        commit: string;
      };
      t.equal(corpus.tag, release, `${release}: tag`);
      t.same(
        readdirSync(join(dir, 'cases')).sort(),
        [...corpus.cases].sort(),
        `${release}: the case directories are corpus.json's cases`,
      );
      t.equal(corpus.cases.length, corpus.written);
      const sourceFile = existsSync(join(dir, 'SOURCE.md')) ? join(dir, 'SOURCE.md') : join(versionsRoot, 'README.md');
      const source = readFileSync(sourceFile, 'utf8');
      t.ok(
        source.includes(release),
        `${release}: ${sourceFile.endsWith('SOURCE.md') ? 'its SOURCE.md' : 'the corpora README'} describes it`,
      );
      if (sourceFile.endsWith('SOURCE.md'))
        t.ok(
          source.includes(corpus.commit) && source.includes('Apache-2.0'),
          `${release}: SOURCE.md names the commit and the license`,
        );
      for (const c of corpus.cases) {
        const caseYaml = parse(readFileSync(join(dir, 'cases', c, 'case.yaml'), 'utf8')) as {
          sharedTemplates?: string;
          istioTag: string;
        };
        if (caseYaml.istioTag !== release) t.fail(`${release}/${c}: istioTag ${caseYaml.istioTag}`);
        if (caseYaml.sharedTemplates && !existsSync(join(dir, 'cases', c, caseYaml.sharedTemplates)))
          t.fail(`${release}/${c}: ${caseYaml.sharedTemplates} missing`);
      }
    }
  },
);
