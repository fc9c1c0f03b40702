// Reading Istio's TestInjection case table (pkg/kube/inject/inject_test.go) without Go: a small scanner for the Go
// composite literal `cases := []testCase{ {...}, ... }` (string, raw-string, bool, []string fields and func bodies).
// Anything it does not understand is an error naming the position, so a changed test file stops the import.

/** Skips blanks and comments from `i`; returns the next index. */
function skip(src, i) {
  for (;;) {
    while (i < src.length && /\s/.test(src[i])) i++;
    if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (src.startsWith('/*', i)) {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? src.length : end + 2;
    } else return i;
  }
}

/** A Go string literal at `i` ("..." or `...`): its value and the index after it. */
function readString(src, i) {
  if (src[i] === '`') {
    const end = src.indexOf('`', i + 1);
    if (end < 0) throw new Error(`unterminated raw string at ${i}`);
    return { value: src.slice(i + 1, end), next: end + 1 };
  }
  if (src[i] !== '"') throw new Error(`expected a string at ${i}: ${src.slice(i, i + 40)}`);
  let j = i + 1;
  while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
  return { value: JSON.parse(src.slice(i, j + 1)), next: j + 1 };
}

/** Index after the `{...}` block opening at `i` (strings and comments inside are skipped). */
function blockEnd(src, i) {
  let depth = 0;
  for (let j = i; j < src.length; ) {
    const c = src[j];
    if (c === '"' || c === '`') {
      j = readString(src, j).next;
      continue;
    }
    if (src.startsWith('//', j) || src.startsWith('/*', j)) {
      j = skip(src, j);
      continue;
    }
    if (c === '{') depth++;
    if (c === '}' && --depth === 0) return j + 1;
    j++;
  }
  throw new Error(`unbalanced braces from ${i}`);
}

/** A func literal's body as one line: comments dropped, blanks collapsed (`func { a; b }`). */
export function funcText(body) {
  const lines = body
    .split('\n')
    .map((l) => l.replace(/^\s*\/\/.*$/, ''))
    .join('\n');
  return `func { ${lines.replace(/\s+/g, ' ').trim()} }`;
}

function readValue(src, i) {
  if (src[i] === '"' || src[i] === '`') return readString(src, i);
  if (src.startsWith('true', i) || src.startsWith('false', i)) {
    const v = src.startsWith('true', i);
    return { value: v, next: i + (v ? 4 : 5) };
  }
  if (src.startsWith('[]string{', i)) {
    const end = blockEnd(src, i + 8);
    const items = [];
    let j = skip(src, i + 9);
    while (src[j] !== '}') {
      const s = readString(src, j);
      items.push(s.value);
      j = skip(src, s.next);
      if (src[j] === ',') j = skip(src, j + 1);
    }
    return { value: items, next: end };
  }
  if (src.startsWith('func(', i)) {
    const open = src.indexOf('{', i);
    const end = blockEnd(src, open);
    return { value: funcText(src.slice(open + 1, end - 1)), next: end };
  }
  throw new Error(`unsupported value at ${i}: ${src.slice(i, i + 60)}`);
}

/** One `{ field: value, ... }` element at `i`. */
function readCase(src, i) {
  const fields = {};
  let j = skip(src, i + 1);
  while (src[j] !== '}') {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*:/.exec(src.slice(j, j + 80));
    if (!m) throw new Error(`expected a field at ${j}: ${src.slice(j, j + 60)}`);
    const v = readValue(src, skip(src, j + m[0].length));
    fields[m[1]] = v.value;
    j = skip(src, v.next);
    if (src[j] === ',') j = skip(src, j + 1);
  }
  return { fields, next: j + 1 };
}

/**
 * The explicit cases of `TestInjection` in inject_test.go source, in table order: objects with the fields the table
 * sets (`in`, `want`, `setFlags`, `inFilePath`, `mesh` and `setup` as `func { ... }` text, `skipWebhook`,
 * `skipInjection`, `expectedError`, `expectedLog`).
 */
export function parseCaseTable(src) {
  const fn = src.indexOf('func TestInjection(');
  if (fn < 0) throw new Error('inject_test.go has no func TestInjection');
  const start = src.indexOf('cases := []testCase{', fn);
  if (start < 0) throw new Error('TestInjection has no `cases := []testCase{` table');
  const open = src.indexOf('{', start);
  const end = blockEnd(src, open);
  const cases = [];
  let j = skip(src, open + 1);
  while (j < end - 1) {
    if (src[j] !== '{') throw new Error(`expected a case at ${j}: ${src.slice(j, j + 60)}`);
    const c = readCase(src, j);
    cases.push(c.fields);
    j = skip(src, c.next);
    if (src[j] === ',') j = skip(src, j + 1);
  }
  return cases;
}

/**
 * The `--set` value parsing of the Istio operator (operator/pkg/values/map.go `parseValue`): integer, float, bool
 * (Go `strconv.ParseBool`), else the text with `\,` unescaped.
 */
export function parseFlagValue(s) {
  if (/^[+-]?\d+$/.test(s)) return Number(s);
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) || /^[+-]?(inf|infinity|nan)$/i.test(s)) return Number(s);
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return s.replaceAll('\\,', ',');
}
