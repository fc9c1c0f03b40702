// End to end: the kuma example package (examples/kuma) rendered by the real `kpt fn render --allow-exec` with
// bin/meshinject.js as an `exec:` mutator, against the CLI run on the same resources; then the package
// uninjected under kpt (spec.mode: uninject) gives the files back. kpt re-serialises the files it reads, so
// the rendered objects are compared as data; the injection itself is asserted field by field from Kuma's
// injector (injector.go, containers/factory.go, probes/ at kumahq/kuma 348b6528) and kuma-cp's defaults.
import t from 'tap';
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../src/run.ts';
import { BIN, ROOT, get, makeTempDir, runTool, type Obj } from '../helpers/e2e.ts';

const PKG = join(ROOT, 'examples/kuma');

function objects(dir: string): Map<string, Obj> {
  const out = new Map<string, Obj>();
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      const o = doc.toJS() as Obj;
      out.set(`${String(o.kind)}/${String(get(o, 'metadata', 'name'))}`, o);
    }
  }
  return out;
}

const files = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'));

t.test(
  'examples/kuma: kpt fn render injects kuma-sidecar as the CLI does; a second render changes nothing; uninject restores',
  async (t) => {
    const tmp = makeTempDir('kuma-kpt');
    t.teardown(tmp.cleanup);
    const dir = join(tmp.dir, 'pkg');
    cpSync(PKG, dir, { recursive: true });
    writeFileSync(
      join(dir, 'Kptfile'),
      readFileSync(join(dir, 'Kptfile'), 'utf8').replace(/- exec: .*/, `- exec: ${BIN}`),
    );
    const first = runTool('kpt', ['fn', 'render', dir, '--allow-exec']);
    t.equal(first.status, 0, `kpt fn render: ${first.stderr}`);
    t.match(first.stderr, /\[PASS\] ".*meshinject\.js"/);
    const rendered = objects(dir);

    const items = [...objects(PKG).values()].filter(
      (o) => get(o, 'metadata', 'annotations', 'config.kubernetes.io/local-config') !== 'true',
    );
    const list = {
      apiVersion: 'config.kubernetes.io/v1',
      kind: 'ResourceList',
      items,
      functionConfig: parse(readFileSync(join(PKG, 'injection.yaml'), 'utf8')),
    };
    const cli = run(JSON.stringify(list));
    t.equal(cli.exitCode, 0, cli.stderr);
    const fromCli = new Map(
      ((parse(cli.stdout) as Obj).items as Obj[]).map((o) => [
        `${String(o.kind)}/${String(get(o, 'metadata', 'name'))}`,
        o,
      ]),
    );
    for (const [id, o] of fromCli) t.same(rendered.get(id)?.spec, o.spec, `${id}: kpt and the CLI write the same spec`);

    const tpl = get(rendered.get('Deployment/demo-app')!, 'spec', 'template') as Obj;
    t.same(
      (get(tpl, 'spec', 'initContainers') as Obj[]).map((c) => c.name),
      ['kuma-init', 'kuma-sidecar'],
      'native sidecars: kuma-init, then kuma-sidecar',
    );
    t.same(
      (get(tpl, 'spec', 'containers') as Obj[]).map((c) => c.name),
      ['demo-app'],
    );
    const sidecar = get(tpl, 'spec', 'initContainers', 1) as Obj;
    t.equal(sidecar.image, 'kuma/kuma-dp:2.12.0', 'the image from the pasted kuma-cp config');
    t.equal(sidecar.restartPolicy, 'Always');
    t.same(
      sidecar.args,
      [
        'run',
        '--log-level=info',
        '--concurrency=2',
        '--transparent-proxy-config=/tmp/transparent-proxy/base/config.yaml',
      ],
      '1000m: at least 2',
    );
    t.same(
      get(sidecar, 'resources', 'requests'),
      { cpu: '50m', memory: '64Mi', 'ephemeral-storage': '50M' },
      "requests: kuma-cp's defaults under the pasted limits",
    );
    t.same(
      get(tpl, 'spec', 'containers', 0, 'readinessProbe', 'httpGet'),
      { path: '/5000/health', port: 9001, httpHeaders: [{ name: 'X-Kuma-Probes-Timeout', value: '3' }] },
      'the probe goes through the probe proxy (default port 9001)',
    );
    t.same(
      get(rendered.get('Deployment/redis')!, 'spec', 'template', 'spec', 'containers', 0, 'livenessProbe'),
      { httpGet: { path: '/tcp/6379', port: 9001 } },
      'TCP probe: /tcp/<port>',
    );
    t.equal(get(tpl, 'metadata', 'labels', 'kuma.io/mesh'), 'default');
    t.match(
      String(get(tpl, 'metadata', 'annotations', 'traffic.kuma.io/transparent-proxy-config')),
      /^ {2}dns:\n {4}captureAll: false\n {4}enabled: true\n {4}port: 15053\n/m,
      'DNS redirect on (ConfigMap) to the builtin DNS port (kuma-cp default)',
    );
    t.equal(
      get(rendered.get('Deployment/demo-app')!, 'metadata', 'annotations', 'meshinject.dev/injection'),
      'injected (kuma, mesh default, native sidecar)',
    );
    t.equal(
      get(rendered.get('Job/seed-redis')!, 'metadata', 'annotations', 'meshinject.dev/injection'),
      'skipped (pod-label-disabled)',
    );

    const before = files(dir);
    const second = runTool('kpt', ['fn', 'render', dir, '--allow-exec']);
    t.equal(second.status, 0, second.stderr);
    t.same(files(dir), before, 'rendering the rendered package again changes no byte');

    // Uninject under kpt: the same config with spec.mode: uninject and no result annotations on either run.
    const pristine = join(tmp.dir, 'pristine');
    cpSync(PKG, pristine, { recursive: true });
    for (const d of [pristine]) {
      writeFileSync(
        join(d, 'Kptfile'),
        readFileSync(join(d, 'Kptfile'), 'utf8').replace(/- exec: .*/, `- exec: ${BIN}`),
      );
      writeFileSync(
        join(d, 'injection.yaml'),
        readFileSync(join(d, 'injection.yaml'), 'utf8').replace(
          '  mesh: kuma\n',
          '  mesh: kuma\n  resultAnnotations: false\n',
        ),
      );
    }
    const original = files(pristine);
    t.equal(runTool('kpt', ['fn', 'render', pristine, '--allow-exec']).status, 0, 'inject');
    t.not(files(pristine).join(''), original.join(''), 'the package is injected');
    writeFileSync(
      join(pristine, 'injection.yaml'),
      readFileSync(join(pristine, 'injection.yaml'), 'utf8').replace(
        '  mesh: kuma\n',
        '  mesh: kuma\n  mode: uninject\n',
      ),
    );
    const un = runTool('kpt', ['fn', 'render', pristine, '--allow-exec']);
    t.equal(un.status, 0, un.stderr);
    const restored = files(pristine);
    const manifests = (list: string[]) => list.filter((f) => !/kind: SidecarInjection/.test(f));
    t.same(manifests(restored), manifests(original), 'uninject gives the package files back byte for byte');
  },
);
