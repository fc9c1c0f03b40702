/**
 * The runtime a precompiled built-in template runs on: Handlebars 4.7's `template()` (runtime.js, compiler
 * revision 8), rewritten for renders that repeat thousands of times in one run. What a template prints, which
 * helper runs with which arguments and options, what a data frame, partial, decorator or prototype lookup sees
 * are Handlebars'; three costs of every render are not:
 * - Handlebars wraps every registered helper again on each render (`_setup`: some 80 closures and an object)
 *   to give its `options` a `lookupProperty`, and each call through that wrapper rewrites `arguments` and adds
 *   the property to the options object (a new backing store per call). Here the helpers are taken once, at the
 *   first render, and only Handlebars' built-in `lookup` (helpers/lookup.js, the one helper that reads
 *   `options.lookupProperty`) is wrapped to get it;
 * - `container.fn(i)` stores `decorator` on the program function at every block call; here once per program;
 * - the prototype-access policy (`createProtoAccessControl`) is made once, not per render.
 * So helpers registered after a template's first render are not seen by it (engines register all of theirs
 * first: ./engine.ts), and `compat` templates (which look names up the context stack: `container.lookup`) are
 * not run here. Templates compiled at run time (`env.compile`) keep Handlebars' own runtime, which
 * test/render/hbs-runtime.test.ts and test/drivers/istio/render.test.ts compare this one with, render for render.
 */
import Handlebars from 'handlebars';
import { setOwn } from '../json.ts';
import {
  createProtoAccessControl,
  isPrototypeConstructor,
  resultIsAllowed,
} from 'handlebars/dist/cjs/handlebars/internal/proto-access.js';

// biome-ignore lint/suspicious/noExplicitAny: Handlebars' runtime calls helpers and programs with whatever a template passes
type Fn = (...a: any[]) => any;
/** A precompiled template: programs by index (`0`, `1`, ... with decorators at `<i>_d`), `main`, flags. */
type Spec = Record<string, Fn | unknown> & {
  main: Fn & { decorator?: Fn | undefined };
  main_d?: Fn;
  compiler?: [number, string];
  useData?: boolean;
  useDepths?: boolean;
  useBlockParams?: boolean;
  usePartial?: boolean;
  useDecorators?: boolean;
  compilerOptions?: object;
};
/** The parts of a Handlebars environment a template uses. */
type Env = typeof Handlebars;
// biome-ignore lint/suspicious/noExplicitAny: Handlebars' options objects carry helpers, data frames and hooks of any shape
type Options = Record<string, any>;

const { extend, escapeExpression } = Handlebars.Utils;
const hasOwn = Object.prototype.hasOwnProperty;

function createFrame(object: Options | undefined): Options {
  const frame = extend({}, object) as Options;
  frame._parent = object;
  return frame;
}

function initData(context: unknown, data: Options | undefined): Options {
  if (!data || !('root' in data)) {
    data = data ? createFrame(data) : {};
    data.root = context;
  }
  return data;
}

function executeDecorators(
  fn: Fn & { decorator?: Fn | undefined },
  prog: Fn,
  container: object,
  depths: unknown[] | undefined,
  data: unknown,
  blockParams: unknown,
): Fn {
  if (fn.decorator) {
    const props = {};
    prog = fn.decorator(prog, props, container, depths?.[0], data, blockParams, depths);
    extend(prog, props);
  }
  return prog;
}

/** Handlebars' `wrapProgram` (runtime.js): a block program bound to its data frame, depths and block params. */
function wrapProgram(
  container: Options,
  i: number,
  fn: Fn,
  data?: unknown,
  declaredBlockParams?: unknown,
  blockParams?: unknown[],
  depths?: unknown[],
): Fn {
  let prog: Fn = function prog(context: unknown, options: Options = {}) {
    let currentDepths = depths;
    // biome-ignore lint/suspicious/noDoubleEquals: as Handlebars' runtime (runtime.js, wrapProgram): null and undefined count as the same context
    if (depths && context != depths[0] && !(context === container.nullContext && depths[0] === null))
      currentDepths = [context].concat(depths);
    return fn(
      container,
      context,
      container.helpers,
      container.partials,
      options.data || data,
      blockParams && [options.blockParams].concat(blockParams),
      currentDepths,
    );
  };
  prog = executeDecorators(fn, prog, container, depths, data, blockParams);
  const p = prog as Fn & { program: number; depth: number; blockParams: unknown };
  p.program = i;
  p.depth = depths ? depths.length : 0;
  p.blockParams = declaredBlockParams || 0;
  return prog;
}

