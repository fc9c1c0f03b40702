/**
 * Chooses and renders the templates of one pod (Istio `RunTemplate`'s loop, pkg/kube/inject/inject.go): names
 * from `inject.istio.io/templates` or `defaultTemplates`, aliases resolved; each name rendered from the
 * highest-precedence source that has it (`./template-sources.ts`), the built-in Handlebars ports last.
 */
import { InjectError } from '../../results/errors.ts';
import { TemplateExecError, withHooks } from '../../render/gotemplate/index.ts';
import { GO_PLAN_HOOKS } from '../../render/go-plan-rules.ts';
import type { IstioSettings } from './config.ts';
import { sidecarTemplateFields, sidecarTemplateValue } from './go-model.ts';
import { createPlanner, planSources, type PlanSource } from '../../render/plans.ts';
import type { GoTemplate } from '../../render/gotemplate/index.ts';
import type { Json } from '../../model.ts';
import {
  ISTIO_TEMPLATE_NAMES,
  TEMPLATES_ANNOTATION,
  fragmentFromYaml,
  renderIstioTemplate,
  type RenderedFragment,
} from './render.ts';
import type { IstioTemplateData } from './template-data.ts';
import { resolveProxyInitImage } from './images.ts';
import { ORIGIN_LABEL, type TemplateOrigin, resolveAliases } from './template-sources.ts';
import type { PodTemplate } from '../../model.ts';

/**
 * Template names for a pod: the annotation split on `,` and trimmed (duplicates kept), else the injector
 * config's `defaultTemplates`; then aliases (Istio `selectTemplates` + `resolveAliases`).
 */
export function templateNamesFor(annotations: Record<string, string> | undefined, settings: IstioSettings): string[] {
  const value = annotations?.[TEMPLATES_ANNOTATION];
  const names = value === undefined ? settings.templates.defaultTemplates : value.split(',').map((s) => s.trim());
  return resolveAliases(names, settings.templates.aliases);
}

/** What rendering one pod needs: the settings and the two data models (the Go one's fields built on first use). */
export interface RenderContext {
  settings: IstioSettings;
  /** Data of the built-in Handlebars ports. */
  builtinData: IstioTemplateData;
  /** The pod after stripPod/reinsertOverrides (the Go data's ObjectMeta and Spec). */
  pod: PodTemplate;
  nativeSidecars: boolean;
  /** Filled on first Go render: the fields of the Go data (`sidecarTemplateFields`). */
  goData?: Record<string, unknown>;
}

function goDataOf(ctx: RenderContext): Record<string, unknown> {
  if (ctx.goData) return ctx.goData;
  const d = ctx.builtinData;
  const s = ctx.settings;
  ctx.goData = sidecarTemplateFields({
    typeMeta: { kind: d.TypeMeta.Kind, apiVersion: d.TypeMeta.APIVersion },
    deploymentMeta: { name: d.DeploymentMeta.Name, namespace: d.DeploymentMeta.Namespace },
    pod: ctx.pod,
    proxyConfig: d.ProxyConfig,
    meshConfig: s.meshConfig,
    values: s.values,
    revision: s.revision,
    nativeSidecars: ctx.nativeSidecars,
    proxyImage: d.ProxyImage,
    // Istio 1.31 `ProxyInitImage(values, annotations)`: the ProxyConfig's image type does not apply to the init image.
    proxyInitImage: resolveProxyInitImage(s.values, {}, d.ObjectMeta.annotations),
    proxyUID: d.ProxyUID,
    proxyGID: d.ProxyGID,
    inboundTrafficPolicyMode: d.InboundTrafficPolicyMode,
    compliancePolicy: d.CompliancePolicy,
  });
  return ctx.goData;
}

/** Every template name some source has, sorted (Istio `knownTemplates`). */
export function availableTemplates(settings: IstioSettings): string[] {
  return [...new Set([...settings.templates.go.keys(), ...ISTIO_TEMPLATE_NAMES])].sort();
}

