/**
 * The custom driver's own opt-in/opt-out: the pod label `meshinject.dev/inject`, else the pod annotation of
 * the same name, `"true"` or `"false"`; anything else is an error naming the field. Without either, the shared
 * never/always selectors and `spec.policy` decide.
 */
import type { DecisionStep } from '../../model.ts';
import { quoteData } from '../../results/quote.ts';
import type { DriverDecideInput, DriverDecision } from '../../contract/driver.ts';
import { InjectError } from '../../results/errors.ts';
import type { CustomSettings } from './config.ts';

/** Pod label (or annotation) opting a pod in or out of the custom injection. */
export const CUSTOM_INJECT_KEY = 'meshinject.dev/inject';

/**
 * Decides from `meshinject.dev/inject` (label first). Reason codes `label-true`, `label-false`,
 * `annotation-true`, `annotation-false`.
 * @throws InjectError for a value other than "true" or "false"
 */
export function decideCustom(input: DriverDecideInput<CustomSettings>): DriverDecision {
  const trace: DecisionStep[] = [];
  for (const source of ['label', 'annotation'] as const) {
    const map = (source === 'label' ? input.podMeta.labels : input.podMeta.annotations) ?? {};
    const raw = Object.hasOwn(map, CUSTOM_INJECT_KEY) ? map[CUSTOM_INJECT_KEY] : undefined;
    if (raw === undefined) continue;
    if (raw !== 'true' && raw !== 'false') {
      throw new InjectError(`pod ${source} ${CUSTOM_INJECT_KEY} must be "true" or "false"; got ${quoteData(raw)}`, {
        field: `metadata.${source}s[${CUSTOM_INJECT_KEY}]`,
        code: 'BAD_ANNOTATION',
      });
    }
    const detail = `pod ${source} ${CUSTOM_INJECT_KEY} is "${raw}"`;
    trace.push({ rule: `custom.inject-${source}`, saw: detail, outcome: 'decided' });
    return { verdict: { inject: raw === 'true', reason: `${source}-${raw}`, detail }, warnings: [], trace };
  }
  const undecided = `no ${CUSTOM_INJECT_KEY} label or annotation decides`;
  trace.push({ rule: 'custom.inject', saw: undecided, outcome: 'pass' });
  return { undecided, warnings: [], trace };
}