/** Handlebars' `invokePartialWrapper` (runtime.js): resolves, invokes (through `env.VM`) and indents a partial. */
function partialInvoker(env: Env, vm: Options, spec: Spec) {
  return function invokePartialWrapper(this: Options, partial: unknown, context: unknown, options: Options): string {
    if (options.hash) {
      context = extend({}, context, options.hash);
      if (options.ids) options.ids[0] = true;
    }
    partial = vm.resolvePartial.call(this, partial, context, options);
    options.hooks = this.hooks;
    options.protoAccessControl = this.protoAccessControl;
    let result = vm.invokePartial.call(this, partial, context, options);
    if (result == null && typeof partial === 'function') {
      throw new Handlebars.Exception(`The partial ${options.name} returned no output: partials must return a string`);
    }
    if (result == null && env.compile) {
      if (typeof partial !== 'string') {
        throw new Handlebars.Exception(
          `The partial ${options.name} could not be compiled: partials must be strings or functions returning strings`,
        );
      }
      options.partials[options.name] = (env.compile as (input: string, options?: object, env?: Env) => Fn)(
        partial,
        spec.compilerOptions,
        env,
      );
      result = options.partials[options.name](context, options);
    }
    if (result == null)
      throw new Handlebars.Exception(
        `The partial ${options.name} could not be compiled when running in runtime-only mode`,
      );
    if (options.indent) {
      const lines = (result as string).split('\n');
      for (let i = 0, l = lines.length; i < l; i++) {
        if (!lines[i] && i + 1 === l) break;
        lines[i] = options.indent + lines[i];
      }
      result = lines.join('\n');
    }
    return result as string;
  };
}

/** Handlebars' `container` (runtime.js): what compiled programs call; `helpers`, `partials`, `hooks`, ... are set per render. */
function createContainer(env: Env, vm: Options, spec: Spec): Options {
  const container: Options = {
    strict(obj: Options, name: string, loc: unknown) {
      if (!obj || !(name in obj)) throw new Handlebars.Exception(`"${name}" not defined in ${obj}`, { loc } as never);
      return container.lookupProperty(obj, name);
    },
    lookupProperty(parent: Options, propertyName: string) {
      const result = parent[propertyName];
      if (result == null) return result;
      if (hasOwn.call(parent, propertyName) && !isPrototypeConstructor(parent, propertyName, result)) return result;
      if (resultIsAllowed(result, container.protoAccessControl, propertyName)) return result;
      return undefined;
    },
    lambda(current: unknown, context: unknown) {
      return typeof current === 'function' ? current.call(context) : current;
    },
    escapeExpression,
    invokePartial: partialInvoker(env, vm, spec),
    fn(i: number) {
      return spec[i];
    },
    programs: [] as Fn[],
    program(i: number, data: unknown, declaredBlockParams: unknown, blockParams: unknown[], depths: unknown[]) {
      const fn = spec[i] as Fn;
      if (data || depths || blockParams || declaredBlockParams)
        return wrapProgram(this, i, fn, data, declaredBlockParams, blockParams, depths);
      this.programs[i] ??= wrapProgram(this, i, fn);
      return this.programs[i];
    },
    data(value: Options | undefined, depth: number) {
      while (value && depth--) value = value._parent;
      return value;
    },
    mergeIfNeeded(param: unknown, common: unknown) {
      return param && common && param !== common ? extend({}, common, param) : param || common;
    },
    nullContext: Object.seal({}),
    noop: vm.noop,
    compilerInfo: spec.compiler,
  };
  return container;
}

/** The helpers, hooks, prototype policy and decorators of a top-level render (Handlebars' `_setup`). */
interface TopLevel {
  helpers: Options;
  hooks: Options;
  protoAccessControl: unknown;
  decorators: Options | undefined;
}

/** A helper given `options.lookupProperty`, as Handlebars' runtime gives every helper (`passLookupPropertyOption`). */
function withLookupProperty(helper: unknown, container: Options): unknown {
  if (typeof helper !== 'function') return helper;
  return function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: as Handlebars' runtime (passLookupPropertyOption): options is the last argument
    const options = arguments[arguments.length - 1] as Options;
    options.lookupProperty = container.lookupProperty;
    // biome-ignore lint/complexity/noArguments: as Handlebars' runtime (passLookupPropertyOption): the call's own arguments, options rewritten
    return helper.apply(this, arguments);
  };
}

