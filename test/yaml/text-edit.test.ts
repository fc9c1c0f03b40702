import t from 'tap';
import { parse } from 'yaml';
import { parseSource } from '../../src/krm/source.ts';
import { emitChanged } from '../../src/edit/rewrite.ts';
import type { Json } from '../../src/model.ts';
import { emitString } from '../../src/yaml/emit/emit-block.ts';

/** Rewrites a one-resource stream so that it reads as `next`; returns the new text. */
function patch(text: string, next: Json): string {
  const src = parseSource(text);
  const item = src.items[0]!;
  const out = emitChanged(item, src, next);
  return out === undefined ? text : text.slice(0, item.start) + out + text.slice(item.end);
}

const base = `# head
kind: Pod   # spaced comment
metadata:
  name: p
  labels: {app: p}
spec:
  containers:
    # first container
    - name: app     # the app
      image: 'app:1'
      args: ["--x", "--y"]
    - name: side
      image: side:1
  volumes:
    - name: data
      emptyDir: {}
`;

t.test('unchanged data leaves the text alone', async (t) => {
  t.equal(patch(base, parse(base)), base);
});

t.test('every edit keeps untouched lines, comments and spacing byte for byte', async (t) => {
  const next = parse(base);
  next.metadata.labels.tier = 'web';
  next.spec.containers[0].image = 'app:2';
  next.spec.containers.unshift({ name: 'proxy', image: 'proxy:1', args: ['a', 'true'] });
  next.spec.volumes.unshift({ name: 'envoy', emptyDir: { medium: 'Memory' } });
  const out = patch(base, next);
  t.same(parse(out), next, 'reads as the new data');
  for (const line of [
    '# head',
    'kind: Pod   # spaced comment',
    '    # first container',
    '    - name: app     # the app',
    '      args: ["--x", "--y"]',
    '    - name: side',
  ]) {
    t.ok(out.split('\n').includes(line), `kept: ${line}`);
  }
  t.match(out, /image: 'app:2'/, 'single quotes kept on a changed scalar');
  t.match(out, /labels: \{app: p, tier: web\}/, 'flow map stays flow');
  t.match(
    out,
    /\n {4}- name: proxy\n {6}image: proxy:1\n {6}args:\n {8}- a\n {8}- "true"\n/,
    'new entries follow the wide list style; "true" quoted',
  );
  t.ok(out.indexOf('name: proxy') < out.indexOf('name: app'), 'list order follows the data');
});

t.test('removing and adding keys, including before the first key', async (t) => {
  const text = 'kind: X\nspec:\n  probe:\n    tcpSocket:\n      port: http\n    periodSeconds: 3\n';
  const out = patch(text, { kind: 'X', spec: { probe: { httpGet: { path: '/h', port: 15020 }, periodSeconds: 3 } } });
  t.equal(out, 'kind: X\nspec:\n  probe:\n    httpGet:\n      path: /h\n      port: 15020\n    periodSeconds: 3\n');
  const compact = 'kind: X\nitems:\n- a: 1\n  b: 2\n';
  t.equal(
    patch(compact, { kind: 'X', items: [{ z: 0, a: 1, b: 2 }] }),
    'kind: X\nitems:\n- z: 0\n  a: 1\n  b: 2\n',
    'new first key of a list entry',
  );
  t.same(
    parse(patch(compact, { kind: 'X', items: [{ b: 2 }] })),
    { kind: 'X', items: [{ b: 2 }] },
    'removing the key on the dash line',
  );
  t.equal(patch('kind: X\nm:\n  a: 1\n', { kind: 'X', m: { b: 2 } }), 'kind: X\nm:\n  b: 2\n', 'all keys replaced');
});

t.test('null values and empty collections', async (t) => {
  t.equal(
    patch('kind: X\nmetadata:\n  annotations:\n', { kind: 'X', metadata: { annotations: { a: 'b' } } }),
    'kind: X\nmetadata:\n  annotations:\n    a: b\n',
  );
  t.equal(patch('kind: X\nlist: []\n', { kind: 'X', list: ['a'] }), 'kind: X\nlist:\n- a\n');
  t.equal(patch('kind: X\nlist:\n- a\n', { kind: 'X', list: [] }), 'kind: X\nlist: []\n');
  t.equal(patch('kind: X\na: 1\n', { kind: 'X', a: 1, b: null }), 'kind: X\na: 1\n', 'null means absent');
});

t.test('multi-line strings become literal blocks; CRLF is kept', async (t) => {
  const out = patch('kind: X\nv: 1\n', { kind: 'X', v: 1, s: 'line1\nline2\n' });
  t.equal(out, 'kind: X\nv: 1\ns: |\n  line1\n  line2\n');
  const crlf = patch('kind: X\r\nv: 1\r\n', { kind: 'X', v: 2, w: { a: 'b' } });
  t.equal(crlf, 'kind: X\r\nv: 2\r\nw:\r\n  a: b\r\n');
});

t.test('strings are quoted so YAML 1.1 and 1.2 readers read them back as strings', async (t) => {
  for (const s of [
    'true',
    'yes',
    'on',
    'y',
    '~',
    'null',
    '15020',
    '1.5',
    '0x1f',
    '017',
    '1e3',
    '.inf',
    '2026-01-01',
    '1:20',
  ]) {
    t.match(emitString(s), /^"/, `${s} double-quoted`);
    t.equal(parse(`v: ${emitString(s)}`, { version: '1.1' }).v, s, `${s} survives YAML 1.1`);
  }
  for (const s of ['*', '{"a":1}', '- x', 'a: b', 'x #y', '', ' lead', '@x', '%x']) {
    t.equal(parse(`v: ${emitString(s)}`).v, s, `${JSON.stringify(s)} survives`);
  }
  t.equal(emitString('--log_output_level=default:info'), '--log_output_level=default:info', 'plain when safe');
  t.equal(emitString('$(POD_NAMESPACE).svc.cluster.local'), '$(POD_NAMESPACE).svc.cluster.local');
});

t.test('emitString gives the same text on a repeated call (its cache) and after the cache is cleared', async (t) => {
  const tricky = ['true', '15020', "it's", '*', '{"a":1}', 'a: b', 'x\ty', 'plain-name', '0o17', '.inf'];
  const first = tricky.map(emitString);
  t.same(tricky.map(emitString), first, 'cached answers are the first answers');
  for (let i = 0; i < 9000; i++) emitString(`filler-${i}: x`); // more than the cache holds: it is cleared
  t.same(tricky.map(emitString), first, 'answers after clearing are the same');
  for (const [i, s] of tricky.entries())
    t.equal(parse(`v: ${first[i]}`, { version: '1.1' }).v, s, `${JSON.stringify(s)} reads back`);
});
