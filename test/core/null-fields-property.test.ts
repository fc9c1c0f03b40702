/**
 * Fields the injection reads or fills, written with no value (`annotations:`, `labels: ~`, `volumes: null`, a pod
 * template's `metadata:`): YAML null, which Kubernetes reads as absent. Found by fuzzing (2026-11-29): an
 * `annotations:` with no value ended every injecting driver with an internal error (the companion record read it
 * as a map), and uninject gave back neither a null `labels`, pod `metadata`, `initContainers` nor `volumes`
 * (the text editor writes no null: a null value means absent to it), and a second injection of a pod whose
 * `volumes:` had none wrote another record than the first (Linkerd, Kuma).
 *
 * An empty flow map written with inner spaces (`annotations: { }`) came back as `{}`, and a pod template's
 * `metadata: {}` without it: both are generated too.
 *
 * For every driver (test/helpers/round-trip-drivers.ts) and generated workloads of five kinds whose null fields
 * are any of the top-level and pod labels and annotations, the pod metadata itself, or a map in the pod metadata,
 * and the pod-spec lists the drivers fill, each spelled one of YAML's ways (nothing, `~`, `null`, `Null`, `NULL`,
 * with or without a comment), the lists also empty (`[]`), before or after `containers` and with or without a key
 * after them (the second injection of `volumes: []` before `serviceAccountName` wrote another record than the
 * first, for Linkerd and Kuma: the real-world kubebuilder manager among them), through `run` as the CLI runs it
 * (fixed seed, test/setup/property-seed.mjs; test/helpers/round-trip-drivers.ts `faithfulEveryDriver`):
 * - injecting exits 0 and changes the input (no internal error, no refusal);
 * - injecting the output again gives it back byte for byte;
 * - uninjecting the output gives back the input byte for byte.
 */
import t from 'tap';
import fc from 'fast-check';
import { faithfulEveryDriver } from '../helpers/round-trip-drivers.ts';

/** How a null is written after `key:`. */
const nullText = fc.constantFrom('', ' ~', ' null', ' Null', ' NULL', ' # none', ' ~ # none');

/** Where a kind keeps its pod template, as the lines above `metadata:`/`spec:` (indent of the template's keys). */
const KINDS: Record<string, { api: string; head: string[]; indent: string }> = {
  Deployment: { api: 'apps/v1', head: ['spec:', '  template:'], indent: '    ' },
  StatefulSet: { api: 'apps/v1', head: ['spec:', '  serviceName: web', '  template:'], indent: '    ' },
  DaemonSet: { api: 'apps/v1', head: ['spec:', '  template:'], indent: '    ' },
  Job: { api: 'batch/v1', head: ['spec:', '  template:'], indent: '    ' },
  Pod: { api: 'v1', head: [], indent: '' },
};

/** A field of the pod metadata: `null` (written with no value), an empty flow map, a map with entries, or left out. */
const podMap = fc.constantFrom<'null' | 'empty' | 'set' | 'absent'>('null', 'empty', 'set', 'absent');

const workload = fc
  .record({
    kind: fc.constantFrom(...Object.keys(KINDS)),
    topLabels: podMap,
    topAnnotations: podMap,
    podMeta: fc.constantFrom<'null' | 'empty' | 'maps'>('null', 'empty', 'maps'),
    podLabels: podMap,
    podAnnotations: podMap,
    initContainers: fc.boolean(),
    volumes: fc.boolean(),
    imagePullSecrets: fc.boolean(),
    nulls: fc.array(nullText, { minLength: 10, maxLength: 10 }),
    emptyLists: fc.boolean(),
    emptyMap: fc.constantFrom('{}', '{ }', '{  }'),
    listsLast: fc.boolean(),
    keyAfter: fc.boolean(),
  })
  .filter(
    (w) =>
      [w.topLabels, w.topAnnotations, w.podLabels, w.podAnnotations].includes('null') ||
      w.podMeta === 'null' ||
      w.initContainers ||
      w.volumes ||
      w.imagePullSecrets,
  )
  .map((w) => {
    const spec = KINDS[w.kind] as (typeof KINDS)[string];
    let n = 0;
    const none = (): string => w.nulls[n++ % w.nulls.length] as string;
    const map = (at: string, key: string, state: string, entry: string): string[] =>
      state === 'null'
        ? [`${at}${key}:${none()}`]
        : state === 'empty'
          ? [`${at}${key}: ${w.emptyMap}`]
          : state === 'set'
            ? [`${at}${key}:`, `${at}  ${entry}`]
            : [];
    const lines = [`apiVersion: ${spec.api}`, `kind: ${w.kind}`, 'metadata:', '  name: web', '  namespace: shop'];
    const at = spec.indent;
    const pod: string[] = [];
    if (w.kind === 'Pod') {
      // A Pod's own metadata is its pod metadata.
      lines.push(
        ...map('  ', 'labels', w.podLabels, 'app: web'),
        ...map('  ', 'annotations', w.podAnnotations, 'note: x'),
      );
    } else {
      lines.push(
        ...map('  ', 'labels', w.topLabels, 'tier: front'),
        ...map('  ', 'annotations', w.topAnnotations, 'team: a'),
      );
      if (w.podMeta === 'null') pod.push(`${at}metadata:${none()}`);
      else if (w.podMeta === 'empty') pod.push(`${at}metadata: ${w.emptyMap}`);
      else {
        const maps = [
          ...map(`${at}  `, 'labels', w.podLabels, 'app: web'),
          ...map(`${at}  `, 'annotations', w.podAnnotations, 'note: x'),
        ];
        if (maps.length > 0) pod.push(`${at}metadata:`, ...maps);
      }
    }
    const lists: string[] = [];
    for (const [list, on] of [
      ['initContainers', w.initContainers],
      ['volumes', w.volumes],
      ['imagePullSecrets', w.imagePullSecrets],
    ] as const)
      if (on) lists.push(`${at}  ${list}:${w.emptyLists ? ' []' : none()}`);
    const containers = [`${at}  containers:`, `${at}  - name: web`, `${at}    image: example/web:1.0`];
    pod.push(`${at}spec:`, ...(w.listsLast ? [...containers, ...lists] : [...lists, ...containers]));
    if (w.kind === 'Job') pod.push(`${at}  restartPolicy: Never`);
    if (w.keyAfter) pod.push(`${at}  serviceAccountName: web`);
    return `${[...lines, ...spec.head, ...pod].join('\n')}\n`;
  });

faithfulEveryDriver(t, 'null fields are injected, injected again and uninjected faithfully', workload);
