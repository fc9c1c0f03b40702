/**
 * Which functions an Istio release's injection templates call that meshinject's func map for that release lacks
 * (issue #25): the list of functions to port when a new release is imported. Used by
 * test/drivers/istio/funcmap.test.ts over every release corpus of the test data and printed by `npm run import-istio-release`.
 */
import { istioFuncMap } from '../../src/drivers/istio/go-funcs.ts';
import { BUILTINS } from '../../src/render/gotemplate/builtins.ts';
import { parseTemplates } from '../../src/render/gotemplate/parse.ts';

/** One function a template calls that the func map of its release does not have. */
export interface MissingFunction {
  release: string;
  template: string;
  function: string;
}

/**
 * Parses each template with the func map of `release`'s minor version and returns every function name that the
 * templates call and neither Go's builtins nor the func map define, once per template (sorted). A template that does
 * not parse for another reason throws (Go's message).
 * @param release an Istio version such as `1.30.0` or `1.31.0-rc.0`
 * @param templates template name → Go template text
 */
export function missingFunctions(release: string, templates: Record<string, string>): MissingFunction[] {
  const m = /^v?1\.(\d+)/.exec(release);
  if (!m) throw new Error(`not an Istio 1.x release: ${release}`);
  const funcs = istioFuncMap({ minor: Number(m[1]), env: {} });
  const out: MissingFunction[] = [];
  for (const [template, text] of Object.entries(templates)) {
    const missing = new Set<string>();
    parseTemplates(template, text, (f) => {
      if (!funcs.has(f) && !BUILTINS.has(f)) missing.add(f);
      return true;
    });
    for (const f of [...missing].sort()) out.push({ release, template, function: f });
  }
  return out;
}

/** `function "omitNil" (Istio 1.30.0, template sidecar)` lines, one per missing function. */
export function describeMissing(list: readonly MissingFunction[]): string[] {
  return list.map((x) => `function "${x.function}" (Istio ${x.release}, template ${x.template})`);
}
