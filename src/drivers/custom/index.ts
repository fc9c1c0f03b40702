/**
 * The `custom` driver: your own sidecar, written as Handlebars templates of a pod fragment (inline in
 * `spec.custom.templates`, or data keys of local-config ConfigMaps in the input), with the data model of
 * `./render.ts` and the shared helper set (src/render/template-functions.ts). It needs nothing the Istio driver
 * does not: config section (`./config.ts`, `./config.schema.json`), decision (`./decide.ts`, reason codes
 * `./reasons.ts`), injection and status (`./inject.ts`); uninject is the generic removal of what `meshinject.dev/custom-status` records, once
 * that record is checked against what its templates add (`./uninject.ts`).
 */
import { defineDriver, type MeshDriver } from '../../contract/driver.ts';
import { jobTemplateTraits } from '../kit/cronjob.ts';
import { loadCustomConfig, templatesFromPackage, type CustomSettings } from './config.ts';
import { decideCustom } from './decide.ts';
import { CUSTOM_REASON_INFO, CUSTOM_REASONS } from './reasons.ts';
import { customInventory, injectCustomPod } from './inject.ts';
import { uninjectCustom } from './uninject.ts';

export type { CustomSettings } from './config.ts';

/** The `custom` mesh driver. `inject` throws `InjectError` for template failures and fragments that would change the pod. */
export const customDriver: MeshDriver<CustomSettings> = defineDriver<CustomSettings>({
  name: 'custom',
  reasons: CUSTOM_REASONS,
  reasonInfo: CUSTOM_REASON_INFO,
  help: {
    config: 'custom: {templates: {sidecar: "..."}, values: {...}}           # Handlebars templates of your own',
    optIn: 'custom meshinject.dev/inject',
  },
  traits: {
    // A built-in CronJob's labels and annotations at spec.jobTemplate.metadata, as istioctl kube-inject reads
    // them (and as this driver always has).
    ...jobTemplateTraits('istioctl kube-inject'),
    platformFields: ['templates', 'templateConfigMaps', 'values'], // the templates and what they render
  },
  loadConfig: loadCustomConfig,
  decide: decideCustom,
  inject(req) {
    const { pod, templates } = injectCustomPod(req);
    return { pod, summary: `custom, templates ${templates.join(',')}`, warnings: [] };
  },
  inventory: customInventory,
  uninject: uninjectCustom,
  fromInput: (settings, configMaps) => ({
    settings:
      settings.templateConfigMaps.length === 0
        ? settings
        : templatesFromPackage(settings, configMaps(settings.templateConfigMaps)),
    notes: [],
  }),
});