/**
 * Renders template `name` for the pod and returns its fragment and origin.
 * @throws InjectError `requested template "x" not found; have a, b, ...` when no source has it; InjectError
 *   (code TEMPLATE) with Go's message when a Go template fails.
 */
export function renderNamed(name: string, ctx: RenderContext): { fragment: RenderedFragment; origin: TemplateOrigin } {
  const entry = ctx.settings.templates.go.get(name);
  if (!entry) {
    if (ctx.settings.templates.go.size > 0 && !ISTIO_TEMPLATE_NAMES.includes(name)) {
      throw new InjectError(
        `requested template "${name}" not found; have ${availableTemplates(ctx.settings).join(', ')}`,
        { code: 'TEMPLATE' },
      );
    }
    return { fragment: renderIstioTemplate(name, ctx.builtinData), origin: 'builtin' };
  }
  const { planName, source } = goSources(entry.template, name);
  let fragment: Json;
  try {
    fragment = goPlanner.render(planName, source, goDataOf(ctx));
  } catch (e) {
    // A template's failure (Go's message names its line) also names where the template comes from and what picks it.
    if (e instanceof InjectError && e.code === 'TEMPLATE') {
      const from = entry.origin === 'values' ? `${ORIGIN_LABEL.values}.${name}` : ORIGIN_LABEL[entry.origin];
      throw new InjectError(
        `${e.message} (template "${name}" from ${from}, chosen by the pod's ${TEMPLATES_ANNOTATION} annotation or the default templates)`,
        { code: 'TEMPLATE' },
      );
    }
    throw e;
  }
  return { fragment: fragment as RenderedFragment, origin: entry.origin };
}

/**
 * Sidecar plans of Go templates (`src/render/plans.ts`, `src/render/go-plan-rules.ts`): the workload's kind,
 * API version and names and the pod's metadata and spec may hold placeholders (a template that branches on the
 * kind steers it into the key, or records what the plan assumes: test/render/plan-fleets.test.ts); values and
 * mesh config are one object per run.
 */
const goPlanner = createPlanner({
  slotRoots: ['TypeMeta', 'DeploymentMeta', 'ObjectMeta', 'Spec'],
  identityRoots: ['MeshConfig', 'Values'],
});
const goSources = planSources<GoTemplate>((template, name) => goSource(name, template));

/** A Go template as a plan source: executed on the Go-typed data over `fields`, parsed with Go's typed round-trip. */
function goSource(name: string, template: GoTemplate): PlanSource {
  const run = (fields: Record<string, unknown>, planned: boolean): Json => {
    let text: string;
    try {
      // A planned render builds its data and executes under the plans' call hooks (placeholders in the data).
      text = planned
        ? withHooks(GO_PLAN_HOOKS, () => template.execute(sidecarTemplateValue(fields)))
        : template.execute(sidecarTemplateValue(fields));
    } catch (e) {
      if (e instanceof TemplateExecError && !planned) throw new InjectError(e.message, { code: 'TEMPLATE' });
      throw e;
    }
    return fragmentFromYaml(name, text, true) as Json;
  };
  return { render: (fields) => run(fields, false), renderPlanned: (fields) => run(fields, true) };
}

/** The result line part naming the sources: `templates sidecar, spire from spec.istio.injectorConfig (Istio 1.26.0)`. */
export function describeSources(
  used: Array<{ name: string; origin: TemplateOrigin }>,
  settings: IstioSettings,
): string {
  const byOrigin = new Map<TemplateOrigin, string[]>();
  for (const u of used) {
    const list = byOrigin.get(u.origin) ?? [];
    if (!list.includes(u.name)) list.push(u.name);
    byOrigin.set(u.origin, list);
  }
  const version = settings.templates.version ? `Istio ${settings.templates.version}` : 'Istio version not given';
  return [...byOrigin]
    .map(([origin, names]) => {
      const v = origin === 'builtin' ? 'Istio 1.31 line' : version;
      return `templates ${names.join(', ')} from ${ORIGIN_LABEL[origin]} (${v})`;
    })
    .join('; ');
}
