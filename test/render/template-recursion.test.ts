/**
 * A recursion or depth error names the resource, the field the template comes from (and, for Istio, the annotation
 * that picks it) and the template line (issue 36, section 5). Generated: self and mutual recursion, with and
 * without an argument that grows, through Go `template` calls (the istio driver's values templates) and
 * Handlebars partials (the custom driver), under the largest step budget a config may set, so the depth limit or
 * the call stack, not the step budget, ends them.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/run.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const q = JSON.stringify;
const deployment = (annotations: string) =>
  fixtureDeployment('web', { style: 'flow', templateExtra: `, annotations: {${annotations}}` });
const BUDGET = '  templateBudget: {steps: 10000000}\n';

interface Case {
  engine: 'go' | 'handlebars';
  mutual: boolean;
  grows: boolean;
  line: number;
}

function goCase(c: Case): { input: string; functionConfig: string } {
  const arg = c.grows ? '(list .)' : '.';
  const defs = c.mutual
    ? `{{define "a"}}{{template "b" ${arg}}}{{end}}{{define "b"}}{{template "a" ${arg}}}{{end}}`
    : `{{define "a"}}{{template "a" ${arg}}}{{end}}`;
  const text = `${defs}metadata: {}\n${'\n'.repeat(c.line)}{{template "a" 1}}\n`;
  return {
    input: deployment('inject.istio.io/templates: deep'),
    functionConfig: `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  mesh: istio\n  policy: enabled\n${BUDGET}  istio:\n    values:\n      sidecarInjectorWebhook:\n        templates:\n          deep: ${q(text)}\n`,
  };
}

function hbsCase(c: Case): { input: string; functionConfig: string } {
  const call = (p: string) => (c.grows ? `{{> ${p} x=(list x x)}}` : `{{> ${p}}}`);
  const defs = c.mutual
    ? `{{#*inline "a"}}${call('b')}{{/inline}}{{#*inline "b"}}${call('a')}{{/inline}}`
    : `{{#*inline "a"}}${call('a')}{{/inline}}`;
  const text = `${defs}${'\n'.repeat(c.line)}spec:\n  containers:\n  - name: s\n    image: x\n    args: ["{{> a x=1}}"]\n`;
  return {
    input: deployment(''),
    functionConfig: `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec:\n  mesh: custom\n  policy: enabled\n${BUDGET}  custom:\n    templates:\n      sidecar: ${q(text)}\n`,
  };
}

t.test(
  'generated: a template recursing without end is an error naming the resource, the field and a line',
  async (t) => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.record({
          engine: fc.constantFrom('go' as const, 'handlebars' as const),
          mutual: fc.boolean(),
          grows: fc.boolean(),
          line: fc.integer({ min: 0, max: 5 }),
        }),
        (c) => {
          const r = c.engine === 'go' ? goCase(c) : hbsCase(c);
          const out = run(r.input, { functionConfig: r.functionConfig });
          const what = `${q(c)}: ${out.stderr.slice(0, 500)}`;
          if (out.exitCode !== 1) throw new Error(`exit ${out.exitCode}: ${what}`);
          if (!out.stderr.includes('Deployment "shop/web"')) throw new Error(`does not name the resource: ${what}`);
          if (c.engine === 'go') {
            if (!/template: deep:\d+:\d+: executing "[ab]"/.test(out.stderr))
              throw new Error(`no template line: ${what}`);
            if (!/spec\.istio\.values\.sidecarInjectorWebhook\.templates\.deep/.test(out.stderr))
              throw new Error(`does not name the field: ${what}`);
            if (!/inject\.istio\.io\/templates annotation/.test(out.stderr))
              throw new Error(`does not name the annotation: ${what}`);
            if (!/exceeded maximum template depth \(1000\)|call stack exhausted/.test(out.stderr))
              throw new Error(`not the depth error: ${what}`);
          } else {
            if (
              !/template "sidecar" \(spec\.custom\.templates\.sidecar\) failed at line \d+, column \d+/.test(out.stderr)
            )
              throw new Error(`does not name the field and line: ${what}`);
            if (!/call stack exhausted|budget of one render/.test(out.stderr))
              throw new Error(`not the depth error: ${what}`);
          }
          if (/RangeError|Maximum call stack size|internal error/.test(out.stderr))
            throw new Error(`V8's text leaks: ${what}`);
          n++;
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 24) },
    );
    t.pass(`${n} generated recursions`);
  },
);
