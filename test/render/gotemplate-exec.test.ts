import t from 'tap';
import { GoTemplate, type FuncMap, TemplateExecError, TemplateParseError } from '../../src/render/gotemplate/index.ts';
import { SPRIG_FUNCS } from '../../src/render/gotemplate/sprig.ts';
import {
  INT,
  MAP_STRING,
  STRING,
  Value,
  dynamic,
  goFunc,
  ptrTo,
  sliceOf,
  structType,
  field,
} from '../../src/render/gotemplate/value.ts';

// Go text/template behaviour written as data, from the documented behaviour of text/template (package doc,
// exec_test.go's table) and fmt. `data` is JSON as encoding/json decodes it into `any` (numbers are float64).
interface Case {
  name: string;
  src: string;
  data?: unknown;
  want?: string;
  /** Substring of the error (parse or exec). */
  err?: string;
}

const DATA = {
  str: 'hello',
  n: 15020,
  big: 1000000,
  f: 0.5,
  t: true,
  no: false,
  zero: 0,
  empty: '',
  list: [1, 2, 3],
  strs: ['a', 'b'],
  none: [],
  map: { b: 2, a: 1 },
  emptyMap: {},
  nil: null,
  nested: { inner: { leaf: 'x' } },
  html: '<a href="x">&</a>',
};

