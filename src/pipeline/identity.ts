import type { ResourceId } from '../model.ts';
import type { ParsedSource, SourceItem } from '../krm/source.ts';
import { resourceResult } from '../results/result.ts';
import { duplicateMessage, fingerprintOf, identityOf } from '../krm/identity.ts';
import { ORIGINAL_ANNOTATION } from '../patch/status-record.ts';

import { type RunContext, obj, str, stringMap } from './context.ts';
import { isLocalConfig } from './annotate.ts';

/**
 * Identity of a resource for results. The file comes from kpt/kustomize's
 * `internal.config.kubernetes.io/{path,index}` (or the legacy `config.kubernetes.io/*`), else, for a plain
 * YAML stream, from the input name and document position.
 */
export function resourceId(item: SourceItem, source: ParsedSource, inputName: string | undefined): ResourceId {
  const v = obj(item.value) ?? {};
  const meta = obj(v.metadata) ?? {};
  const ann = stringMap(meta.annotations);
  const id: ResourceId = {
    apiVersion: str(v.apiVersion) ?? '',
    kind: str(v.kind) ?? '',
    name: str(meta.name) ?? str(meta.generateName) ?? '',
  };
  const ns = str(meta.namespace);
  if (ns) id.namespace = ns;
  const path = ann['internal.config.kubernetes.io/path'] ?? ann['config.kubernetes.io/path'];
  const index = ann['internal.config.kubernetes.io/index'] ?? ann['config.kubernetes.io/index'];
  if (path !== undefined) {
    id.filePath = path;
    id.fileIndex = index !== undefined && /^\d+$/.test(index) ? Number(index) : 0;
  } else if (source.form === 'stream' && inputName !== undefined) {
    id.filePath = inputName;
    id.fileIndex = item.topPosition;
  }
  return id;
}

/**
 * Where a resource is, for a person: the kpt/kustomize path annotation and index when present, else the input
 * and the document number (1-based) of a stream, or the item of a ResourceList or List.
 */
export function placeOf(item: SourceItem, source: ParsedSource, inputName: string | undefined): string {
  const ann = stringMap(obj(obj(item.value)?.metadata)?.annotations);
  const path = ann['internal.config.kubernetes.io/path'] ?? ann['config.kubernetes.io/path'];
  const file = inputName ?? 'stdin';
  const entry =
    source.form === 'stream'
      ? `${file} document ${item.topPosition + 1}${item.position !== item.topPosition ? ' (in a List)' : ''}`
      : `${file} items[${item.position}]`;
  if (path === undefined) return entry;
  const index = ann['internal.config.kubernetes.io/index'] ?? ann['config.kubernetes.io/index'] ?? '0';
  return `${path} (index ${index}; ${entry})`;
}

/**
 * One identity, one resource (`src/krm/identity.ts`): a second resource of an identity already seen in the run
 * gets an error result naming both places (a warning when the two are identical). Local config is not output and
 * is not checked.
 */
/**
 * The companion record keeps how each document was written (its source texts, a probe's key order): two documents
 * of the same content written two ways carry different records once injected, and are still one resource twice.
 */
const RECORDS: ReadonlySet<string> = new Set([ORIGINAL_ANNOTATION]);

export function checkIdentity(item: SourceItem, ctx: RunContext): void {
  const v = obj(item.value);
  if (!v || isLocalConfig(v)) return;
  const id = identityOf(v, ctx.config.defaultNamespace);
  if (!id) return;
  // An identity that occurs once in the run is never compared: no fingerprint (the table knows which repeat).
  const now = {
    place: placeOf(item, ctx.source, ctx.inputName),
    fingerprint: ctx.identities.needsFingerprint(id) ? fingerprintOf(v, RECORDS) : '',
  };
  const first = ctx.identities.see(id, now);
  if (!first) return;
  const { severity, message } = duplicateMessage(id, first, now);
  ctx.results.push(
    resourceResult(severity, message, resourceId(item, ctx.source, ctx.inputName), {
      tags: { 'meshinject.dev/reason': 'duplicate-resource' },
    }),
  );
}

export function describe(id: ResourceId): string {
  return `${id.kind} "${id.namespace ? `${id.namespace}/` : ''}${id.name}"`;
}
