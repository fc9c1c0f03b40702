/**
 * A status record is proven by the configuration's own injection, not taken on trust (issue #37 item 3, issue
 * #8), for both template engines: Istio with a user Go template (`spec.istio.values.sidecarInjectorWebhook.templates`)
 * and the custom driver with a Handlebars template. For generated names and kinds (container, init container,
 * volume):
 * - a template of the configuration adds the item: inject then uninject gives back the input, byte for byte (the
 *   status lists a name no built-in Istio template gives, and uninject proves it by rendering the configuration);
 * - the user's own item of that name, listed by a forged status the configuration's injection does not give:
 *   uninject refuses with an error result naming the status annotation and the item, and writes nothing that
 *   drops the item; two workloads of one input with the same forged status are both refused.
 * Fixed seed (test/setup/property-seed.mjs).
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { run } from '../../src/index.ts';

type Obj = Record<string, any>;
type Kind = 'containers' | 'initContainers' | 'volumes';
type Engine = 'istio go-template' | 'custom handlebars';

const KINDS: readonly Kind[] = ['containers', 'initContainers', 'volumes'];

/** Names the built-in Istio templates or the test's app never use. */
const name = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,14}[a-z0-9]$/)
  .filter((n) => !n.startsWith('istio') && !['web', 'data', 'proxy'].includes(n));

/** The pod fragment adding `kind` named `n` (`{{...}}` spells the name through the engine). */
function fragment(engine: Engine, kind: Kind, n: string): string {
  const named = engine === 'istio go-template' ? `{{ printf "%s" "${n}" }}` : '{{values.n}}';
  const item = kind === 'volumes' ? `- name: ${named}\n    emptyDir: {}` : `- name: ${named}\n    image: busybox:1`;
  return `spec:\n  ${kind}:\n  ${item}\n`;
}

/** The functionConfig of `mode` whose template `extra` adds `kind` named `n`. */
function config(engine: Engine, kind: Kind, n: string, mode: string): string {
  const templates = { extra: fragment(engine, kind, n) };
  const spec =
    engine === 'istio go-template'
      ? { mesh: 'istio', istio: { values: { sidecarInjectorWebhook: { templates } } } }
      : { mesh: 'custom', custom: { templates: { sidecar: fragment(engine, kind, n) } } };
  if (engine === 'custom handlebars') Object.assign(spec.custom as Obj, { values: { n } });
  const full = { ...spec, policy: 'enabled', resultAnnotations: false, mode };
  return `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: t}\nspec: ${JSON.stringify(full)}\n`;
}

/** The app: the pod asks for the Istio templates `templates`; `own` is a user item of kind and name. */
function app(templates: string, own?: { kind: Kind; name: string; mounted: boolean }): string {
  const lines = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    '  namespace: shop',
    'spec:',
    '  template:',
    '    metadata:',
    '      annotations:',
    `        inject.istio.io/templates: ${templates}`,
    '    spec:',
  ];
  const item = (kind: Kind, n: string) =>
    kind === 'volumes'
      ? [`      - name: ${n}`, '        emptyDir: {}']
      : [`      - name: ${n}`, '        image: own:1'];
  if (own?.kind === 'initContainers') lines.push('      initContainers:', ...item('initContainers', own.name));
  lines.push('      containers:', ...item('containers', 'web'));
  if (own?.kind === 'volumes' && own.mounted)
    lines.push('        volumeMounts:', `        - name: ${own.name}`, '          mountPath: /own');
  if (own?.kind === 'containers') lines.push(...item('containers', own.name));
  if (own?.kind === 'volumes') lines.push('      volumes:', ...item('volumes', own.name));
  return `${lines.join('\n')}\n`;
}

const STATUS: Record<Engine, string> = {
  'istio go-template': 'sidecar.istio.io/status',
  'custom handlebars': 'meshinject.dev/custom-status',
};

