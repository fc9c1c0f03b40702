/**
 * Hooks around the function and method calls of one execution, for a caller that must see them: the sidecar
 * plans (src/render/plans.ts, src/render/go-plan-rules.ts) make theirs active (`withHooks`) while they build the
 * data of a planned render and execute it. The engine knows no caller: without hooks it calls functions
 * directly, as Go does.
 */
import type { Value } from './value.ts';

/** What a caller may hook into an execution. */
export interface CallHooks {
  /**
   * Calls function `name` (`fn` is the function itself, `argv` its arguments) in place of the engine; `plan` is
   * the function's own plan rule when its table gives one (`GoFunc.plan`).
   */
  call(
    name: string,
    fn: (...a: Value[]) => Value,
    argv: Value[],
    plan?: (args: Value[], real: (...args: Value[]) => Value) => Value,
  ): Value;
  /** Before method `name` is called on the raw `receiver` with the raw `args`; throws to stop the execution. */
  beforeMethod(name: string, receiver: unknown, args: readonly unknown[]): void;
  /** True for an error thrown by a hook that the engine passes on as it is (not as a template error). */
  passes(e: unknown): boolean;
  /** The Go kind of an opaque value the caller put in the data (`string` or `float64`), else undefined. */
  kindOf(raw: unknown): 'string' | 'float64' | undefined;
}

/** Module state by design: the dynamic extent of one execution (`withHooks` restores the hooks before when it returns or throws), so it holds nothing between renders; the functions a template calls get its arguments only. */
let active: CallHooks | undefined;

/** The hooks of the execution in progress, if it was given any. */
export function activeHooks(): CallHooks | undefined {
  return active;
}

/** Runs `f` with `hooks` active (the previous ones restored after, also when `f` throws). */
export function withHooks<T>(hooks: CallHooks | undefined, f: () => T): T {
  const outer = active;
  active = hooks;
  try {
    return f();
  } finally {
    active = outer;
  }
}