/** What Handlebars' `_setup` computes for a top-level render with `options` (see {@link TopLevel}). */
function topLevelOf(env: Env, spec: Spec, container: Options, options: Options): TopLevel {
  const helpers: Options = {};
  for (const source of [env.helpers, options.helpers]) {
    if (!source) continue;
    for (const name of Object.keys(source))
      setOwn(helpers, name, name === 'lookup' ? withLookupProperty(source[name], container) : source[name]);
  }
  const hooks: Options = {};
  const keep = options.allowCallsToHelperMissing || Boolean(spec.compiler && spec.compiler[0] === 7);
  for (const name of ['helperMissing', 'blockHelperMissing']) {
    if (!helpers[name]) continue;
    hooks[name] = helpers[name];
    if (!keep) helpers[name] = undefined;
  }
  return {
    helpers,
    hooks,
    protoAccessControl: createProtoAccessControl(options),
    decorators:
      spec.usePartial || spec.useDecorators ? (extend({}, env.decorators, options.decorators) as Options) : undefined,
  };
}

/** Whether a render's options change nothing `_setup` takes from them (the form engines render with). */
function isPlainRender(options: Options): boolean {
  return (
    !options.helpers &&
    !options.decorators &&
    !options.allowCallsToHelperMissing &&
    !options.allowedProtoProperties &&
    !options.allowedProtoMethods &&
    options.allowProtoPropertiesByDefault === undefined &&
    options.allowProtoMethodsByDefault === undefined
  );
}

/**
 * `env.template(spec)` on this runtime: the render function of a precompiled template spec
 * (`Handlebars.precompile` output, evaluated), called as `render(context, options?)` like Handlebars' own.
 * @throws Handlebars.Exception for a spec of another compiler revision, as Handlebars does.
 */
export function templateOf(spec: Spec, env: Env): (context: unknown, options?: Options) => string {
  if (!spec?.main) throw new Handlebars.Exception(`Unknown template object: ${typeof spec}`);
  const vm = (env as { VM: Options }).VM;
  spec.main.decorator = spec.main_d;
  vm.checkRevision(spec.compiler);
  // What Handlebars' `container.fn(i)` sets on every call, set once.
  for (const key of Object.keys(spec)) {
    if (/^\d+$/.test(key) && typeof spec[key] === 'function')
      (spec[key] as Fn & { decorator?: unknown }).decorator = spec[`${key}_d`];
  }
  const container = createContainer(env, vm, spec);
  let plain: TopLevel | undefined; // made at the first plain render

  function setup(options: Options): void {
    if (!options.partial) {
      let t: TopLevel;
      if (isPlainRender(options)) {
        plain ??= topLevelOf(env, spec, container, options);
        t = plain;
      } else t = topLevelOf(env, spec, container, options);
      container.helpers = t.helpers;
      if (spec.usePartial) container.partials = container.mergeIfNeeded(options.partials, env.partials);
      if (t.decorators) container.decorators = t.decorators;
      container.hooks = t.hooks;
      container.protoAccessControl = t.protoAccessControl;
    } else {
      container.protoAccessControl = options.protoAccessControl;
      container.helpers = options.helpers;
      container.partials = options.partials;
      container.decorators = options.decorators;
      container.hooks = options.hooks;
    }
  }

  function ret(context: unknown, options: Options = {}): string {
    let data = options.data;
    setup(options);
    if (!options.partial && spec.useData) data = initData(context, data);
    let depths: unknown[] | undefined;
    const blockParams = spec.useBlockParams ? [] : undefined;
    if (spec.useDepths)
      depths = options.depths
        ? // biome-ignore lint/suspicious/noDoubleEquals: as Handlebars' runtime (runtime.js, template): null and undefined count as the same context
          context != options.depths[0]
          ? [context].concat(options.depths)
          : options.depths
        : [context];
    let main: Fn = (ctx: unknown) =>
      `${spec.main(container, ctx, container.helpers, container.partials, data, blockParams, depths)}`;
    main = executeDecorators(spec.main, main, container, options.depths || [], data, blockParams);
    return main(context, options);
  }
  ret.isTop = true;
  ret._setup = setup;
  ret._child = (i: number, data: unknown, blockParams: unknown[], depths: unknown[]) => {
    if (spec.useBlockParams && !blockParams) throw new Handlebars.Exception('must pass block params');
    if (spec.useDepths && !depths) throw new Handlebars.Exception('must pass parent depths');
    return wrapProgram(container, i, spec[i] as Fn, data, 0, blockParams, depths);
  };
  return ret;
}
