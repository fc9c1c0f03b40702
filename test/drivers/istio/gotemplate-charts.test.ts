import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { istioFuncMap } from '../../../src/drivers/istio/go-funcs.ts';
import { sidecarTemplateData } from '../../../src/drivers/istio/go-model.ts';
import { istioMinor } from '../../../src/drivers/istio/template-sources.ts';
import { GoTemplate } from '../../../src/render/gotemplate/index.ts';
import type { JsonObject } from '../../../src/model.ts';
import { mergeValues } from '../../../src/drivers/istio/defaults.ts';
import { corpus, needs } from '../../helpers/data.ts';

// Every injection template of Istio's chart, parsed and executed on a sample pod. The 1.26.0 templates come from
// the release corpus of the test data (test/helpers/data.ts); the other releases (1.18-1.31) from a local clone of istio/istio, only when
// ISTIO_REPO names its git directory (read with `git show <tag>:<path>`; a tag the clone lacks is skipped). The
// clone is opt-in: it is not part of the project or of the test data, so CI does not depend on what one machine has.
const RELEASE_126 = corpus('conformance/istio-versions/1.26.0/cases/hello/fn-config.yaml');
const istio = (
  parse(
    RELEASE_126.path
      ? readFileSync(RELEASE_126.path, 'utf8')
      : 'spec: {istio: {values: {}, meshConfig: {}, injectorConfig: {templates: {}}}}',
  ) as {
    spec: {
      istio: { values: JsonObject; meshConfig: JsonObject; injectorConfig: { templates: Record<string, string> } };
    };
  }
).spec.istio;

/** Templates the injector runs with SidecarTemplateData; waypoint/kube-gateway/agentgateway belong to the gateway controller. */
const INJECTOR_TEMPLATES = new Set([
  'sidecar',
  'gateway',
  'grpc-simple',
  'grpc-agent',
  'injection-template',
  'gateway-injection-template',
]);

function sampleData(annotations: Record<string, string> = {}, values: JsonObject = istio.values) {
  return sidecarTemplateData({
    typeMeta: { kind: 'Deployment', apiVersion: 'apps/v1' },
    deploymentMeta: { name: 'hello', namespace: 'default' },
    pod: {
      metadata: { labels: { app: 'hello', version: 'v1' }, annotations },
      spec: {
        containers: [
          {
            name: 'hello',
            image: 'fake.docker.io/hello:1.0',
            ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
            readinessProbe: { httpGet: { port: 80 } },
          },
          { name: 'world', image: 'fake.docker.io/world:1.0' },
        ],
      },
    },
    proxyConfig: { ...(istio.meshConfig.defaultConfig as JsonObject), proxyMetadata: { FOO: 'bar' } },
    meshConfig: istio.meshConfig,
    values,
    revision: '',
    nativeSidecars: false,
    proxyImage: 'gcr.io/istio-testing/proxyv2:latest',
    proxyInitImage: 'gcr.io/istio-testing/proxyv2:latest',
    proxyUID: 1337,
    proxyGID: 1337,
    inboundTrafficPolicyMode: 'passthrough',
    compliancePolicy: '',
  });
}

const ANNOTATED = {
  'sidecar.istio.io/proxyCPU': '200m',
  'sidecar.istio.io/userVolume': '{"v1":{"emptyDir":{}}}',
  'sidecar.istio.io/userVolumeMount': '{"v1":{"mountPath":"/v1"}}',
  'traffic.sidecar.istio.io/excludeInboundPorts': '81',
  'sidecar.istio.io/interceptionMode': 'TPROXY',
  'proxy.istio.io/config': '{}',
};

/**
 * Parses every template and executes the injector's ones on a plain and an annotated pod. With the release's
 * own complete injector values (`exactValues`), no value may be missing from the output.
 */
