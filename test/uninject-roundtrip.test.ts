/**
 * Uninject after inject gives back the input: for every case of the Istio corpus (../shared/conformance/istio)
 * and every example input, with the case's own functionConfig (`resultAnnotations: false`), then the same
 * config with `mode: uninject`.
 * - Byte for byte where meshinject's own injection was the only change (a stream's final newline aside).
 * - Where Istio's records lose the user's spelling, the output must equal the input once exactly these
 *   documented losses are applied to the input, and each such case must need one of them:
 *   a named probe port comes back as its number (ISTIO_KUBE_APP_PROBERS keeps the resolved port); a TCP or
 *   gRPC probe handler comes back at the end of its probe (key order only: the data compare ignores it); a
 *   customised `istio-proxy`/`istio-init` comes back from `proxy.istio.io/overrides` in Go's encoding
 *   (key order, canonical quantities, `resources: {}`, comments dropped; with platform openshift without a
 *   runAsUser equal to the app's, which Istio drops before recording).
 * - An input that was already injected: uninject(inject(x)) equals uninject(x), byte for byte.
 * - The proxyless gRPC templates patch the app containers themselves: uninject refuses them with an error.
 */
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse, stringify } from 'yaml';
import { run } from '../src/index.ts';
import { canonicalQuantity } from '../src/drivers/istio/quantity.ts';

const SHARED = fileURLToPath(new URL('../../shared/', import.meta.url));
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CASES = `${SHARED}conformance/istio/cases`;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function configs(fnConfig: string): { inject: string; uninject: string } {
  const fc = parse(fnConfig) as Obj;
  const spec = { ...(isObj(fc.spec) ? fc.spec : {}), resultAnnotations: false };
  return { inject: stringify({ ...fc, spec }), uninject: stringify({ ...fc, spec: { ...spec, mode: 'uninject' } }) };
}

function docs(text: string): unknown[] {
  return parseAllDocuments(text).map((d) => d.toJS()).filter((x) => x !== null && x !== undefined);
}

/** Every pod spec of a parsed document (Deployment-like templates, CronJob job templates, Pods, Lists). */
function podSpecs(doc: unknown): Obj[] {
  if (!isObj(doc)) return [];
  if (Array.isArray(doc.items)) return doc.items.flatMap(podSpecs);
  const spec = isObj(doc.spec) ? doc.spec : {};
  if (doc.kind === 'Pod') return [spec];
  const jt = isObj(spec.jobTemplate) && isObj(spec.jobTemplate.spec) ? spec.jobTemplate.spec : spec;
  const tmpl = isObj(jt.template) ? jt.template : undefined;
  return tmpl && isObj(tmpl.spec) ? [tmpl.spec] : [];
}

const containersOf = (spec: Obj): Obj[] =>
  [...(Array.isArray(spec.initContainers) ? spec.initContainers : []), ...(Array.isArray(spec.containers) ? spec.containers : [])].filter(isObj);

/** The documented loss 1, in place: named probe and hook ports resolved to the container's port number. */
function resolveNamedProbePorts(doc: unknown): boolean {
  let changed = false;
  for (const spec of podSpecs(doc)) {
    for (const c of containersOf(spec)) {
      const ports = (Array.isArray(c.ports) ? c.ports : []).filter(isObj);
      const handlers = [c.readinessProbe, c.livenessProbe, c.startupProbe, ...(isObj(c.lifecycle) ? [c.lifecycle.preStop, c.lifecycle.postStart] : [])];
      for (const h of handlers) {
        if (!isObj(h)) continue;
        for (const kind of ['httpGet', 'tcpSocket']) {
          const a = h[kind];
          if (!isObj(a) || typeof a.port !== 'string') continue;
          const p = ports.find((x) => x.name === a.port);
          if (p) {
            a.port = p.containerPort;
            changed = true;
          }
        }
      }
    }
  }
  return changed;
}

/** The documented loss 3 (key order only; no data change): a TCP or gRPC probe or hook the injection rewrote. */
function hasMovedHandler(doc: unknown): boolean {
  return podSpecs(doc).some((spec) => containersOf(spec).some((c) =>
    [c.readinessProbe, c.livenessProbe, c.startupProbe, ...(isObj(c.lifecycle) ? [c.lifecycle.preStop, c.lifecycle.postStart] : [])]
      .some((h) => isObj(h) && (isObj(h.tcpSocket) || isObj(h.grpc)))));
}

/** The documented loss 2, in place: customised injected-name containers as Go encodes them (quantities, no empty resources). */
function goEncodeOverrides(doc: unknown): boolean {
  let changed = false;
  for (const spec of podSpecs(doc)) {
    for (const c of containersOf(spec)) {
      if (!['istio-proxy', 'istio-init', 'istio-validation'].includes(String(c.name))) continue;
      changed = true;
      // platform openshift: Istio drops a customised proxy's runAsUser/runAsGroup equal to the app's before recording it
      const sc = isObj(c.securityContext) ? c.securityContext : undefined;
      const appUser = containersOf(spec).find((o) => o !== c && isObj(o.securityContext) && o.securityContext.runAsUser !== undefined);
      if (c.name === 'istio-proxy' && sc && appUser && (appUser.securityContext as Obj).runAsUser === sc.runAsUser) {
        delete sc.runAsUser;
        delete sc.runAsGroup;
      }
      if (isObj(c.resources)) {
        if (Object.keys(c.resources).length === 0) delete c.resources;
        for (const k of ['limits', 'requests']) {
          const m = c.resources?.[k as never] as Obj | undefined;
          if (isObj(m)) for (const [n, q] of Object.entries(m)) if (typeof q === 'string' || typeof q === 'number') m[n] = canonicalQuantity(q) ?? q;
        }
      }
    }
  }
  return changed;
}

