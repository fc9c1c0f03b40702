/**
 * A Go `text/template` engine: parse once (`GoTemplate.parse`), execute many times with a Go-typed data
 * model (`Value`, see value.ts). Semantics, error texts and `fmt` output follow Go's text/template; the
 * map-key behaviour is Go's default (`missingkey=default`: a missing key yields "no value"), which is
 * what Istio's injector uses (it sets no Option).
 */
import { BUILTINS } from './builtins.ts';
import { type CompiledSet, DEFAULT_LIMITS, type ExecLimits, type FuncMap, compileSet, execute } from './exec.ts';
import { parseTemplates } from './parse.ts';
import type { Value } from './value.ts';

export { TemplateExecError, type ExecLimits, type FuncMap, DEFAULT_LIMITS } from './exec.ts';
export { TemplateParseError } from './parse.ts';
export { withHooks, type CallHooks } from './hooks.ts';

/** A parsed and compiled template with its `{{define}}`d associates. */
export class GoTemplate {
  private constructor(
    readonly name: string,
    private readonly set: CompiledSet,
  ) {}

  /**
   * Parses `text` as template `name` with the function table `funcs` (builtins are always there;
   * `funcs` entries override builtins of the same name, as Go's Funcs does).
   * @throws TemplateParseError with Go's message, e.g. `template: inject:4: function "x" not defined`.
   */
  static parse(name: string, text: string, funcs: FuncMap): GoTemplate {
    const trees = parseTemplates(name, text, (f) => funcs.has(f) || BUILTINS.has(f));
    return new GoTemplate(name, compileSet(trees, funcs));
  }

  /** Names of the templates in the set (the top-level one and every `define`/`block`). */
  templateNames(): string[] {
    return [...this.set.bodies.keys()];
  }

  /**
   * Executes the template with `data` as dot and returns the text.
   * @throws TemplateExecError with Go's message; also when `limits` are exceeded.
   */
  execute(data: Value, limits: ExecLimits = DEFAULT_LIMITS): string {
    return execute(this.set, this.name, data, limits);
  }

  /** Executes the associated template `name` (Go `ExecuteTemplate`). */
  executeTemplate(name: string, data: Value, limits: ExecLimits = DEFAULT_LIMITS): string {
    return execute(this.set, name, data, limits);
  }
}