function checkRelease(
  t: Test,
  version: string,
  templates: Record<string, string>,
  values: JsonObject = istio.values,
  exactValues = true,
): void {
  const funcs = istioFuncMap({ minor: istioMinor(version) ?? 31, env: { ENABLE_NATIVE_SIDECARS: 'false' } });
  for (const [name, text] of Object.entries(templates)) {
    let tmpl: GoTemplate | undefined;
    t.doesNotThrow(() => {
      tmpl = GoTemplate.parse(name, text, funcs);
    }, `${version} ${name} parses`);
    if (!tmpl || !INJECTOR_TEMPLATES.has(name)) continue;
    for (const annotations of [{}, ANNOTATED]) {
      let out = '';
      t.doesNotThrow(
        () => {
          out = tmpl!.execute(sampleData(annotations, values));
        },
        `${version} ${name} executes${Object.keys(annotations).length ? ' (annotated pod)' : ''}`,
      );
      const doc = parse(out) as JsonObject | null;
      t.ok(doc && typeof doc === 'object' && 'spec' in doc, `${version} ${name} renders a pod fragment`);
      if (exactValues) t.notOk(out.includes('<no value>'), `${version} ${name}: no missing values printed`);
    }
  }
}

t.test('Istio 1.26.0 chart templates (release corpus) parse and execute', needs(RELEASE_126), async (t) => {
  checkRelease(t, '1.26.0', istio.injectorConfig.templates);
  const sidecar = GoTemplate.parse(
    'sidecar',
    istio.injectorConfig.templates.sidecar!,
    istioFuncMap({ minor: 26, env: { ENABLE_NATIVE_SIDECARS: 'true' } }),
  );
  const native = parse(sidecar.execute(sampleData())) as {
    spec: { initContainers: Array<{ name: string; restartPolicy?: string }> };
  };
  t.ok(
    native.spec.initContainers.some((c) => c.name === 'istio-proxy' && c.restartPolicy === 'Always'),
    'env ENABLE_NATIVE_SIDECARS=true moves the proxy to initContainers',
  );
  t.throws(
    () => sidecar.execute(sampleData({ 'sidecar.istio.io/userVolume': 'not json' })),
    /range can't iterate over \{\}/,
    'fromJSON of bad JSON gives "{}", which range refuses, as in Go',
  );
});

const repo = process.env.ISTIO_REPO ?? '';
const TAGS = [
  '1.18.0',
  '1.19.0',
  '1.20.0',
  '1.21.0',
  '1.22.0',
  '1.23.0',
  '1.24.0',
  '1.25.0',
  '1.26.0',
  '1.27.0',
  '1.28.0',
  '1.29.0',
  '1.30.0',
  '1.31.0-rc.0',
];
const FILES: Record<string, string> = {
  sidecar: 'injection-template.yaml',
  gateway: 'gateway-injection-template.yaml',
  'grpc-simple': 'grpc-simple.yaml',
  'grpc-agent': 'grpc-agent.yaml',
  waypoint: 'waypoint.yaml',
  'kube-gateway': 'kube-gateway.yaml',
};

t.test(
  'chart templates of Istio 1.18-1.31 (local istio/istio clone)',
  { skip: repo && existsSync(repo) ? false : 'set ISTIO_REPO to an istio/istio git directory to run this' },
  async (t) => {
    for (const tag of TAGS) {
      try {
        execFileSync('git', ['--git-dir', repo, 'rev-parse', '--verify', '--quiet', `${tag}^{commit}`], {
          stdio: 'ignore',
        });
      } catch {
        t.comment(`${repo} has no tag ${tag}: skipped`);
        continue;
      }
      const templates: Record<string, string> = {};
      for (const [name, file] of Object.entries(FILES)) {
        try {
          templates[name] = execFileSync(
            'git',
            ['--git-dir', repo, 'show', `${tag}:manifests/charts/istio-control/istio-discovery/files/${file}`],
            { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
          );
        } catch {
          // the file does not exist at this tag
        }
      }
      t.ok(templates.sidecar, `${tag} has a sidecar template`);
      // The 1.26.0 injector values with the tag's chart defaults merged on top (values.yaml; from 1.22 wrapped in
      // `_internal_defaults_do_not_set`), so that keys only an older chart has are present.
      const chart = parse(
        execFileSync(
          'git',
          ['--git-dir', repo, 'show', `${tag}:manifests/charts/istio-control/istio-discovery/values.yaml`],
          { encoding: 'utf8' },
        ),
      ) as JsonObject;
      const values = mergeValues(istio.values, (chart._internal_defaults_do_not_set ?? chart) as JsonObject);
      // Chart defaults lack keys the operator's global values used to supply (e.g. 1.21 `global.jwtPolicy`), which
      // then print `<no value>` as in Go: only parsing and execution are checked here.
      checkRelease(t, tag, templates, values, false);
    }
  },
);
