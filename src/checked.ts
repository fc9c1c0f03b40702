/**
 * Checked reads of values the code knows are there (an entry of a table keyed by its own members, a regular
 * expression group that takes part in every match, the last element of a list just tested non-empty): where
 * the compiler cannot see the invariant (`noUncheckedIndexedAccess`), the read goes through `defined`, which
 * returns the value or throws an `InternalError` naming what was missing, instead of a `!` that asserts it.
 */

/**
 * A broken invariant: a bug in meshinject, never a problem with the input. It is not a `MeshInjectError`
 * (src/results/errors.ts), so no boundary turns it into a result: it propagates as a crash, with its message.
 */
export class InternalError extends Error {
  constructor(message: string) {
    super(`internal error: ${message}`);
    this.name = 'InternalError';
  }
}

/**
 * `value` when it is not `undefined`.
 * @param what names the value for the error, as a constant phrase (`'the option table entry of --output'`)
 * @throws InternalError when `value` is `undefined`: the caller's invariant does not hold
 */
export function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new InternalError(`${what} is missing`);
  return value;
}
