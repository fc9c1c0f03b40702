// `null` items of a `kind: List` (how a Go marshaller writes an empty RawExtension; Linkerd's
// inject_emojivoto_list_empty_resources) are kept and reported as `linkerd inject` reports them, `document
// missing "kind" field, skipped`, however the List reaches meshinject (issue #37, item 5): a file holding the
// List, a stream with the List and another document, the List as an item of a ResourceList on stdin (kpt, the
// conformance runner), a JSON List; for every driver. The routes are generated; expectations come from the route.
import t from 'tap';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { run } from '../../src/run.ts';

type Obj = Record<string, any>;

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop' },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `${name}:1` }] } },
  },
});

const CA = '"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"';
/** Per driver: a functionConfig spec injecting everything in namespace shop, and the container it adds. */
const DRIVERS: Record<string, { spec: string; proxy: string }> = {
  istio: { spec: '  mesh: istio\n', proxy: 'istio-proxy' },
  linkerd: {
    spec: `  mesh: linkerd\n  linkerd:\n    manual: true\n    values: {proxy: {nativeSidecar: false}, identityTrustAnchorsPEM: ${CA}}\n`,
    proxy: 'linkerd-proxy',
  },
  osm: {
    spec: '  mesh: osm\n  policy: enabled\n  namespaces: [{name: shop, labels: {openservicemesh.io/monitored-by: osm}}]\n',
    proxy: 'envoy',
  },
  kuma: {
    spec: `  mesh: kuma\n  namespaces: [{name: shop, labels: {kuma.io/sidecar-injection: enabled}}]\n  kuma:\n    controlPlane: {caCert: ${CA}}\n`,
    proxy: 'kuma-sidecar',
  },
  custom: {
    spec: '  mesh: custom\n  policy: enabled\n  custom:\n    templates:\n      sidecar: "spec:\\n  containers:\\n  - {name: shipper, image: shipper:1}\\n"\n',
    proxy: 'shipper',
  },
};
const config = (driver: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n  resultAnnotations: false\n${DRIVERS[driver]!.spec}`;

type Form = 'file' | 'stream' | 'resource-list' | 'json';
/** The List's items as YAML block text (`null` for an empty item). */
function listText(items: Array<string | null>, indent: string): string {
  const body = items
    .map((n) => (n === null ? `${indent}- null\n` : `${indent}- ${JSON.stringify(deployment(n))}\n`))
    .join('');
  return `apiVersion: v1\n${indent.slice(2)}kind: List\n${indent.slice(2)}metadata: {}\n${indent.slice(2)}items:\n${body}`;
}
/** The input of a route, and the functionConfig option (`undefined`: given inside the ResourceList). */
function input(form: Form, items: Array<string | null>, driver: string): { text: string; functionConfig?: string } {
  if (form === 'file') return { text: listText(items, '  '), functionConfig: config(driver) };
  if (form === 'stream')
    return {
      text: `${listText(items, '  ')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n`,
      functionConfig: config(driver),
    };
  if (form === 'json')
    return {
      text: `${JSON.stringify(
        {
          apiVersion: 'v1',
          kind: 'List',
          metadata: {},
          items: items.map((n) => (n === null ? null : deployment(n))),
        },
        null,
        2,
      )}\n`,
      functionConfig: config(driver),
    };
  const fnConfig = config(driver).replace(/^/gm, '  ').trimEnd();
  return {
    text: `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- ${listText(items, '    ').trimStart()}functionConfig:\n${fnConfig}\n`,
  };
}

/** Every Deployment of the output (any depth of List / ResourceList) with whether its pod has `proxy`. */
function injected(stdout: string, proxy: string): { names: string[]; nulls: number } {
  const out = { names: [] as string[], nulls: 0 };
  const walk = (o: any) => {
    if (o === null) return void out.nulls++;
    if (o.kind === 'List' || o.kind === 'ResourceList') return void (o.items ?? []).forEach(walk);
    if (o.kind === 'Deployment' && o.spec.template.spec.containers.some((c: Obj) => c.name === proxy))
      out.names.push(o.metadata.name);
  };
  for (const d of parseAllDocuments(stdout)) walk(d.toJS());
  return out;
}

t.test('null List items: kept and reported on every route, every driver; the other items injected', async (t) => {
  let routes = 0;
  const items = fc
    .array(fc.oneof(fc.constant(null), fc.constant('app')), { minLength: 1, maxLength: 5 })
    .map((xs) => xs.map((x, i) => (x === null ? null : `app${i}`)));
  fc.assert(
    fc.property(
      fc.constantFrom(...Object.keys(DRIVERS)),
      fc.constantFrom<Form>('file', 'stream', 'resource-list', 'json'),
      items,
      (driver, form, list) => {
        const { text, functionConfig } = input(form, list, driver);
        const out = run(text, functionConfig === undefined ? {} : { functionConfig });
        const route = `${driver} ${form} ${JSON.stringify(list)}`;
        if (out.exitCode !== 0)
          throw new Error(`${route}: exit ${out.exitCode}: ${out.results.map((r) => r.message).join('; ')}`);
        const nulls = list
          .map((n, i) => [n, i] as const)
          .filter(([n]) => n === null)
          .map(([, i]) => i);
        const reported = out.results.filter((r) => /document missing "kind" field, skipped/.test(r.message));
        if (reported.length !== nulls.length)
          throw new Error(`${route}: ${reported.length} reports, want ${nulls.length}`);
        nulls.forEach((i, k) => {
          if (!reported[k]!.message.includes(`items[${i}]: document missing "kind" field, skipped`))
            throw new Error(`${route}: report ${k} names items[${i}]: ${reported[k]!.message}`);
        });
        const seen = injected(out.stdout, DRIVERS[driver]!.proxy);
        const want = list.filter((n): n is string => n !== null);
        if (JSON.stringify(seen.names) !== JSON.stringify(want))
          throw new Error(`${route}: injected ${JSON.stringify(seen.names)}, want ${JSON.stringify(want)}`);
        if (seen.nulls !== nulls.length)
          throw new Error(`${route}: ${seen.nulls} null items in the output, want ${nulls.length}`);
        routes++;
      },
    ),
    { numRuns: 60 },
  );
  t.equal(routes, 60, `${routes} routes`);
});

t.test('an item that is neither a resource nor null is still bad input, on every route', async (t) => {
  for (const form of ['file', 'resource-list'] as const) {
    const { text, functionConfig } = input(form, ['a', null], 'linkerd');
    const bad = text.replace('- null', '- 42');
    const out = run(bad, functionConfig === undefined ? {} : { functionConfig });
    t.equal(out.exitCode, 2, `${form}: exit 2`);
    t.match(
      out.stderr + out.results.map((r) => r.message).join('\n'),
      /items\[1\]: a Kubernetes resource must be a mapping/,
      form,
    );
  }
});
