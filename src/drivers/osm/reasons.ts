/**
 * The reason codes of the OSM family's decision (`./decide.ts`, OSM `mustInject`), as data: the codes, and for
 * one flavor (its annotation prefix and title) each code's description and whether it is an opt-out.
 */
import type { ReasonInfo } from '../../contract/driver.ts';
import { keys, type Flavor } from './flavor.ts';

/** Every reason code `decideOsmFamily` returns (see its steps). */
export const OSM_FAMILY_REASONS: readonly string[] = [
  'control-plane-namespace',
  'system-namespace',
  'namespace-not-monitored',
  'namespace-ignored',
  'namespace-control-plane-label',
  'pod-annotation-enabled',
  'pod-annotation-disabled',
  'namespace-annotation-enabled',
  'namespace-annotation-disabled',
];

/** What each of `OSM_FAMILY_REASONS` means for one flavor (its annotation prefix and title). */
export function osmFamilyReasonInfo(f: Flavor): Record<string, ReasonInfo> {
  const k = keys(f);
  return {
    'control-plane-namespace': { description: `the namespace is ${f.title}'s control-plane namespace` },
    'system-namespace': { description: `the namespace is a system namespace ${f.title} never injects` },
    'namespace-not-monitored': { description: `the namespace is not monitored by the mesh (${k.monitoredBy})` },
    'namespace-ignored': { description: `the namespace has the label ${k.ignore}` },
    'namespace-control-plane-label': {
      description: `the namespace has the label control-plane, which ${f.title}'s webhook excludes`,
    },
    'pod-annotation-enabled': { description: `the pod annotation ${k.injection} is enabled` },
    'pod-annotation-disabled': { description: `the pod annotation ${k.injection} is disabled`, optOut: true },
    'namespace-annotation-enabled': { description: `the namespace annotation ${k.injection} is enabled` },
    'namespace-annotation-disabled': {
      description: `the namespace annotation ${k.injection} is disabled`,
      optOut: true,
    },
  };
}
