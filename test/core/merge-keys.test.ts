/**
 * One table of strategic-merge keys (`MERGE_KEYS`) for the strategic merge and the text editors: a list
 * entry keeps its text (and its comments) where the merge keeps the entry, because both match entries by
 * the same key (`volumeMounts` by `mountPath`, `ports` by `containerPort`).
 */
import t from 'tap';
import { parse } from 'yaml';
import { parseSource } from '../../src/krm/source.ts';
import { emitChanged } from '../../src/edit/rewrite.ts';
import type { Json, JsonObject } from '../../src/model.ts';
import { strategicMerge } from '../../src/patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../src/patch/patch-schema.ts';
import { MERGE_KEYS, mergeKeyOf } from '../../src/workloads/merge-keys.ts';
import { matchEntries } from '../../src/edit/flow-edit.ts';

/** Rewrites a one-resource stream so that it reads as `next`; returns the new text. */
function edit(text: string, next: Json): string {
  const src = parseSource(text);
  const item = src.items[0]!;
  const out = emitChanged(item, src, next);
  return out === undefined ? text : text.slice(0, item.start) + out + text.slice(item.end);
}

const pod = `kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: app
      image: app:1
      ports:
        - name: http # the app's port
          containerPort: 8080
      volumeMounts:
        - name: data # logs
          mountPath: /var/log/app
        - name: data # cache
          mountPath: /var/cache/app
`;

t.test('the Kubernetes patchMergeKey of each list field', async (t) => {
  t.same(
    { ...MERGE_KEYS },
    {
      containers: 'name',
      initContainers: 'name',
      ephemeralContainers: 'name',
      volumes: 'name',
      imagePullSecrets: 'name',
      hostAliases: 'ip',
      topologySpreadConstraints: 'topologyKey',
      schedulingGates: 'name',
      resourceClaims: 'name',
      ports: 'containerPort',
      env: 'name',
      volumeMounts: 'mountPath',
      volumeDevices: 'devicePath',
      ownerReferences: 'uid',
    },
    'k8s.io/api core/v1 and meta/v1 struct tags',
  );
  t.equal(mergeKeyOf('tolerations'), undefined, 'tolerations have no merge key: replaced whole');
  t.equal(mergeKeyOf('args'), undefined, 'args are replaced whole');
  t.equal(mergeKeyOf('constructor'), undefined, 'no key from Object.prototype');
});

t.test('volumeMounts: the strategic merge and the text editor both match by mountPath', async (t) => {
  const old = parse(pod) as JsonObject;
  // The patch adds a mount of the same volume at another path: the merge puts it first (a new patch entry).
  const patched = strategicMerge(
    old,
    { spec: { containers: [{ name: 'app', volumeMounts: [{ name: 'data', mountPath: '/tmp/app' }] }] } },
    POD_SCHEMA,
  );
  const mounts = ((patched.spec as JsonObject).containers as JsonObject[])[0]!.volumeMounts;
  t.same(
    mounts,
    [
      { name: 'data', mountPath: '/tmp/app' },
      { name: 'data', mountPath: '/var/log/app' },
      { name: 'data', mountPath: '/var/cache/app' },
    ],
    'the merge adds the mount at /tmp/app and keeps the two others',
  );
  const out = edit(pod, patched);
  // Matched by name, the new mount would take the first old entry's text (and its comment `# logs`).
  t.match(
    out,
    '        - name: data # logs\n          mountPath: /var/log/app\n        - name: data # cache\n          mountPath: /var/cache/app\n',
    'each comment stays with its mount',
  );
  t.notMatch(out, /# logs\n\s*mountPath: \/tmp/, 'the new mount takes no old comment');
  t.same(parse(out), patched, 'the text reads as the merge result');
  // Matching by name would pair the first new entry with whichever old entry comes first for `data`.
  t.same(
    matchEntries(
      [
        { name: 'data', mountPath: '/a' },
        { name: 'data', mountPath: '/b' },
      ],
      [
        { name: 'data', mountPath: '/b' },
        { name: 'data', mountPath: '/a' },
      ],
      'volumeMounts',
    ),
    [1, 0],
    'matched by mountPath',
  );
});

t.test('ports: matched by containerPort, so a renamed port keeps its line and comment', async (t) => {
  const old = parse(pod) as JsonObject;
  const next = structuredClone(old) as JsonObject;
  (((next.spec as JsonObject).containers as JsonObject[])[0]!.ports as JsonObject[])[0]!.name = 'http-web';
  const out = edit(pod, next);
  t.match(
    out,
    "        - name: http-web # the app's port\n          containerPort: 8080\n",
    'the entry is edited in place: the comment stays',
  );
  t.same(parse(out), next);
});