interface Trip {
  name: string;
  input: string;
  fnConfig: string;
}

function roundTrip(t: Test, c: Trip): 'bytes' | 'documented-loss' | 'refused' {
  const cfg = configs(c.fnConfig);
  const injected = run(c.input, { functionConfig: cfg.inject });
  t.equal(injected.exitCode, 0, `${c.name}: inject succeeds`);
  const un = run(injected.stdout, { functionConfig: cfg.uninject });
  if (un.exitCode !== 0) return 'refused';
  const uninjectedResults = un.results.filter((r) => r.tags?.['meshinject.dev/outcome'] === 'uninjected');
  if (/sidecar\.istio\.io\/status/.test(c.input)) {
    const direct = run(c.input, { functionConfig: cfg.uninject });
    t.equal(un.stdout, direct.stdout, `${c.name}: already injected input: uninject(inject(x)) = uninject(x)`);
    return 'bytes';
  }
  t.ok(uninjectedResults.length > 0 || injected.stdout === c.input, `${c.name}: some workload reported uninjected`);
  const withNewline = c.input.endsWith('\n') ? c.input : `${c.input}\n`;
  if (un.stdout === c.input || un.stdout === withNewline) return 'bytes';
  const want = docs(c.input);
  const got = docs(un.stdout);
  const lossy = want.map((d) => [hasMovedHandler(d), resolveNamedProbePorts(d), goEncodeOverrides(d)].some(Boolean)).some(Boolean);
  t.ok(lossy, `${c.name}: bytes differ only where the input has a TCP/gRPC probe, a named probe port or a customised injected container`);
  got.forEach(goEncodeOverrides);
  t.same(got, want, `${c.name}: equal to the input once the documented losses are applied`);
  return 'documented-loss';
}

t.test('Istio corpus: uninject after inject gives back the input', async (t) => {
  const counts = { bytes: 0, 'documented-loss': 0, refused: 0 };
  const refused: string[] = [];
  for (const name of readdirSync(CASES).sort()) {
    const dir = `${CASES}/${name}`;
    if (!existsSync(`${dir}/expected.yaml`)) continue;
    const category = String((parse(readFileSync(`${dir}/case.yaml`, 'utf8')) as Obj).category ?? '');
    if (category === 'go-template') continue; // user templates written in Go text/template: not injected at all
    const outcome = roundTrip(t, { name, input: readFileSync(`${dir}/input.yaml`, 'utf8'), fnConfig: readFileSync(`${dir}/fn-config.yaml`, 'utf8') });
    counts[outcome]++;
    if (outcome === 'refused') refused.push(name);
  }
  t.comment(`round trips: ${JSON.stringify(counts)}`);
  t.same(refused, ['grpc-agent', 'grpc-simple'], 'only the proxyless gRPC templates (which patch app containers) are refused');
  t.ok(counts.bytes >= 73, `byte-identical round trips: ${counts.bytes} (documented losses ${counts['documented-loss']})`);
});

t.test('proxyless gRPC: uninject refuses, naming the status annotation and the app container', async (t) => {
  const dir = `${CASES}/grpc-simple`;
  const cfg = configs(readFileSync(`${dir}/fn-config.yaml`, 'utf8'));
  const injected = run(readFileSync(`${dir}/input.yaml`, 'utf8'), { functionConfig: cfg.inject });
  const un = run(injected.stdout, { functionConfig: cfg.uninject });
  t.equal(un.exitCode, 1);
  const err = un.results.find((r) => r.severity === 'error');
  t.match(err?.message, /sidecar\.istio\.io\/status lists container "traffic" as injected/);
  t.equal(err?.field?.path, 'spec.template.metadata.annotations[sidecar.istio.io/status]');
});

t.test('examples: uninject after inject gives back the input', async (t) => {
  const ex = (f: string) => readFileSync(`${ROOT}examples/${f}`, 'utf8');
  const stream = (...files: string[]) => files.map((f) => ex(f).replace(/\n*$/, '\n')).join('---\n');
  const plain = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: defaults}\n';
  const trips: Trip[] = [
    { name: 'shop', input: stream('shop/namespaces.yaml', 'shop/storefront.yaml', 'shop/data.yaml', 'shop/ops.yaml', 'shop/backoffice.yaml'), fnConfig: ex('shop/injection.yaml') },
    { name: 'meshinject-simple', input: ex('meshinject-simple/catalog.yaml'), fnConfig: ex('meshinject-simple/injection.yaml') },
    { name: 'meshinject-exec', input: ex('meshinject-exec/batch.yaml'), fnConfig: ex('meshinject-exec/injection.yaml') },
    { name: 'meshinject-imperative', input: ex('meshinject-imperative/workloads.yaml'), fnConfig: plain },
    { name: 'custom', input: stream('custom/app.yaml', 'custom/log-shipper-templates.yaml'), fnConfig: ex('custom/injection.yaml') },
  ];
  // shop's storefront probe uses the named port `http`: it comes back as 8080 (documented loss 1).
  for (const trip of trips) t.equal(roundTrip(t, trip), trip.name === 'shop' ? 'documented-loss' : 'bytes', `${trip.name}: byte for byte, or the one documented loss`);
});
