/**
 * Shared plan parts (issue #24): the token-free parts of a sidecar plan's output are the same deep-frozen
 * objects in every workload the plan serves (src/json.ts `share`); their text is written once per place
 * (src/yaml/emit/emit-block.ts) and proven once per text (src/yaml/read/fragment-reader.ts, tested there); a driver
 * that writes into one fails, and the workload is injected again without plans (src/pipeline.ts).
 * What a user sees must not change: the same bytes with plans on and off.
 */
import t from 'tap';
import { cloneJson, hasNullEntry, isShared, owned, share, withoutNulls } from '../../src/json.ts';
import { emitAfterDash, emitAfterKey, type BlockStyle } from '../../src/yaml/emit/emit-block.ts';
import type { PlanStats, RunPlanSettings } from '../../src/render/plans.ts';
import { createRenderRun } from '../../src/render/run-state.ts';
import { run } from '../../src/run.ts';
import { loadConfig } from '../../src/config/load.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';
import { collectNamespaces, processItems } from '../../src/pipeline.ts';
import { parseSource } from '../../src/krm/source.ts';
import { writeOutput } from '../../src/krm/write.ts';
import type { ActiveMesh } from '../../src/contract/driver.ts';
import type { Json, JsonObject } from '../../src/model.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

t.test(
  'share: deep-frozen, every part marked; owned copies a shared part before a change; withoutNulls keeps a shared part without nulls',
  async (t) => {
    const v = share({ a: { b: [1, { c: 'x' }] }, n: null } as JsonObject);
    t.ok(
      isShared(v) && isShared(v.a) && isShared((v.a as JsonObject).b) && isShared(((v.a as JsonObject).b as Json[])[1]),
      'every collection inside is shared',
    );
    t.throws(
      () => {
        ((v.a as JsonObject).b as Json[]).push(2);
      },
      TypeError,
      'a write throws',
    );
    const parent: JsonObject = { part: v.a! };
    const mine = owned<JsonObject>(parent, 'part')!;
    t.not(mine, v.a, 'a copy');
    t.same(mine, v.a, 'equal to the shared part');
    t.equal(parent.part, mine, "now the parent's");
    t.notOk(isShared(mine), 'writable');
    t.equal(mine.b, (v.a as JsonObject).b, 'a shallow copy: what it holds is still shared (copy on write)');
    const list = owned<Json[]>(mine, 'b')!;
    list.push(2);
    owned<JsonObject>(list, 1)!.c = 'y';
    t.same(mine, { b: [1, { c: 'y' }, 2] }, 'changed through owned() at each level');
    t.same((v.a as JsonObject).b, [1, { c: 'x' }], 'the shared part is as it was');
    const plain: JsonObject = { x: { y: 1 } };
    t.equal(owned(plain, 'x'), plain.x, 'a part that is not shared is returned as it is');
    t.equal(owned(plain, 'missing'), undefined);
    t.equal(withoutNulls(v.a!), v.a, 'a shared part without nulls is its own copy');
    t.same(withoutNulls(v), { a: { b: [1, { c: 'x' }] } }, 'one with nulls is copied without them');
    t.equal(hasNullEntry(v), true);
    t.equal(hasNullEntry(v), true, 'remembered, the same answer');
    t.equal(hasNullEntry(v.a!), false);
    t.equal(hasNullEntry(share([null, { k: [null] }] as Json[])), false, 'null array entries do not count');
  },
);

t.test(
  'the text of a shared part is written once per place, and is the text of an equal part that is not shared',
  async (t) => {
    const container: JsonObject = {
      name: 'istio-proxy',
      args: ['proxy', 'sidecar', '--domain', '$(POD_NAMESPACE).svc.cluster.local'],
      ports: [{ containerPort: 15090, protocol: 'TCP', name: 'http-envoy-prom' }],
      env: [
        { name: 'A', value: '' },
        { name: 'B', value: '15020' },
        { name: 'C', value: 'line1\nline2\n' },
        { name: 'D', value: null },
      ],
      securityContext: { capabilities: { drop: ['ALL'] }, runAsUser: 1337 },
    };
    const shared = share(cloneJson(container));
    const styles: BlockStyle[] = [
      { seqIndent: 'compact' },
      { seqIndent: 'wide' },
      { seqIndent: 'wide', keepNulls: true },
    ];
    // Each place twice, in an order where a text made for one place would show up at another.
    for (const round of [1, 2]) {
      for (const style of styles) {
        for (const col of [0, 2, 6, 4]) {
          t.equal(
            emitAfterDash(shared, col, style),
            emitAfterDash(container, col, style),
            `after a dash at ${col}, ${JSON.stringify(style)}, round ${round}`,
          );
          t.equal(
            emitAfterKey(shared, col, style),
            emitAfterKey(container, col, style),
            `after a key at ${col}, ${JSON.stringify(style)}, round ${round}`,
          );
        }
      }
    }
    t.match(
      emitAfterKey(shared, 2, { seqIndent: 'wide', keepNulls: true }),
      /value: null/,
      'keepNulls is part of the place',
    );
    t.notMatch(emitAfterKey(shared, 2, { seqIndent: 'wide' }), /value: null/);
  },
);

const deployment = (name: string, i: number, extra = '', wide = false) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: team-${i % 3}
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels:
        app: ${name}${extra}
    spec:
      containers:
