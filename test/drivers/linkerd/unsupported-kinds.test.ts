// `linkerd inject` passes kinds it does not handle (Argo Rollout, OpenShift DeploymentConfig, PodTemplate) through
// unchanged and reports them `<kind> "<name>" skipped` (Report.UnsupportedResource, pkg/inject/report.go); under
// the linkerd driver meshinject does the same instead of refusing them (issue #37, item 5), in annotation-only
// and manual mode, on every command and output: inject (stream, ResourceList), check, -o patches. The inputs are
// generated (kinds mixed with kinds Linkerd injects); what is expected follows from each resource's kind.
import t from 'tap';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { run } from '../../../src/run.ts';
import { runCli, workspace } from '../../helpers/e2e.ts';

type Obj = Record<string, any>;

const UNSUPPORTED: Record<string, string> = {
  Rollout: 'argoproj.io/v1alpha1',
  DeploymentConfig: 'apps.openshift.io/v1',
  PodTemplate: 'v1',
};
const SUPPORTED: Record<string, string> = { Deployment: 'apps/v1', StatefulSet: 'apps/v1', DaemonSet: 'apps/v1' };

/** A resource of `kind` named `name`, as YAML block text. */
function resource(kind: string, name: string): string {
  const api = UNSUPPORTED[kind] ?? SUPPORTED[kind]!;
  const pod = `metadata:\n      labels: {app: ${name}}\n    spec:\n      containers:\n      - name: ${name}\n        image: ${name}:1\n`;
  if (kind === 'PodTemplate')
    return `apiVersion: ${api}\nkind: PodTemplate\nmetadata:\n  name: ${name}\n  namespace: shop\ntemplate:\n  ${pod.replace(/^ {2}/gm, '')}`;
  return `apiVersion: ${api}\nkind: ${kind}\nmetadata:\n  name: ${name}\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {app: ${name}}\n  template:\n    ${pod}`;
}

const CA = '"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"';
const config = (manual: boolean) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n  mesh: linkerd\n  resultAnnotations: false\n  linkerd:\n    manual: ${manual}\n    values: {identityTrustAnchorsPEM: ${CA}}\n`;

const docsOf = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);

t.test(
  'unsupported kinds pass through unchanged with a skipped line; the others are injected (inject and check)',
  async (t) => {
    let routes = 0;
    const kinds = fc.array(fc.constantFrom(...Object.keys(UNSUPPORTED), ...Object.keys(SUPPORTED)), {
      minLength: 1,
      maxLength: 5,
    });
    fc.assert(
      fc.property(kinds, fc.boolean(), fc.boolean(), (list, manual, onOutput) => {
        const texts = list.map((k, i) => resource(k, `w${i}`));
        const input = texts.join('---\n');
        const out = run(input, { functionConfig: config(manual) });
        const route = `${JSON.stringify(list)} manual=${manual}`;
        if (out.exitCode !== 0)
          throw new Error(`${route}: exit ${out.exitCode}: ${out.results.map((r) => r.message).join('; ')}`);
        const outDocs = docsOf(out.stdout);
        const inDocs = docsOf(input);
        list.forEach((kind, i) => {
          const name = `w${i}`;
          const result = out.results.find((r) => r.resourceRef?.name === name);
          if (kind in UNSUPPORTED) {
            if (JSON.stringify(outDocs[i]) !== JSON.stringify(inDocs[i]))
              throw new Error(`${route}: ${kind} ${name} changed`);
            if (!out.stdout.includes(texts[i]!)) throw new Error(`${route}: ${kind} ${name} not byte for byte`);
            if (
              result?.severity !== 'info' ||
              result.tags?.['meshinject.dev/reason'] !== 'unsupported-kind' ||
              !result.message.includes(`linkerd inject does not handle kind ${kind}`) ||
              !result.message.includes(`${kind.toLowerCase()} skipped`)
            ) {
              throw new Error(`${route}: ${kind} ${name}: result ${JSON.stringify(result)}`);
            }
          } else {
            const pod = outDocs[i]!.spec.template;
            const done = manual
              ? pod.spec.initContainers?.some((c: Obj) => c.name === 'linkerd-proxy')
              : pod.metadata.annotations?.['linkerd.io/inject'] === 'enabled';
            if (!done) throw new Error(`${route}: ${kind} ${name} not injected`);
          }
          routes++;
        });
        const check = run(onOutput ? out.stdout : input, {
          functionConfig: config(manual).replace('  mesh: linkerd\n', '  mesh: linkerd\n  mode: check\n'),
        });
        const findings = check.results.filter((r) => r.severity === 'error' || r.severity === 'warning');
        const unsupportedFinding = findings.find(
          (r) => list[Number(String(r.resourceRef?.name).slice(1))]! in UNSUPPORTED,
        );
        if (unsupportedFinding) throw new Error(`${route}: check flags ${unsupportedFinding.message}`);
      }),
      { numRuns: 40 },
    );
    t.ok(routes >= 40, `${routes} resources checked`);
  },
);

t.test(
  'the CLI: a Rollout and a DeploymentConfig beside a Deployment; exit 0, the skipped lines, -o patches patches only the Deployment',
  async (t) => {
    const input = [
      resource('Rollout', 'canary'),
      resource('DeploymentConfig', 'legacy'),
      resource('Deployment', 'web'),
    ].join('---\n');
    const dir = workspace(t, { 'in.yaml': input, 'c.yaml': config(false) });
    const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
    t.equal(r.status, 0, r.stderr);
    t.match(
      r.stderr,
      /\[info\] argoproj\.io\/v1alpha1\/Rollout\/shop\/canary: skipped \(unsupported-kind\): linkerd inject does not handle kind Rollout .*rollout skipped/,
    );
    t.match(r.stderr, /\[info\] apps\.openshift\.io\/v1\/DeploymentConfig\/shop\/legacy: skipped \(unsupported-kind\)/);
    const [canary, legacy] = input.split('---\n');
    t.ok(r.stdout.includes(canary!) && r.stdout.includes(legacy!), 'both pass through byte for byte');
    const patches = runCli(['-c', 'c.yaml', '-o', 'patches', 'in.yaml'], { cwd: dir });
    t.equal(patches.status, 0, patches.stderr);
    t.match(patches.stdout, /kind: Deployment\n\s+name: web\n/, 'the Deployment is patched');
    t.notMatch(patches.stdout, /canary|legacy/, 'nothing targets the skipped resources');
  },
);
