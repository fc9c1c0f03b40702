/**
 * The Handlebars template engine drivers render with. Each engine is one isolated Handlebars environment
 * with the shared helpers (`./template-functions.ts`) plus the driver's own registered, compiled templates
 * cached by name. Strict mode (a missing field in a `{{mustache}}` throws), no HTML escaping (the output is
 * YAML), and prototype access left at Handlebars' safe default (off).
 */
import Handlebars from 'handlebars';
import { InjectError } from '../results/errors.ts';
import { TEMPLATE_FUNCTIONS, type Helper } from './template-functions.ts';
import { SHARED_PLAN_RULES, planned, type PlanRule } from './plan-helpers.ts';

/** A driver's template engine (see `createTemplateEngine`). */
export interface TemplateEngine {
  /**
   * Renders `source` (cached under `name`, e.g. `istio/sidecar`) with `data` and returns the text (YAML for
   * mesh templates). Compilation is lazy, so syntax errors surface here too.
   * @throws InjectError (code TEMPLATE) naming the template when compiling or rendering fails.
   */
  render(name: string, source: string, data: unknown): string;
  /**
   * The same render for a sidecar plan (`./plans.ts`): `data` holds placeholders, and every helper runs under
   * its plan rule (`./plan-helpers.ts`).
   * @throws NoPlan when the template uses a placeholder other than as text; any other error as it comes.
   */
  renderPlanned(name: string, source: string, data: unknown): string;
}

/**
 * Creates an engine with the shared helpers plus `helpers` (a driver's own functions, which may not shadow a
 * shared one). `precompiled` holds the driver's built-in templates compiled at build time (same options) by
 * name with their source; a template whose source matches is not compiled at run time.
 */
export function createTemplateEngine(
  helpers: Readonly<Record<string, Helper>> = {},
  precompiled: Readonly<Record<string, { source: string; spec: Parameters<typeof Handlebars.template>[0] }>> = {},
  planRules: Readonly<Record<string, PlanRule>> = {},
): TemplateEngine {
  const all = { ...helpers, ...TEMPLATE_FUNCTIONS };
  const env = Handlebars.create();
  for (const [name, fn] of Object.entries(all)) env.registerHelper(name, fn as Handlebars.HelperDelegate);
  const planEnv = Handlebars.create();
  const rules = { ...planRules, ...SHARED_PLAN_RULES };
  const lookup = planEnv.helpers.lookup as Helper;
  for (const [name, fn] of Object.entries({ ...all, lookup })) planEnv.registerHelper(name, planned(name, fn, rules[name]) as Handlebars.HelperDelegate);
  const compiler = (e: typeof Handlebars) => {
    const cache = new Map<string, { source: string; render: Handlebars.TemplateDelegate }>();
    return (name: string, source: string): Handlebars.TemplateDelegate => {
      const hit = cache.get(name);
      if (hit && hit.source === source) return hit.render;
      const pre = Object.hasOwn(precompiled, name) ? precompiled[name] : undefined;
      const render = pre && pre.source === source ? e.template(pre.spec) : e.compile(source, { strict: true, noEscape: true });
      cache.set(name, { source, render });
      return render;
    };
  };
  const compiled = compiler(env);
  const compiledPlanned = compiler(planEnv);
  return {
    renderPlanned(name, source, data) {
      return compiledPlanned(name, source)(data);
    },
    render(name, source, data) {
      try {
        return compiled(name, source)(data);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw new InjectError(`template "${name}" failed: ${reason}`, { code: 'TEMPLATE' });
      }
    },
  };
}

const shared = createTemplateEngine();

/** Renders with the shared helpers only (no driver helpers, no precompiled templates); see `TemplateEngine.render`. */
export function renderTemplate(name: string, source: string, data: unknown): string {
  return shared.render(name, source, data);
}

/** `renderTemplate` for a sidecar plan; see `TemplateEngine.renderPlanned`. */
export function renderTemplatePlanned(name: string, source: string, data: unknown): string {
  return shared.renderPlanned(name, source, data);
}
