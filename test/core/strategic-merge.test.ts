import t from 'tap';
import fc from 'fast-check';
import { cloneJson, strategicMerge, strategicMergeTrusted } from '../../src/patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../src/patch/patch-schema.ts';
import { fillsTrust, trustedPatch } from '../../src/patch/trusted-patch.ts';
import type { Json, JsonObject } from '../../src/model.ts';
import { withoutNulls } from '../../src/json.ts';

const names = (list: unknown): string[] => (list as Array<{ name: string }>).map((x) => x.name);

t.test('containers merge by name; injected containers new to the pod come first', async (t) => {
  const original: JsonObject = { spec: { containers: [{ name: 'app', image: 'a' }] } };
  const patch: JsonObject = { spec: { containers: [{ name: 'istio-proxy', image: 'p' }] } };
  const out = strategicMerge(original, patch, POD_SCHEMA);
  t.same(names((out.spec as JsonObject).containers), ['istio-proxy', 'app']);
  t.same(original, { spec: { containers: [{ name: 'app', image: 'a' }] } }, 'input not mutated');
});

t.test('an element present in both keeps the original order relative to original-only elements', async (t) => {
  const original: JsonObject = {
    spec: {
      containers: [
        { name: 'app', image: 'a' },
        { name: 'istio-proxy', image: 'auto', args: ['x'] },
      ],
    },
  };
  const patch: JsonObject = { spec: { containers: [{ name: 'istio-proxy', image: 'p', args: ['proxy', 'sidecar'] }] } };
  const out = strategicMerge(original, patch, POD_SCHEMA);
  const cs = (out.spec as JsonObject).containers as JsonObject[];
  t.same(names(cs), ['app', 'istio-proxy']);
  t.same(cs[1], { name: 'istio-proxy', image: 'p', args: ['proxy', 'sidecar'] }, 'scalars and args replaced');
});

t.test('volumes: template volumes before user volumes (proxy-override golden order)', async (t) => {
  const original: JsonObject = { spec: { volumes: [{ name: 'certs', secret: { secretName: 's' } }] } };
  const patch: JsonObject = {
    spec: {
      volumes: [
        { name: 'workload-socket', emptyDir: null },
        { name: 'istio-envoy', emptyDir: { medium: 'Memory' } },
      ],
    },
  };
  const out = strategicMerge(original, patch, POD_SCHEMA);
  const vols = (out.spec as JsonObject).volumes as JsonObject[];
  t.same(names(vols), ['workload-socket', 'istio-envoy', 'certs']);
  t.same(vols[0], { name: 'workload-socket' }, 'null values inside new elements are dropped');
});

t.test('env merges by name, ports by containerPort, volumeMounts by mountPath', async (t) => {
  const original: JsonObject = {
    spec: {
      containers: [
        {
          name: 'istio-proxy',
          env: [
            { name: 'A', value: 'user' },
            { name: 'U', value: 'u' },
          ],
          ports: [{ containerPort: 15090, name: 'old' }],
          volumeMounts: [{ mountPath: '/x', name: 'userx' }],
        },
      ],
    },
  };
  const patch: JsonObject = {
    spec: {
      containers: [
        {
          name: 'istio-proxy',
          env: [
            { name: 'A', value: 'tmpl' },
            { name: 'B', value: 'b' },
          ],
          ports: [{ containerPort: 15090, name: 'http-envoy-prom', protocol: 'TCP' }],
          volumeMounts: [{ mountPath: '/etc/istio/proxy', name: 'istio-envoy' }],
        },
      ],
    },
  };
  const c = ((strategicMerge(original, patch, POD_SCHEMA).spec as JsonObject).containers as JsonObject[])[0]!;
  t.same(c.env, [
    { name: 'A', value: 'tmpl' },
    { name: 'B', value: 'b' },
    { name: 'U', value: 'u' },
  ]);
  t.same(c.ports, [{ containerPort: 15090, name: 'http-envoy-prom', protocol: 'TCP' }]);
  t.same(c.volumeMounts, [
    { mountPath: '/etc/istio/proxy', name: 'istio-envoy' },
    { mountPath: '/x', name: 'userx' },
  ]);
});

t.test('maps merge, null deletes, lists without a strategy are replaced', async (t) => {
  const original: JsonObject = {
    metadata: { labels: { a: '1', b: '2' }, annotations: { x: 'y' } },
    spec: { tolerations: [{ key: 'k1' }], containers: [{ name: 'c', command: ['a', 'b'] }] },
  };
  const patch: JsonObject = {
    metadata: { labels: { b: '3', c: '4' }, annotations: { x: null } },
    spec: { tolerations: [{ key: 'k2' }], containers: [{ name: 'c', command: ['z'] }] },
  };
  const out = strategicMerge(original, patch, POD_SCHEMA);
  t.same(out.metadata, { labels: { a: '1', b: '3', c: '4' }, annotations: {} });
  t.same((out.spec as JsonObject).tolerations, [{ key: 'k2' }]);
  t.same(((out.spec as JsonObject).containers as JsonObject[])[0]!.command, ['z']);
});

