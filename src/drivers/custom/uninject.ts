/**
 * The custom driver's status record (`meshinject.dev/custom-status`) is not taken on trust (issue #8, as
 * Istio's `sidecar.istio.io/status`): before a re-injection or an uninject removes what it lists, every
 * container, init container, label and annotation it names must be one that a template adds when rendered
 * for the pod without them: a template the record names, or one the pod selects now (so that re-injection
 * after a template change still replaces the old injection); a template no longer defined is skipped. A
 * recorded volume must be added by such a template too, or be mounted by no container that stays (the
 * engine's `removeInventory` proves the latter: removing it changes no container). A record naming the user's
 * own container, label or annotation is refused with an error naming the annotation instead of deleting
 * them. The check is the engine's `unexpectedRecordItem` (src/patch/uninject.ts); only what the driver can
 * inject is the driver's.
 */
import type { Json, NamespaceInfo, PodTemplate } from '../../model.ts';
import { isJsonObject } from '../../json.ts';
import type { Inventory, UninjectContext, WorkloadRef } from '../../contract/driver.ts';
import { mountedBy, unexpectedRecordItem, untrustedRecordError } from '../../patch/uninject.ts';
import { InjectError } from '../../results/errors.ts';
import type { CustomSettings } from './config.ts';
import { CUSTOM_STATUS_ANNOTATION, parseCustomStatus, selectedTemplates, type CustomStatus } from './inject.ts';
import { customTemplateData, renderCustomTemplate } from './render.ts';
import { defined } from '../../checked.ts';

const namesIn = (v: Json | undefined): string[] =>
  Array.isArray(v) ? v.filter(isJsonObject).map((e) => String(e.name)) : [];
const keysIn = (v: Json | undefined): string[] => (isJsonObject(v) ? Object.keys(v) : []);

/**
 * Checks `status` (read from the pod as injected) against what the templates add when rendered for `stripped`
 * (the pod without what the status lists: the data the injection rendered with); see the module comment.
 * @throws InjectError naming `metadata.annotations[meshinject.dev/custom-status]` for an item no template
 *   adds; a template's own error
 */
export function checkCustomStatus(
  stripped: PodTemplate,
  status: CustomStatus,
  where: { workload: WorkloadRef; namespace?: NamespaceInfo; settings: CustomSettings },
): void {
  let selected: string[] = [];
  try {
    selected = selectedTemplates(stripped, where.settings);
  } catch (e) {
    if (!(e instanceof InjectError)) throw e; // a template the pod names is not defined: only the recorded ones
  }
  const templates = [...new Set([...status.templates, ...selected])].filter((n) => where.settings.templates.has(n));
  const data = customTemplateData(stripped, where.workload, where.namespace, where.settings.values);
  const added = {
    containers: new Set<string>(),
    initContainers: new Set<string>(),
    volumes: new Set<string>(),
    labels: new Set<string>(),
    annotations: new Set<string>(),
  };
  for (const name of templates) {
    const fragment = renderCustomTemplate(name, defined(where.settings.templates.get(name), `template ${name}`), data);
    const spec = isJsonObject(fragment.spec) ? fragment.spec : {};
    const meta = isJsonObject(fragment.metadata) ? fragment.metadata : {};
    for (const n of namesIn(spec.containers)) added.containers.add(n);
    for (const n of namesIn(spec.initContainers)) added.initContainers.add(n);
    for (const n of namesIn(spec.volumes)) added.volumes.add(n);
    for (const k of keysIn(meta.labels)) added.labels.add(k);
    for (const k of keysIn(meta.annotations)) added.annotations.add(k);
  }
  for (const v of status.volumes) if (mountedBy(stripped.spec, v, new Set()) === undefined) added.volumes.add(v);
  const item = unexpectedRecordItem([
    ['container', status.containers, added.containers],
    ['init container', status.initContainers, added.initContainers],
    ['volume', status.volumes, added.volumes],
    ['label', status.labels, added.labels],
    ['annotation', status.annotations, added.annotations],
  ]);
  if (item)
    throw untrustedRecordError(
      CUSTOM_STATUS_ANNOTATION,
      item,
      `no template (${templates.join(', ') || 'none defined'}) adds a ${item.kind} of that name`,
    );
}

/**
 * The custom driver's `uninject` hook: the generic removal already took away what the status lists; this
 * refuses the result unless the record passes {@link checkCustomStatus}. Returns `pod` unchanged.
 */
export function uninjectCustom(
  pod: PodTemplate,
  _inv: Inventory,
  settings: CustomSettings,
  ctx: UninjectContext,
): PodTemplate {
  const status = parseCustomStatus(ctx.injected);
  if (status)
    checkCustomStatus(pod, status, {
      workload: ctx.workload,
      ...(ctx.namespace ? { namespace: ctx.namespace } : {}),
      settings,
    });
  return pod;
}