/** `text` (one injected Deployment) with `n` added to the `kind` list of its status annotation. */
function forge(text: string, engine: Engine, kind: Kind, n: string): string {
  const pod = (parse(text) as Obj).spec.template;
  const raw = pod.metadata.annotations[STATUS[engine]] as string;
  const status = JSON.parse(raw) as Obj;
  status[kind] = [...((status[kind] as string[] | null) ?? []), n];
  const forged = JSON.stringify(status);
  const out = text.replace(`'${raw}'`, `'${forged}'`);
  if (out === text) throw new Error(`the test could not find the status annotation in the output:\n${text}`);
  return out;
}

const names = (list: unknown): string[] => ((list ?? []) as Obj[]).map((c) => c.name);

const route = fc.record({
  engine: fc.constantFrom<Engine>('istio go-template', 'custom handlebars'),
  kind: fc.constantFrom(...KINDS),
  name,
  withSidecar: fc.boolean(),
});

t.test('a name only the configuration adds: inject then uninject gives back the input', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(route, ({ engine, kind, name: n, withSidecar }) => {
      const input = app(withSidecar ? 'sidecar,extra' : 'extra');
      const injected = run(input, { functionConfig: config(engine, kind, n, 'inject') });
      if (injected.exitCode !== 0) return false;
      const pod = (parse(injected.stdout) as Obj).spec.template;
      if (!names(pod.spec[kind]).includes(n)) return false;
      if (!(JSON.parse(pod.metadata.annotations[STATUS[engine]]) as Obj)[kind]?.includes(n)) return false;
      const un = run(injected.stdout, { functionConfig: config(engine, kind, n, 'uninject') });
      runs++;
      return un.exitCode === 0 && un.stdout === input;
    }),
    { numRuns: 40 },
  );
  t.ok(runs >= 40, `${runs} round trips`);
});

t.test("a forged status naming the user's own item: refused, naming the annotation, the item kept", async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(
      route,
      fc.constantFrom(...KINDS),
      fc.boolean(),
      ({ engine, kind, name: n, withSidecar }, otherKind, m) => {
        // The configuration's template adds another name, so uninject does render it, and still finds no `n`.
        // A user volume that no container mounts: Istio refuses it too; the custom driver lets its record remove a
        // volume nothing mounts (a template change drops one, src/drivers/custom/uninject.ts), so only a mounted one.
        const own = { kind, name: n, mounted: m || engine === 'custom handlebars' };
        const input = app(withSidecar ? 'sidecar,extra' : 'extra', own);
        const cfg = (mode: string) => config(engine, otherKind, `${n}-x`, mode);
        const injected = run(input, { functionConfig: cfg('inject') });
        if (injected.exitCode !== 0) return false;
        const forged = forge(injected.stdout, engine, kind, n);
        const un = run(forged, { functionConfig: cfg('uninject') });
        runs++;
        const err = un.results.find((r) => r.severity === 'error');
        // An error result writes nothing half-done: no output, or the user's item still there.
        const out = parse(un.stdout) as Obj | null;
        const kept = out === null ? un.stdout.trim() === '' : names(out.spec.template.spec[kind]).includes(n);
        // The same forged status on two workloads of one input: each is refused (what is proven for a status text
        // is not taken from the workload before, issue #40's memo of the built-in names).
        const two = `${forged}---\n${forged.replace('\n  name: web\n', '\n  name: web-2\n')}`;
        const both = run(two, { functionConfig: cfg('uninject') });
        const refused = both.results.filter((r) => r.severity === 'error' && r.message.includes(`"${n}"`));
        return (
          un.exitCode === 1 &&
          err?.field?.path === `spec.template.metadata.annotations[${STATUS[engine]}]` &&
          err.message.includes(`"${n}"`) &&
          kept &&
          both.exitCode === 1 &&
          refused.length === 2
        );
      },
    ),
    { numRuns: 40 },
  );
  t.ok(runs >= 40, `${runs} forged statuses refused`);
});
