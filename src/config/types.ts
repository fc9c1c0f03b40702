/**
 * The validated core configuration. The types live in `src/model.ts` (the vocabulary every layer shares, so
 * that the driver contract does not import `config/`); this module names them for the config loader.
 */
export type { Config, ExtraWorkloadKind, KindPolicy, MeshName, TemplateBudgetSetting } from '../model.ts';