t.test('$patch: replace on a map replaces it (Istio TestStrategicMerge)', async (t) => {
  const original: JsonObject = { metadata: { labels: { app: 'x', keep: 'no' } } };
  const patch: JsonObject = { metadata: { labels: { $patch: 'replace', only: 'this' } } };
  t.same(strategicMerge(original, patch, POD_SCHEMA).metadata, { labels: { only: 'this' } });
});

t.test('$patch: delete on a map empties it; unknown directive throws', async (t) => {
  const original: JsonObject = { metadata: { labels: { app: 'x' } } };
  t.same(strategicMerge(original, { metadata: { labels: { $patch: 'delete' } } }, POD_SCHEMA).metadata, { labels: {} });
  t.throws(
    () => strategicMerge(original, { metadata: { labels: { $patch: 'bogus' } } }, POD_SCHEMA),
    /unknown patch type/,
  );
});

t.test('list directives: delete an element by key, replace the list', async (t) => {
  const original: JsonObject = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
  const del = strategicMerge(original, { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }, POD_SCHEMA);
  t.same(names((del.spec as JsonObject).containers), ['b']);
  const rep = strategicMerge(original, { spec: { containers: [{ $patch: 'replace' }, { name: 'z' }] } }, POD_SCHEMA);
  t.same(names((rep.spec as JsonObject).containers), ['z']);
});

t.test('merge-key elements without the key are rejected', async (t) => {
  t.throws(
    () =>
      strategicMerge({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ image: 'x' }] } }, POD_SCHEMA),
    /merge key/,
  );
});

t.test('scalar lists with merge strategy are unioned (finalizers)', async (t) => {
  const out = strategicMerge(
    { metadata: { finalizers: ['a', 'b'] } },
    { metadata: { finalizers: ['c', 'a'] } },
    POD_SCHEMA,
  );
  t.same((out.metadata as JsonObject).finalizers, ['c', 'a', 'b']);
});

t.test('several templates merged in sequence: duplicate elements merge into one', async (t) => {
  const tmpl: JsonObject = { spec: { containers: [{ name: 'istio-proxy', image: 'p' }], volumes: [{ name: 'v' }] } };
  let pod: JsonObject = { spec: { containers: [{ name: 'app' }] } };
  for (let i = 0; i < 3; i++) pod = strategicMerge(pod, tmpl, POD_SCHEMA);
  t.same(names((pod.spec as JsonObject).containers), ['istio-proxy', 'app']);
  t.same(names((pod.spec as JsonObject).volumes), ['v']);
});

t.test('type mismatch: the patch value wins', async (t) => {
  const out = strategicMerge({ spec: { x: { a: 1 } } }, { spec: { x: ['a'] } }, POD_SCHEMA);
  t.same((out.spec as JsonObject).x, ['a']);
});