const cases: Case[] = [
  // text, comments, trimming
  { name: 'plain text', src: 'hello', want: 'hello' },
  { name: 'comment', src: 'a{{/* c */}}b', want: 'ab' },
  { name: 'trim both sides', src: 'a  {{- "x" -}}  b', want: 'axb' },
  { name: 'trim comment', src: 'a \n {{- /* c */ -}} \n b', want: 'ab' },
  { name: 'minus without space is a number', src: '{{-3}}', want: '-3' },
  // fields and maps
  { name: 'field', src: '{{.str}}', want: 'hello' },
  { name: 'nested field', src: '{{.nested.inner.leaf}}', want: 'x' },
  { name: 'missing key prints <no value>', src: '{{.missing}}', want: '<no value>' },
  { name: 'field of missing key is <no value>', src: '{{.missing.deeper}}', want: '<no value>' },
  { name: 'nil map value prints <no value>', src: '{{.nil}}', want: '<no value>' },
  { name: 'field of nil interface is an error', src: '{{.nil.x}}', err: 'nil pointer evaluating interface {}.x' },
  { name: 'field of a string is an error', src: '{{.str.x}}', err: "can't evaluate field x in type string" },
  { name: 'float64 %v', src: '{{.n}} {{.big}} {{.f}}', want: '15020 1e+06 0.5' },
  { name: 'map prints sorted', src: '{{.map}}', want: 'map[a:1 b:2]' },
  { name: 'slice prints', src: '{{.list}} {{.none}}', want: '[1 2 3] []' },
  { name: 'print of missing is <nil>', src: '{{print .missing}}', want: '<nil>' },
  // variables
  { name: 'declare and use', src: '{{$x := .str}}{{$x}}', want: 'hello' },
  { name: 'assign', src: '{{$x := 1}}{{$x = 2}}{{$x}}', want: '2' },
  { name: '$ is the data', src: '{{with .nested}}{{$.str}}{{end}}', want: 'hello' },
  {
    name: 'variable scope ends with the block',
    src: '{{if true}}{{$x := 1}}{{end}}{{$x}}',
    err: 'undefined variable "$x"',
  },
  { name: 'variable field chain', src: '{{$n := .nested}}{{$n.inner.leaf}}', want: 'x' },
  // if / else if / with
  { name: 'if true', src: '{{if .t}}y{{else}}n{{end}}', want: 'y' },
  {
    name: 'if false values',
    src: '{{if .zero}}1{{end}}{{if .empty}}2{{end}}{{if .none}}3{{end}}{{if .emptyMap}}4{{end}}{{if .nil}}5{{end}}{{if .missing}}6{{end}}',
    want: '',
  },
  { name: 'else if chain', src: '{{if .no}}a{{else if .zero}}b{{else if .n}}c{{else}}d{{end}}', want: 'c' },
  { name: 'with sets dot', src: '{{with .nested.inner}}{{.leaf}}{{end}}', want: 'x' },
  { name: 'with else', src: '{{with .empty}}x{{else}}none{{end}}', want: 'none' },
  { name: 'else with', src: '{{with .empty}}a{{else with .str}}{{.}}{{end}}', want: 'hello' },
  // range
  { name: 'range slice', src: '{{range .list}}<{{.}}>{{end}}', want: '<1><2><3>' },
  { name: 'range index and element', src: '{{range $i, $e := .strs}}{{$i}}={{$e}};{{end}}', want: '0=a;1=b;' },
  { name: 'range map sorted keys', src: '{{range $k, $v := .map}}{{$k}}{{$v}}{{end}}', want: 'a1b2' },
  { name: 'range else on empty', src: '{{range .none}}x{{else}}empty{{end}}', want: 'empty' },
  { name: 'range over missing is empty', src: '{{range .missing}}x{{else}}e{{end}}', want: 'e' },
  { name: 'range break', src: '{{range .list}}{{if eq . 2.0}}{{break}}{{end}}{{.}}{{end}}', want: '1' },
  { name: 'range continue', src: '{{range .list}}{{if eq . 2.0}}{{continue}}{{end}}{{.}}{{end}}', want: '13' },
  { name: 'range over an int', src: '{{range 3}}{{.}}{{end}}', want: '012' },
  { name: 'range over a string is an error', src: '{{range .str}}{{end}}', err: "range can't iterate over hello" },
  { name: 'break outside range', src: '{{break}}', err: '{{break}} outside {{range}}' },
  // define / template / block
  { name: 'define and template', src: '{{define "T"}}[{{.}}]{{end}}{{template "T" .str}}', want: '[hello]' },
  { name: 'template without data has nil dot', src: '{{define "T"}}{{.}}{{end}}{{template "T"}}', want: '<no value>' },
  { name: 'block', src: '{{block "B" .str}}<{{.}}>{{end}}', want: '<hello>' },
  { name: 'missing template', src: '{{template "nope"}}', err: 'no such template "nope"' },
  {
    name: 'redefinition in one parse',
    src: '{{define "a"}}x{{end}}{{define "a"}}y{{end}}',
    err: 'multiple definition of template "a"',
  },
  // pipelines and builtins
  { name: 'pipeline final argument', src: '{{"x" | printf "%s-%s" "y"}}', want: 'y-x' },
  { name: 'parenthesized', src: '{{printf "%d" (len .list)}}', want: '3' },
  { name: 'and/or return operands', src: '{{and 1 0 2}} {{or 0 "" "z"}} {{and 1 2}}', want: '0 z 2' },
  { name: 'and short-circuits', src: '{{and false (index .list 10)}}', want: 'false' },
  { name: 'not', src: '{{not .none}} {{not .str}}', want: 'true false' },
  { name: 'len', src: '{{len .str}} {{len .map}} {{len "é"}}', want: '5 2 2' },
  {
    name: 'index slice and map',
    src: '{{index .list 1}} {{index .map "a"}} {{index .map "z"}}',
    want: '2 1 <no value>',
  },
  { name: 'index out of range', src: '{{index .list 3}}', err: 'error calling index: index out of range: 3' },
  { name: 'slice', src: '{{slice "hello" 1 3}} {{slice .list 1}}', want: 'el [2 3]' },
  { name: 'print spacing', src: '{{print 1 2 "a" "b" 3}}', want: '1 2ab3' },
  { name: 'println', src: '{{println "a" 1}}', want: 'a 1\n' },
  { name: 'eq several', src: '{{eq .str "x" "hello"}}', want: 'true' },
  { name: 'eq int and float64 is an error', src: '{{eq .n 15020}}', err: 'incompatible types for comparison' },
  { name: 'eq with missing is false', src: '{{eq .missing "x"}}', want: 'false' },
  {
    name: 'ne lt le gt ge',
    src: '{{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1 2}}',
    want: 'true true true true false',
  },
  { name: 'lt on bool is an error', src: '{{lt true false}}', err: 'invalid type for comparison' },
  {
    name: 'html js urlquery',
    src: '{{html .html}}|{{js "it\'s <x>"}}|{{urlquery "a b&c"}}',
    want: "&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt;|it\\'s \\u003Cx\\u003E|a+b%26c",
  },
  { name: 'constants', src: "{{1.5}} {{0x10}} {{'a'}} {{1e3}} {{-7}}", want: '1.5 16 97 1000 -7' },
  // fmt verbs
  {
    name: 'printf verbs',
    src: '{{printf "%d|%5d|%-5d|%05d|%x|%X|%o|%b|%c|%q" 42 42 42 42 255 255 8 5 65 "a\\"b"}}',
    want: '42|   42|42   |00042|ff|FF|10|101|A|"a\\"b"',
  },
  {
    name: 'printf floats',
    src: '{{printf "%f|%.2f|%e|%g|%v" 3.14159 3.14159 1234.5 0.000012 .big}}',
    want: '3.141590|3.14|1.234500e+03|1.2e-05|1e+06',
  },
  {
    name: 'printf strings',
    src: '{{printf "%s|%10s|%-4s|%.2s|%t|%v" "go" "go" "go" "golang" true .list}}',
    want: 'go|        go|go  |go|true|[1 2 3]',
  },
  { name: 'printf wrong verb', src: '{{printf "%d" "x"}}', want: '%!d(string=x)' },
  {
    name: 'printf missing and extra',
    src: '{{printf "%s %s" "a"}}|{{printf "%s" "a" 1}}',
    want: 'a %!s(MISSING)|a%!(EXTRA int=1)',
  },
  { name: 'printf %d of float64', src: '{{printf "%d" .n}}', want: '%!d(float64=15020)' },
  { name: 'printf %T', src: '{{printf "%T %T %T" .n 1 .map}}', want: 'float64 int map[string]interface {}' },
  // errors with positions
  { name: 'undefined function', src: 'x\n{{nope}}', err: 'template: t:2: function "nope" not defined' },
  { name: 'unclosed action', src: '{{if', err: 'template: t:1: unclosed action' },
  { name: 'unexpected end', src: '{{end}}', err: 'template: t:1: unexpected {{end}}' },
  { name: 'missing end', src: '{{if .t}}x', err: 'template: t:1: unexpected EOF' },
  { name: 'bad character', src: '{{.x#}}', err: "bad character U+0023 '#'" },
  { name: 'unterminated string', src: '{{"abc}}', err: 'unterminated quoted string' },
  { name: 'empty pipeline', src: '{{if}}{{end}}', err: 'missing value for if' },
  { name: 'non-executable stage', src: '{{.str | 3}}', err: 'non executable command in pipeline stage 2' },
  {
    name: 'exec error location',
    src: 'line1\n  {{.str.x}}',
    err: 'template: t:2:4: executing "t" at <.str.x>: can\'t evaluate field x in type string',
  },
  { name: 'wrong arg count', src: '{{len 1 2}}', err: 'wrong number of args for len: want 1 got 2' },
  { name: 'argument to non-function', src: '{{.str 1}}', err: 'str is not a method but has arguments' },
  { name: 'nil is not a command', src: '{{nil}}', err: 'nil is not a command' },
  // sprig
  {
    name: 'sprig default/empty',
    src: '{{.empty | default "d"}} {{.str | default "d"}} {{.zero | default 7}} {{empty .none}}',
    want: 'd hello 7 true',
  },
  { name: 'sprig quote skips nil', src: '{{quote .str 1 .missing}}', want: '"hello" "1"' },
  {
    name: 'sprig strings',
    src: '{{trunc 3 "abcdef"}}|{{trunc -2 "abcdef"}}|{{trimSuffix "-x" "a-x"}}|{{trimAll "-_" "__a-"}}|{{upper "a"}}',
    want: 'abc|ef|a|a|A',
  },
  { name: 'sprig indent and nindent', src: '{{indent 2 "a\\nb"}}|{{nindent 2 "a"}}', want: '  a\n  b|\n  a' },
  {
    name: 'sprig lists',
    src: '{{$l := list 1 "a"}}{{$l = append $l 2}}{{$l}} {{first $l}} {{last $l}} {{join "," .strs}} {{has "a" .strs}}',
    want: '[1 a 2] 1 2 a,b true',
  },
  {
    name: 'sprig dict',
    src: '{{$d := dict "k" "v" "n" 1}}{{$d.k}} {{hasKey $d "n"}} {{get $d "zz"}}|{{toJson $d}}',
    want: 'v true |{"k":"v","n":1}',
  },
  { name: 'sprig coalesce ternary', src: '{{coalesce .empty .zero "c"}} {{ternary "y" "n" .t}}', want: 'c y' },
  {
    name: 'sprig toJson escapes html',
    src: '{{toJson .html}}',
    want: '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"',
  },
  {
    name: 'sprig int math',
    src: '{{add 1 2 3}} {{sub 5 2}} {{mul 2 3}} {{div 7 2}} {{mod 7 2}} {{int "42"}}',
    want: '6 3 6 3 1 42',
  },
  { name: 'sprig fail', src: '{{fail "boom"}}', err: 'error calling fail: boom' },
  { name: 'clock and randomness are not available', src: '{{now}}', err: 'function "now" not defined' },
];

