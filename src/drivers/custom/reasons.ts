/**
 * The reason codes of the custom driver's decision (`./decide.ts`: the pod label or annotation
 * `meshinject.dev/inject`), as data: each code's description and whether it is an opt-out.
 */
import type { ReasonInfo } from '../../contract/driver.ts';

/** The reason codes of {@link decideCustom}. */
export const CUSTOM_REASONS: readonly string[] = ['label-true', 'label-false', 'annotation-true', 'annotation-false'];

/** What each of `CUSTOM_REASONS` means (`MeshDriver.reasonInfo`). */
export const CUSTOM_REASON_INFO: Readonly<Record<string, ReasonInfo>> = {
  'label-true': { description: 'the pod label meshinject.dev/inject is "true"' },
  'label-false': { description: 'the pod label meshinject.dev/inject is "false"', optOut: true },
  'annotation-true': { description: 'the pod annotation meshinject.dev/inject is "true"' },
  'annotation-false': { description: 'the pod annotation meshinject.dev/inject is "false"', optOut: true },
};