t.test(
  'mergeSortedSlice interleaving: server-only elements keep their place before later patch elements',
  async (t) => {
    const original: JsonObject = { spec: { volumes: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const patch: JsonObject = { spec: { volumes: [{ name: 'c' }, { name: 'd' }, { name: 'a' }] } };
    t.same(names((strategicMerge(original, patch, POD_SCHEMA).spec as JsonObject).volumes), ['b', 'c', 'd', 'a']);
  },
);

t.test(
  'a trusted patch merges exactly as the checked merge does, and only plain null-free patches are trusted',
  async (t) => {
    const original: JsonObject = {
      metadata: { annotations: { a: '1' } },
      spec: {
        containers: [{ name: 'app', image: 'a', env: [{ name: 'X', value: '1' }], ports: [{ containerPort: 80 }] }],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
    };
    const patch: JsonObject = {
      metadata: { annotations: { b: '2' }, labels: { l: 'v' } },
      spec: {
        containers: [
          { name: 'istio-proxy', image: 'p', args: ['proxy'] },
          { name: 'app', env: [{ name: 'Y', value: '2' }], ports: [{ containerPort: 15090 }] },
        ],
        initContainers: [{ name: 'istio-init', image: 'p' }],
        volumes: [{ name: 'istio-envoy', emptyDir: { medium: 'Memory' } }],
      },
    };
    const checked = trustedPatch(patch, POD_SCHEMA);
    t.ok(checked, 'a plain patch is trusted');
    const expected = strategicMerge(original, patch, POD_SCHEMA);
    const copied = strategicMergeTrusted(original, checked!, POD_SCHEMA, true);
    t.same(copied, expected);
    t.equal(JSON.stringify(copied), JSON.stringify(expected), 'same key and element order');
    t.not(
      (copied.spec as JsonObject).initContainers,
      (patch.spec as JsonObject).initContainers,
      'copy: true shares nothing with the patch',
    );
    const shared = strategicMergeTrusted(original, checked!, POD_SCHEMA, false);
    t.equal(JSON.stringify(shared), JSON.stringify(expected));
    t.equal(
      (shared.spec as JsonObject).initContainers,
      (patch.spec as JsonObject).initContainers,
      'copy: false takes new values as they are',
    );
    t.same(original.metadata, { annotations: { a: '1' } }, 'original not mutated');

    t.equal(
      trustedPatch({ metadata: { annotations: { a: null } } }, POD_SCHEMA),
      undefined,
      'a null deletes a key: not trusted',
    );
    t.equal(
      trustedPatch({ spec: { containers: [{ name: 'c', env: [{ name: 'E', value: null }] }] } }, POD_SCHEMA),
      undefined,
      'a nested null is pruned: not trusted',
    );
    t.equal(trustedPatch({ spec: { $patch: 'replace' } }, POD_SCHEMA), undefined, 'a directive: not trusted');
    t.equal(
      trustedPatch({ spec: { containers: [{ name: 'c' }, { name: 'c', image: 'x' }] } }, POD_SCHEMA),
      undefined,
      'duplicate merge keys: not trusted',
    );
    t.ok(
      trustedPatch({ spec: { containers: [{ name: 'c', args: [null] }] } }, POD_SCHEMA),
      'null list entries are kept by both paths',
    );
  },
);

t.test('cloneJson copies deeply and keeps non-finite numbers and __proto__ keys', async (t) => {
  const src = JSON.parse('{"a":{"b":[1,{"c":"d"}]},"__proto__":{"x":1}}') as JsonObject;
  (src.a as JsonObject).inf = Number.POSITIVE_INFINITY;
  const copy = cloneJson(src);
  t.same(copy, src);
  t.not(copy.a, src.a);
  t.not((copy.a as JsonObject).b, (src.a as JsonObject).b);
  t.equal((copy.a as JsonObject).inf, Number.POSITIVE_INFINITY);
  t.ok(Object.hasOwn(copy, '__proto__'), '__proto__ stays an own key');
  t.equal(Object.getPrototypeOf(copy), Object.prototype);
});

t.test('fillsTrust: one answer per template for every fill, where the template decides it', async (t) => {
  // Slots are the strings and keys holding "SLOT"; a fill writes any text there.
  const holds = (v: Json): boolean => JSON.stringify(v).includes('SLOT');
  const fillAll = (v: Json, text: string): JsonObject =>
    JSON.parse(JSON.stringify(v).replaceAll('SLOT', text.replace(/["\\]/g, ''))) as JsonObject;
  const texts = ['', '$patch', 'null', 'istio-proxy', 'app', 'a: b', '{}', '-'];
  const inValues: JsonObject = {
    metadata: { annotations: { 'sidecar.istio.io/status': '{"name":"SLOT"}' }, labels: { app: 'SLOT' } },
    spec: { containers: [{ name: 'istio-proxy', args: ['--id', 'SLOT'], env: [{ name: 'POD', value: 'SLOT' }] }] },
  };
  t.equal(fillsTrust(inValues, POD_SCHEMA, holds), 'all', 'slots in values only: every fill trusted');
  t.equal(fillsTrust(inValues, POD_SCHEMA, holds), 'all', 'and remembered');
  for (const text of texts)
    t.ok(
      trustedPatch(fillAll(inValues, text), POD_SCHEMA),
      `a fill with ${JSON.stringify(text)} passes the check itself`,
    );

  const inKey: JsonObject = { metadata: { labels: { SLOT: 'x' } } };
  t.equal(
    fillsTrust(inKey, POD_SCHEMA, holds),
    'each',
    'a slot in a map key: each fill is checked (it may be filled with a $ directive)',
  );
  t.notOk(trustedPatch(fillAll(inKey, '$patch'), POD_SCHEMA), '... as such a fill shows');
  t.ok(trustedPatch(fillAll(inKey, 'app'), POD_SCHEMA), '... while another passes');

  const inMergeKey: JsonObject = {
    spec: {
      containers: [
        { name: 'SLOT', image: 'a' },
        { name: 'app', image: 'b' },
      ],
    },
  };
  t.equal(
    fillsTrust(inMergeKey, POD_SCHEMA, holds),
    'each',
    'a slot in a merge key value: each fill is checked (fills may repeat)',
  );
  t.notOk(trustedPatch(fillAll(inMergeKey, 'app'), POD_SCHEMA), '... as a fill that repeats a name shows');
  t.equal(
    fillsTrust({ spec: { volumes: [{ name: 'SLOT' }] }, metadata: { name: 'x' } }, POD_SCHEMA, holds),
    'each',
    'volumes are merged by name too',
  );
  t.equal(
    fillsTrust({ metadata: { name: 'SLOT' }, spec: { hostname: 'SLOT' } }, POD_SCHEMA, holds),
    'all',
    'a name outside a merge-keyed list is a value',
  );

  // A template that fails the check fails it in every fill, slots anywhere.
  const failing: Record<string, JsonObject> = {
    'a null (Istio: "emptyDir:" without a value)': { spec: { volumes: [{ name: 'SLOT', emptyDir: null }] } },
    'a directive': { spec: { $patch: 'replace', hostname: 'SLOT' } },
    'repeated merge keys': { spec: { containers: [{ name: 'SLOT' }, { name: 'SLOT', args: ['x'] }] } },
    'an entry without its merge key': { spec: { containers: [{ image: 'SLOT' }] } },
  };
  for (const [what, template] of Object.entries(failing)) {
    t.equal(fillsTrust(template, POD_SCHEMA, holds), 'none', `${what}: no fill trusted`);
    for (const text of texts)
      t.notOk(
        trustedPatch(fillAll(template, text), POD_SCHEMA),
        `${what}, filled with ${JSON.stringify(text)}: fails itself`,
      );
  }
});

t.test(
  'values new to the original: plain ones come out as themselves without null map values, copied; others lose their directives',
  async (t) => {
    // Plain patches: no `$` key, containers with distinct names; nulls anywhere (a null map value is dropped from
    // a new value, a null list entry kept).
    const scalar = fc.oneof(
      fc.constant(null),
      fc.string({ maxLength: 3 }),
      fc.integer({ min: -2, max: 2 }),
      fc.boolean(),
    );
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'name', 'value', 'env'), tie('v'), { maxKeys: 3 }),
      ),
    })).v as fc.Arbitrary<Json>;
    const container = fc.record({
      image: value,
      env: fc.array(fc.record({ name: fc.constantFrom('A', 'B', 'C'), value }), { maxLength: 3 }),
    });
    const plainPatch = fc
      .record({
        labels: fc.dictionary(fc.constantFrom('x', 'y'), scalar, { maxKeys: 2 }),
        containers: fc.array(container, { maxLength: 3 }),
        extra: value,
      })
      .map(({ labels, containers, extra }) => ({
        metadata: { labels },
        spec: {
          // distinct container names and env names: plain
          containers: containers.map((c, i) => ({
            name: `c${i}`,
            ...c,
            env: c.env.filter((e, j) => c.env.findIndex((f) => f.name === e.name) === j),
          })),
          hostname: extra,
        },
      })) as fc.Arbitrary<JsonObject>;
    fc.assert(
      fc.property(plainPatch, (patch) => {
        const before = JSON.stringify(patch);
        const merged = strategicMerge({}, patch, POD_SCHEMA);
        if (JSON.stringify(merged) !== JSON.stringify(withoutNulls(patch))) return false;
        // The result holds copies: changing it leaves the patch as it was.
        const spec = merged.spec as JsonObject;
        for (const c of (spec.containers ?? []) as JsonObject[]) c.image = 'changed';
        return JSON.stringify(patch) === before;
      }),
      { numRuns: 300 },
    );
    t.pass('plain new values: withoutNulls of themselves, copied (300 patches)');

    // Not plain: a directive or repeated merge keys inside a new value are applied, not copied.
    t.same(
      strategicMerge(
        {},
        {
          spec: {
            volumes: [
              { name: 'a', $patch: 'delete' },
              { name: 'b', emptyDir: null },
            ],
          },
        },
        POD_SCHEMA,
      ),
      { spec: { volumes: [{ name: 'b' }] } },
      'a delete directive in a new list',
    );
    t.same(
      strategicMerge({}, { metadata: { labels: { $patch: 'replace', x: '1', y: null } } }, POD_SCHEMA),
      { metadata: { labels: { x: '1' } } },
      'a replace directive in a new map',
    );
    t.same(
      strategicMerge(
        { spec: {} },
        {
          spec: {
            containers: [
              { name: 'a', image: '1' },
              { name: 'a', args: ['x'] },
            ],
          },
        },
        POD_SCHEMA,
      ).spec,
      { containers: [{ name: 'a', image: '1', args: ['x'] }] },
      'repeated merge keys in a new list merge',
    );
  },
);
