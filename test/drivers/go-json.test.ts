/**
 * `src/drivers/go-json.ts`: Go `encoding/json` into and out of typed structs, checked against what Go's documented
 * rules give (encoding/json: "Unmarshal matches incoming object keys to the keys used by Marshal ... preferring an
 * exact match but also accepting a case-insensitive match"; `omitempty`: "false, 0, a nil pointer, a nil interface
 * value, and any empty array, slice, map, or string"; "map keys are sorted"; HTML-safe escaping by default).
 */
import t from 'tap';
import { decodeGo, encodeGo, GO, GoJsonError } from '../../src/drivers/go-json.ts';

const HEADER = GO.struct('v1.HTTPHeader', [
  { json: 'name', type: GO.string },
  { json: 'value', type: GO.string },
]);
const ACTION = GO.struct('v1.HTTPGetAction', [
  { json: 'path', type: GO.string, omitEmpty: true },
  { json: 'port', type: GO.intOrString },
  { json: 'headers', type: GO.slice(HEADER), omitEmpty: true },
  { json: 'service', type: GO.pointer(GO.string) },
  { json: 'timeout', type: GO.int32, omitEmpty: true },
]);

t.test(
  'decoding: struct fields by name, unknown keys dropped, null and absent are zero, a later key wins',
  async (t) => {
    t.same(decodeGo({ port: 80, extra: 1, path: '/a', service: null }, ACTION), {
      path: '/a',
      port: 80,
      headers: null,
      service: null,
      timeout: 0,
    });
    t.same(decodeGo({ port: 'http' }, ACTION), { path: '', port: 'http', headers: null, service: null, timeout: 0 });
    // Case-insensitive only where asked (Go's json.Unmarshal; the Kubernetes decoders match exactly).
    t.equal((decodeGo({ PATH: '/x' }, ACTION) as { path: string }).path, '');
    t.equal((decodeGo({ PATH: '/x' }, ACTION, { caseInsensitive: true }) as { path: string }).path, '/x');
    // Unicode simple folding: the Kelvin sign K folds to k, the long s to s.
    const K = GO.struct('K', [{ json: 'kind', type: GO.string }]);
    t.same(decodeGo({ '\u212aind': 'x' }, K, { caseInsensitive: true }), { kind: 'x' });
    const S = GO.struct('S', [{ json: 'service', type: GO.string }]);
    t.same(decodeGo({ '\u017fervice': 'y' }, S, { caseInsensitive: true }), { service: 'y' });
    // Two keys for one field: the later one is what Go keeps.
    t.same(decodeGo({ path: '/first', PATH: '/second' }, ACTION, { caseInsensitive: true }), {
      path: '/second',
      port: 0,
      headers: null,
      service: null,
      timeout: 0,
    });
  },
);

t.test("decoding refuses what Go's decoder refuses, naming where", async (t) => {
  const refused = (v: unknown, message: string, path: Array<string | number>) => {
    try {
      decodeGo(v as never, ACTION);
      t.fail(`decoded ${JSON.stringify(v)}`);
    } catch (e) {
      t.ok(e instanceof GoJsonError);
      t.equal((e as GoJsonError).message, message);
      t.same((e as GoJsonError).path, path);
    }
  };
  refused({ path: 5 }, 'json: cannot unmarshal number 5 into Go struct field v1.HTTPGetAction.path of type string', [
    'path',
  ]);
  refused({ port: 1.5 }, 'json: cannot unmarshal number 1.5 into Go struct field v1.HTTPGetAction.port of type int32', [
    'port',
  ]);
  refused(
    { port: 2147483648 },
    'json: cannot unmarshal number 2147483648 into Go struct field v1.HTTPGetAction.port of type int32',
    ['port'],
  );
  refused({ port: true }, 'json: cannot unmarshal bool into Go struct field v1.HTTPGetAction.port of type int32', [
    'port',
  ]);
  refused(
    { port: 1, headers: [{ name: 'a', value: [] }] },
    'json: cannot unmarshal array into Go struct field v1.HTTPGetAction.headers.value of type string',
    ['headers', 0, 'value'],
  );
  refused('x', 'json: cannot unmarshal string into Go value of type v1.HTTPGetAction', []);
});

t.test(
  'encoding: declaration order, omitempty, a nil pointer written null, maps sorted, HTML-safe strings',
  async (t) => {
    const v = decodeGo({ timeout: 3, service: '', port: 80, path: 'a<b>&c\u2028' }, ACTION);
    t.equal(
      encodeGo(v, ACTION),
      '{"path":"a\\u003cb\\u003e\\u0026c\\u2028","port":80,"service":"","timeout":3}',
      'a pointer to "" is kept; omitempty drops the empty list',
    );
    t.equal(encodeGo(decodeGo({ port: 'http' }, ACTION), ACTION), '{"port":"http","service":null}');
    const map = GO.map(GO.pointer(GO.string));
    // Go sorts map keys as UTF-8 bytes: U+FF5E (3 bytes, EF BD 9E) before U+1F600 (4 bytes, F0 ...), which UTF-16
    // order puts the other way round.
    t.equal(
      encodeGo(decodeGo({ b: 'x', a: null, '\u{1f600}': 'e', '\uff5e': 'w' }, map), map),
      '{"a":null,"b":"x","\uff5e":"w","\u{1f600}":"e"}',
    );
    t.equal(encodeGo(null, map), 'null');
  },
);
