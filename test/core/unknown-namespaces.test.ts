/**
 * Issue #39, item 3: `spec.unknownNamespaces` (`warn` | `error` | `assume-selected`) decides what a workload in a
 * namespace whose labels are unknown (neither a Namespace in the input nor in `spec.namespaces`) gets, for
 * every driver, both functionConfig forms, with and without a namespaceSelector (property). A namespace whose
 * labels are known is decided as before whatever the setting.
 */
import t from 'tap';
import fc from 'fast-check';
import { run, type RunOutput } from '../../src/run.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';

const WEB = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
`;

/** The custom driver needs a template; the others need nothing. */
const CUSTOM_TEMPLATE = 'spec:\\n  containers:\\n  - {name: shipper, image: shipper:1}\\n';

type Setting = 'warn' | 'error' | 'assume-selected' | undefined;

interface Route {
  mesh: string;
  setting: Setting;
  form: 'SidecarInjection' | 'ConfigMap';
  /** A namespaceSelector the namespace's unknown labels cannot match. */
  selector: boolean;
  /** The namespace declared in spec.namespaces (SidecarInjection only), its labels matching the selector. */
  declared: boolean;
}

/** The functionConfig of a route: policy enabled, so that only namespace rules can skip the workload. */
function configOf(r: Route): string {
  if (r.form === 'ConfigMap') {
    const data = [
      `mesh: ${r.mesh}`,
      'policy: enabled',
      ...(r.setting ? [`unknownNamespaces: ${r.setting}`] : []),
      ...(r.selector ? ['namespaceSelector: mesh=on'] : []),
    ];
    if (r.mesh === 'custom') data.push('custom.templateConfigMaps: tpl');
    return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n${data.map((l) => `  ${l}\n`).join('')}`;
  }
  const spec = [
    `mesh: ${r.mesh}`,
    'policy: enabled',
    ...(r.setting ? [`unknownNamespaces: ${r.setting}`] : []),
    ...(r.selector ? ['namespaceSelector: {matchLabels: {mesh: "on"}}'] : []),
  ];
  if (r.declared) spec.push('namespaces: [{name: shop, labels: {mesh: "on"}}]');
  if (r.mesh === 'custom') spec.push(`custom: {templates: {sidecar: "${CUSTOM_TEMPLATE}"}}`);
  return `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec:\n${spec.map((l) => `  ${l}\n`).join('')}`;
}

/** The input of a route: the Deployment, and for the ConfigMap form of the custom driver its template ConfigMap. */
function inputOf(r: Route): string {
  if (r.mesh !== 'custom' || r.form !== 'ConfigMap') return WEB;
  return `${WEB}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tpl\n  namespace: shop\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata:\n  sidecar.hbs: "${CUSTOM_TEMPLATE}"\n`;
}

const outcomeOf = (out: RunOutput) =>
  out.results.find((x) => x.resourceRef?.name === 'web' && x.tags?.['meshinject.dev/outcome'])?.tags?.[
    'meshinject.dev/outcome'
  ];
const unknownNote = (out: RunOutput) =>
  out.results.find((x) => !x.resourceRef && /namespace shop is neither a Namespace object/.test(x.message));

const ROUTE = fc
  .record({
    mesh: fc.constantFrom(...DRIVERS.map((d) => d.name)),
    setting: fc.constantFrom<Setting>('warn', 'error', 'assume-selected', undefined),
    form: fc.constantFrom('SidecarInjection' as const, 'ConfigMap' as const),
    selector: fc.boolean(),
    declared: fc.boolean(),
  })
  .map((r): Route => ({ ...r, declared: r.declared && r.form === 'SidecarInjection' }));

t.test(
  'every driver, form and setting: warn skips with a warning, error fails, assume-selected injects (property)',
  async () => {
    fc.assert(
      fc.property(ROUTE, (r) => {
        const out = run(inputOf(r), { functionConfig: configOf(r) });
        const asWarn = run(inputOf(r), { functionConfig: configOf({ ...r, setting: 'warn' }) });
        const note = unknownNote(asWarn);
        if (r.declared) {
          // Known labels: the setting changes nothing.
          if (out.stdout !== asWarn.stdout || out.exitCode !== asWarn.exitCode)
            throw new Error('a declared namespace was decided by the setting');
          if (unknownNote(out)) throw new Error('a declared namespace reported as unknown');
          return;
        }
        if (r.selector && !note)
          throw new Error(
            `warn: no warning for the unknown namespace under a selector it cannot match (${outcomeOf(asWarn)})`,
          );
        if (note && note.severity !== 'warning') throw new Error('warn: the note is not a warning');
        if (r.setting === 'error') {
          if (note && (out.exitCode !== 1 || out.stdout !== '' || unknownNote(out)?.severity !== 'error'))
            throw new Error(`error: exit ${out.exitCode}, stdout ${out.stdout.length} characters`);
          if (!note && out.stdout !== asWarn.stdout) throw new Error('error: a run without unknown namespaces changed');
        } else if (r.setting === 'assume-selected') {
          if (out.exitCode !== 0 || outcomeOf(out) !== 'injected' || unknownNote(out))
            throw new Error(`assume-selected: exit ${out.exitCode}, outcome ${outcomeOf(out)}\n${out.stderr}`);
        } else if (out.stdout !== asWarn.stdout || out.exitCode !== 0) throw new Error('absent is not warn');
        if (r.selector && r.setting !== 'assume-selected' && outcomeOf(asWarn) === 'injected')
          throw new Error('warn: injected in a namespace the selector cannot match');
      }),
      { numRuns: 120 },
    );
  },
);

t.test('the trace says why: explain shows the assumed selection', async (t) => {
  const out = run(WEB, {
    functionConfig: configOf({
      mesh: 'istio',
      setting: 'assume-selected',
      form: 'SidecarInjection',
      selector: true,
      declared: false,
    }),
  });
  t.equal(outcomeOf(out), 'injected');
  const trace = out.workloads[0]!.decision!.trace.map((s) => s.saw).join('\n');
  t.match(
    trace,
    /namespace shop \(labels unknown: only kubernetes\.io\/metadata\.name=shop; assumed selected: spec\.unknownNamespaces\) matches mesh=on/,
  );
});

t.test('error names the namespace and what to do; an invalid value names the choices', async (t) => {
  const out = run(WEB, {
    functionConfig: configOf({
      mesh: 'istio',
      setting: 'error',
      form: 'SidecarInjection',
      selector: true,
      declared: false,
    }),
  });
  t.equal(out.exitCode, 1);
  t.match(
    out.stderr,
    /\[error\] namespace shop is neither a Namespace object in the input nor listed in spec\.namespaces; .*add it to spec\.namespaces with its labels, or set spec\.unknownNamespaces: warn or assume-selected/,
  );
  const bad = run(WEB, {
    functionConfig:
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec: {unknownNamespaces: ignore}\n',
  });
  t.equal(bad.exitCode, 1);
  t.match(bad.stderr, /spec\.unknownNamespaces must be one of warn, error, assume-selected; got "ignore"/);
});
