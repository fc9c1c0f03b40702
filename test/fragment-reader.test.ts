import t from 'tap';
import { parse } from 'yaml';
import { parseFragment } from '../src/yaml/fast-parse.ts';

const same = (text: string) => t.same(parseFragment(text), parse(text, { version: '1.1' }), JSON.stringify(text));

t.test('reads the block YAML templates render exactly like a YAML 1.1 parser', async () => {
  same('a: 1\nb: "2"\nc: yes\nd: on\ne: ~\nf:\ng: 1.5\nh: -3\ni: "x\\ty\\"z"\nj: \'it\'\'s\'\nk: 0\n');
  same('spec:\n  containers:\n  - name: a\n    args:\n      - "-p"\n      - 15001\n    env: []\n  - name: b\n    ports: [{containerPort: 15090, name: http, protocol: TCP}]\n');
  same('metadata:\n  annotations: {\n    a: "1",\n    b.io/c: \'x\',\n  }\n  labels:\n    x: y # comment\n# full comment\n\n  other: z\n');
  same('env:\n- name: A\n  value: |\n    line1\n\n    line2\n- name: B\n  value: |-\n    only\n- name: C\n  value: |\n    text\n\nnext: 1\n');
  same('- - a\n  - b\n- c\n-\n  d: 1\n');
  same('key: value with spaces and: colons inside? no\n'.replace(': colons', ' colons'));
  same('emptyDir: {}\nlist: []\nnested: {a: {b: [1, 2, {c: d}]}}\n');
  same('url: http://example.com:8080/x\ntime: 1:20\nhex: 0x1F\noct: 017\n');
  same('a: &x 1\nb: *x\n');
  same('plain: first\n  continued\n');
  same('folded: >\n  a\n  b\n');
});
