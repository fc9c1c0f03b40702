/**
 * The template engine: one isolated Handlebars environment with the template functions registered,
 * compiled templates cached by name. Strict mode (a missing field in a `{{mustache}}` throws), no
 * HTML escaping (the output is YAML), and prototype access left at Handlebars' safe default (off).
 */
import Handlebars from 'handlebars';
import { PRECOMPILED } from '../drivers/templates-precompiled.gen.js';
import { InjectError } from '../results/errors.ts';
import { TEMPLATE_FUNCTIONS } from './template-functions.ts';

const env = Handlebars.create();
for (const [name, fn] of Object.entries(TEMPLATE_FUNCTIONS)) env.registerHelper(name, fn as Handlebars.HelperDelegate);

const cache = new Map<string, { source: string; render: Handlebars.TemplateDelegate }>();

function compiled(name: string, source: string): Handlebars.TemplateDelegate {
  const hit = cache.get(name);
  if (hit && hit.source === source) return hit.render;
  // Built-in templates ship precompiled (scripts/gen-templates.mjs, same options): no compile at run time.
  const pre = PRECOMPILED[name];
  const render = pre && pre.source === source ? env.template(pre.spec) : env.compile(source, { strict: true, noEscape: true });
  cache.set(name, { source, render });
  return render;
}

/**
 * Renders `source` (cached under `name`, e.g. `istio/sidecar`) with `data` and returns the text (YAML
 * for the mesh templates). Compilation is lazy, so syntax errors surface here too.
 * @throws InjectError (code TEMPLATE) naming the template when compiling or rendering fails.
 */
export function renderTemplate(name: string, source: string, data: unknown): string {
  try {
    return compiled(name, source)(data);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InjectError(`template "${name}" failed: ${reason}`, undefined, 'TEMPLATE');
  }
}