${
  wide
    ? `        - name: ${name}
          image: registry.example/${name}:${i}
          ports:
            - containerPort: ${8000 + i}`
    : `      - name: ${name}
        image: registry.example/${name}:${i}
        ports:
        - containerPort: ${8000 + i}`
}
`;

const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec: {mesh: istio, policy: enabled}\n';

/** The same input with plans off, then on: both outputs, and how many renders plans served. */
function offAndOn(input: string, functionConfig = CONFIG) {
  const off = run(input, { functionConfig, plans: { enabled: false } });
  const stats: PlanStats = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  const on = run(input, { functionConfig, plans: { stats } });
  // What a run leaves for the next (shared parts, proven and read spans) must not change its output.
  const again = run(input, { functionConfig });
  return { off, on, again, hits: stats.hits };
}

t.test(
  'plans on and off give the same bytes where shared parts are written and proven: block and JSON, CRLF, list indentation, a ResourceList',
  async (t) => {
    const names = Array.from({ length: 12 }, (_, i) => `app-${i}`);
    const extra = (i: number) => (i % 4 === 1 ? '\n      annotations:\n        sidecar.istio.io/proxyCPU: 50m' : '');
    const stream = names.map((n, i) => deployment(n, i, extra(i))).join('---\n');
    const wide = names.map((n, i) => deployment(n, i, extra(i), true)).join('---\n');
    const crlf = stream.replace(/\n/g, '\r\n');
    const list = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${stream
      .split('---\n')
      .map((d) => `- ${d.trimEnd().replace(/\n/g, '\n  ')}\n`)
      .join('')}`;
    const json = names
      .map((n, i) =>
        JSON.stringify(
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: n, namespace: 'x' },
            spec: {
              template: { metadata: { labels: { app: n } }, spec: { containers: [{ name: n, image: `i:${i}` }] } },
            },
          },
          null,
          2,
        ),
      )
      .join('\n---\n');
    for (const [what, input] of [
      ['block', stream],
      ['wide lists', wide],
      ['CRLF', crlf],
      ['a ResourceList', list],
      ['JSON', json],
    ] as const) {
      const { off, on, again, hits } = offAndOn(input);
      t.equal(off.exitCode, 0, `${what}: ${off.stderr}`);
      t.equal(on.stdout, off.stdout, `${what}: byte for byte`);
      t.equal(again.stdout, off.stdout, `${what}: a second run in the same process, byte for byte`);
      t.ok(hits >= 6, `${what}: plans served ${hits} of 12 renders`);
      t.equal(
        (on.stdout.match(/name: istio-proxy|"name": "istio-proxy"/g) ?? []).length,
        12,
        `${what}: every workload injected`,
      );
    }
  },
);

t.test(
  'a driver that changes a shared part in place: the workload is injected again without plans (the same bytes); under plan verification it is reported',
  async (t) => {
    const input = Array.from({ length: 4 }, (_, i) => deployment(`svc-${i}`, i)).join('---\n');
    const loaded = loadConfig(
      {
        apiVersion: 'meshinject.dev/v1alpha1',
        kind: 'SidecarInjection',
        metadata: { name: 'c' },
        spec: { mesh: 'istio', policy: 'enabled', resultAnnotations: false },
      },
      DRIVERS,
    );
    if (!loaded.ok) throw new Error('config');
    // The careless driver: Istio's, then one more init container argument written into the list it got.
    const careless = (mesh: ActiveMesh): ActiveMesh =>
      Object.assign(Object.create(mesh) as ActiveMesh, {
        inject(req: Parameters<ActiveMesh['inject']>[0]) {
          const res = mesh.inject(req);
          const init = (res.pod.spec.initContainers as JsonObject[]).find((c) => c.name === 'istio-init')!;
          (init.args as Json[]).push('--careless');
          return res;
        },
        fromInput(configMaps: (names: readonly string[]) => readonly JsonObject[]) {
          const a = mesh.fromInput(configMaps);
          return { ...a, mesh: careless(a.mesh) };
        },
        // Its injection is not the render's, so the inject-time check may not reuse it (UninjectContext.injection:
        // under verification that reuse is reported too): the check renders, and the plans' verification is tried.
        ...(mesh.uninject
          ? {
              uninject(...[pod, inventory, context]: Parameters<NonNullable<ActiveMesh['uninject']>>) {
                const { injection: _, ...rest } = context;
                return mesh.uninject!(pod, inventory, rest);
              },
            }
          : {}),
      });
    const once = (mesh: ActiveMesh, plans: RunPlanSettings = {}) => {
      const source = parseSource(input);
      const shared = {
        namespaces: collectNamespaces(source.items, loaded.config, []),
        unknownNamespaces: new Map<string, number>(),
        run: createRenderRun({ plans }),
      };
      const res = processItems(source, loaded.config, mesh, undefined, shared);
      return writeOutput(source, res.changed, res.results);
    };
    const g = globalThis as Record<symbol, unknown>;
    const verifying = g[VERIFY_GLOBAL];
    try {
      g[VERIFY_GLOBAL] = false;
      const reference = once(careless(loaded.mesh), { enabled: false });
      const stats: PlanStats = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
      const planned = once(careless(loaded.mesh), { stats });
      t.ok(stats.hits > 0, 'plans served some renders (and were written into)');
      t.equal(planned, reference, 'the same bytes as without plans');
      t.equal((planned.match(/--careless/g) ?? []).length, 4, 'every workload has the change');
      g[VERIFY_GLOBAL] = true;
      t.throws(
        () => once(careless(loaded.mesh)),
        /the injection failed with plans and succeeded without them.*object is not extensible/,
        'under verification: an internal error naming it',
      );
    } finally {
      g[VERIFY_GLOBAL] = verifying;
    }
  },
);
