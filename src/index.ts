/**
 * meshinject's library API (TypeScript sources), for tests and embedding through a TypeScript loader.
 * The CLI (`src/cli.ts`) is a thin shell over `run`.
 *
 * ```ts
 * import { run } from './src/index.ts';
 * const out = run(resourceListYaml, { logToStderr: false });
 * if (out.exitCode === 0) process.stdout.write(out.stdout);
 * ```
 */
export { run } from './run.ts';
export type { RunOptions, RunOutput } from './run.ts';
export { loadConfig } from './config/load.ts';
export type { LoadResult } from './config/load.ts';
export type { Config, MeshName, ExtraWorkloadKind } from './model.ts';
export { decide } from './selection/policy.ts';
export type { DecideInput } from './selection/policy.ts';
export { matchesSelector } from './selection/label-selector.ts';
export { WORKLOAD_KINDS, lookupWorkloadKind } from './workloads/kinds.ts';
export type { WorkloadKind } from './workloads/kinds.ts';
export { DRIVERS, driverNames, findDriver } from './drivers/registry.ts';
export { bindDriver, defineDriver } from './contract/driver.ts';
export type {
  ActiveMesh,
  DriverDecision,
  DriverFlags,
  DriverHelp,
  DriverTraits,
  SharedSettings,
  Inventory,
  MeshDriver,
  InjectRequest,
  InjectResponse,
  ReasonInfo,
  WorkloadRef,
} from './contract/driver.ts';
export { istioDriver } from './drivers/istio/index.ts';
export type { IstioSettings } from './drivers/istio/index.ts';
export { parseSource } from './krm/source.ts';
export type { ParsedSource, SourceItem, SourceForm } from './krm/source.ts';
export { writeOutput } from './krm/write.ts';
export { processItems, RESULT_ANNOTATION } from './pipeline.ts';
export { MeshInjectError, InjectError } from './results/errors.ts';
export type { ErrorCode, ErrorData, ErrorPlace } from './results/errors.ts';
export type {
  Decision,
  DecisionReason,
  DecisionStep,
  KrmResult,
  LabelSelector,
  NamespaceInfo,
  PodTemplate,
  Severity,
} from './model.ts';
