/**
 * The pipeline's errors as results, in one place (issue #35 item 2). The stages (a driver's `decide`, `inject`,
 * `uninject`, `inventory` and `fromInput`, the text edit of `writeChange`) throw typed errors
 * (`MeshInjectError`, src/results/errors.ts); `orFailure` runs a stage and turns the errors its place maps
 * (`MAPPED`) into an error result naming the resource and the field, `quietly` runs a reading whose driver
 * error is not the workload's (it is reported by the stage that needs the answer), and `orElse` tries a stage a
 * second way. Any other error propagates: a defect, or bad input that stops the run (`BAD_INPUT`, run/inputs.ts
 * `orBadInput`). Every `catch` of the pipeline is here (test/house/pipeline-catches.test.ts).
 */
import type { KrmResult } from '../model.ts';
import type { SourceItem } from '../krm/source.ts';
import { type ErrorCode, errorTags, MeshInjectError } from '../results/errors.ts';
import { generalResult, resourceResult } from '../results/result.ts';
import { resourceField } from './annotate.ts';
import type { RunContext, Workload } from './context.ts';
import { describe, resourceId } from './identity.ts';

/**
 * Where a stage ran, which says how its error reads as a result:
 * - `decide`: a workload's decision; the error's field is relative to the pod metadata the webhook reads (the
 *   pod's own, `templatePath` + `metadata`), the message starts with the workload;
 * - `inject`, `uninject`: a workload's pod template (its record read by `inventory` included); the field relative
 *   to the pod template as the driver read it (its `podMetadataPath` for metadata), the message starts with the
 *   workload;
 * - `write`: a resource's text edit (`UNFAITHFUL_EDIT`: the message names the construct and its line);
 * - `input`: the driver's settings completed from the input (`fromInput`, `BAD_CONFIG`): a result of the run.
 */
export type FailurePlace =
  | { readonly stage: 'decide' | 'inject' | 'uninject'; readonly w: Workload }
  | { readonly stage: 'write'; readonly item: SourceItem; readonly ctx: RunContext }
  | { readonly stage: 'input' };

/** The error codes each stage turns into a result (`all`: every `MeshInjectError`); others propagate. */
const MAPPED: Readonly<Record<FailurePlace['stage'], 'all' | readonly ErrorCode[]>> = {
  decide: 'all',
  inject: 'all',
  uninject: 'all',
  write: ['UNFAITHFUL_EDIT'],
  input: ['BAD_CONFIG'],
};

/** Whether `e` is an error that `at` turns into a result. */
function mapped(e: unknown, at: FailurePlace): e is MeshInjectError {
  if (!(e instanceof MeshInjectError)) return false;
  const codes = MAPPED[at.stage];
  return codes === 'all' || codes.includes(e.code);
}

/**
 * The error result of a stage's error `e` at `at` (see `FailurePlace`): severity `error`, the error's rule as
 * its tag (`errorTags`), the resource and the field path from the resource root.
 * @throws e itself when `at` does not map it (not a `MeshInjectError`, or a code of another stage)
 */
export function failureResult(e: unknown, at: FailurePlace): KrmResult {
  if (!mapped(e, at)) throw e;
  switch (at.stage) {
    case 'input':
      return generalResult('error', e.message, e.field);
    case 'write':
      return resourceResult('error', e.message, resourceId(at.item, at.ctx.source, at.ctx.inputName), {
        tags: errorTags(e.code),
      });
    default: {
      const { w } = at;
      const metaPath = at.stage === 'decide' ? [...w.wk.templatePath, 'metadata'] : undefined;
      const field = e.field ? resourceField(w.wk, e.field, metaPath) : undefined;
      return resourceResult('error', `${describe(w.id)}: ${e.message}`, w.id, {
        ...(field ? { field } : {}),
        tags: errorTags(e.code),
      });
    }
  }
}

/** What a failed stage gives: its result was pushed. */
export const FAILED = 'failed';

/**
 * Runs stage `f` at `at`: its value, or `FAILED` after pushing the result of an error `at` maps onto `results`.
 * @throws any error `at` does not map (see `failureResult`)
 */
export function orFailure<T>(results: KrmResult[], at: FailurePlace, f: () => T): T | typeof FAILED {
  try {
    return f();
  } catch (e) {
    results.push(failureResult(e, at));
    return FAILED;
  }
}

/**
 * Runs a reading `f` whose driver error (`MeshInjectError`) is not the workload's error: `fallback` then. Used
 * where the answer only adds to a result (the other reading of a decision, the sidecars a record names) or where
 * the stage that needs it reports the error itself (`inventory` before an injection).
 * @throws any other error
 */
export function quietly<T, F>(f: () => T, fallback: F): T | F {
  try {
    return f();
  } catch (e) {
    if (e instanceof MeshInjectError) return fallback;
    throw e;
  }
}

/**
 * `f()`, or when it throws, `then(error)`: a stage tried a second way (an injection again without sidecar plans,
 * `againWithoutPlans` of ./workload.ts), whose own errors reach `orFailure`.
 */
export function orElse<T>(f: () => T, then: (e: unknown) => T): T {
  try {
    return f();
  } catch (e) {
    return then(e);
  }
}