function run(src: string, data: unknown, funcs: FuncMap = SPRIG_FUNCS): string {
  return GoTemplate.parse('t', src, funcs).execute(dynamic(data));
}

t.test('Go text/template behaviour table', async (t) => {
  for (const c of cases) {
    const data = c.data ?? DATA;
    let got: string;
    try {
      got = run(c.src, data);
    } catch (e) {
      got = `ERROR ${(e as Error).message}`;
    }
    if (c.err !== undefined)
      t.match(got, `ERROR `, `${c.name}: fails`) && t.ok(got.includes(c.err), `${c.name}: ${got}`);
    else t.equal(got, c.want, c.name);
  }
});

t.test('parse errors and execution errors have their own types', async (t) => {
  t.throws(() => run('{{', {}), TemplateParseError);
  t.throws(() => run('{{.a.b}}', { a: 'x' }), TemplateExecError);
});

t.test('typed data: struct fields, zero values, nil pointers and methods', async (t) => {
  const inner = structType('pkg.Inner', [field('Leaf', STRING)]);
  const methods = new Map([
    ['Twice', { params: [INT], call: (_recv: unknown, args: Value[]) => new Value(INT, (args[0]!.v as number) * 2) }],
  ]);
  const outer = ptrTo(
    structType(
      'pkg.Outer',
      [
        field('Name', STRING),
        field('Count', INT),
        field('Ptr', ptrTo(inner)),
        field('Labels', MAP_STRING),
        field('Items', sliceOf(inner)),
      ],
      methods,
    ),
  );
  const v = new Value(outer, { name: 'o', items: [{ leaf: 'a' }] });
  const exec = (src: string) => GoTemplate.parse('t', src, SPRIG_FUNCS).execute(v);
  t.equal(exec('{{.Name}} {{.Count}} {{.Labels}} {{len .Items}}'), 'o 0 map[] 1', 'absent fields are Go zero values');
  t.equal(exec('{{if .Ptr}}set{{else}}nil{{end}} {{.Ptr}}'), 'nil <nil>', 'absent pointer is nil');
  t.equal(
    exec('{{index .Labels "x"}}|{{.Labels.x}}'),
    '|<no value>',
    'index of a typed map gives the zero value; a field gives no value',
  );
  t.equal(exec('{{.Twice 21}} {{21 | .Twice}}'), '42 42', 'method with arguments');
  t.throws(() => exec('{{.Ptr.Leaf}}'), /nil pointer evaluating \*pkg.Inner.Leaf/);
  t.throws(() => exec('{{.Nope}}'), /can't evaluate field Nope in type \*pkg.Outer/);
  t.throws(
    () => exec('{{printf "%s" .Count | len}}{{trunc .Count "x"}}{{trunc .Name "x"}}'),
    /wrong type for value; expected int; got string/,
  );
  t.equal(exec('{{range .Items}}{{.Leaf}}{{end}}'), 'a');
});

t.test('execution is bounded: runaway loops and recursion stop with an error naming the template', async (t) => {
  t.throws(
    () => GoTemplate.parse('loop', '{{range 100000000}}x{{end}}', SPRIG_FUNCS).execute(dynamic({})),
    /template: loop:1:.*execution stopped: went past the step budget of one render, 500000 steps/,
  );
  t.throws(
    () =>
      GoTemplate.parse('rec', '{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}', SPRIG_FUNCS).execute(
        dynamic({}),
      ),
    /executing "r".*exceeded maximum template depth \(1000\)/,
  );
  const small = { maxSteps: 10, maxDepth: 5 };
  t.throws(
    () => GoTemplate.parse('s', '{{range 20}}{{.}}{{end}}', SPRIG_FUNCS).execute(dynamic({}), small),
    /execution stopped after 10 steps/,
  );
  t.equal(GoTemplate.parse('s', '{{range 5}}{{.}}{{end}}', SPRIG_FUNCS).execute(dynamic({}), small), '01234');
});

t.test('functions: a registered function overrides the builtin; call invokes a function value', async (t) => {
  const funcs = new Map(SPRIG_FUNCS);
  funcs.set(
    'len',
    goFunc([STRING], () => new Value(STRING, 'mine')),
  );
  t.equal(GoTemplate.parse('t', '{{len "abc"}}', funcs).execute(dynamic({})), 'mine');
  const double = goFunc([INT], (n) => new Value(INT, (n.v as number) * 2));
  const data = new Value(ptrTo(structType('pkg.D', [field('F', { kind: 'func', name: 'func(int) int' })])), {
    f: double,
  });
  t.equal(GoTemplate.parse('t', '{{call .F 4}}', SPRIG_FUNCS).execute(data), '8');
});
