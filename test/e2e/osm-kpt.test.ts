// End to end: the osm example package (examples/osm) rendered by the real `kpt fn render --allow-exec` with
// bin/meshinject.js as an `exec:` mutator, against the CLI run on the same resources. kpt re-serialises the
// files it reads, so the rendered objects are compared as data with what `run()` (src/run.ts) writes for the
// same ResourceList; the expected injection itself is asserted field by field from peers.md §2.1.
import t from 'tap';
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { run } from '../../src/run.ts';
import { BIN, ROOT, get, makeTempDir, runTool, type Obj } from '../helpers/e2e.ts';

const PKG = join(ROOT, 'examples/osm');

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

t.test(
  'examples/osm: kpt fn render injects the osm sidecar as the CLI does, and a second render changes nothing',
  async (t) => {
    const tmp = makeTempDir('osm-kpt');
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

    // The same resources through the CLI entry point, as one ResourceList.
    const items = [...objects(PKG).values()].filter(
      (o) => get(o, 'metadata', 'annotations', 'config.kubernetes.io/local-config') !== 'true',
    );
    const list = {
      apiVersion: 'config.kubernetes.io/v1',
      kind: 'ResourceList',
      items,
      functionConfig: parse(readFileSync(join(PKG, 'mesh.yaml'), 'utf8')),
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

    const web = rendered.get('Deployment/bookstore')!;
    const tpl = get(web, 'spec', 'template') as Obj;
    const names = (get(tpl, 'spec', 'containers') as Obj[]).map((c) => c.name);
    t.same(
      names,
      ['bookstore', 'osm-healthcheck', 'envoy'],
      'TCP readiness probe: osm-healthcheck; then the Envoy sidecar',
    );
    t.same(
      (get(tpl, 'spec', 'initContainers') as Obj[]).map((c) => c.name),
      ['osm-init'],
    );
    const script = String((get(tpl, 'spec', 'initContainers', 0, 'args') as string[])[1]);
    t.match(
      script,
      /-A OSM_PROXY_OUTBOUND -d 169\.254\.169\.254\/32 -j RETURN\n-A OSM_PROXY_OUTBOUND -p tcp --match multiport --dports 3306 -j RETURN\n/,
    );
    t.same(get(tpl, 'spec', 'containers', 0, 'livenessProbe'), {
      httpGet: { path: '/osm-liveness-probe/bookstore', port: 15901 },
    });
    t.same(get(tpl, 'spec', 'containers', 2, 'args'), [
      '--log-level',
      'error',
      '--config-path',
      '/etc/envoy/bootstrap.yaml',
      '--service-cluster',
      'bookstore.bookstore',
    ]);
    t.equal(
      get(tpl, 'metadata', 'annotations', 'prometheus.io/port'),
      '15010',
      'namespace has openservicemesh.io/metrics: enabled',
    );
    const uuid = String(get(tpl, 'metadata', 'labels', 'osm-proxy-uuid'));
    t.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a version-5 UUID');
    t.same(get(tpl, 'spec', 'volumes'), [
      { name: 'envoy-bootstrap-config-volume', secret: { secretName: `envoy-bootstrap-config-${uuid}` } },
    ]);
    t.equal(get(web, 'metadata', 'annotations', 'meshinject.dev/injection'), 'injected (osm, envoy)');
    t.equal(
      get(rendered.get('Deployment/bookwarehouse-migrate')!, 'metadata', 'annotations', 'meshinject.dev/injection'),
      'skipped (pod-annotation-disabled)',
    );
    t.match(
      cli.stdout,
      /the cluster must provide Secret bookstore\/envoy-bootstrap-config-/,
      'the result says what the cluster must provide',
    );

    const before = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
    const second = runTool('kpt', ['fn', 'render', dir, '--allow-exec']);
    t.equal(second.status, 0, second.stderr);
    const after = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
    t.same(after, before, 'rendering the rendered package again changes no byte');
  },
);
