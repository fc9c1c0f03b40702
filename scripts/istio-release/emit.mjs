// The YAML and JSON text of the release corpora: one fixed style so that a re-import gives the same bytes.
// Strings are double-quoted JSON (multi-line ones literal blocks `|`, `|-`, `|+`), keys plain when safe, lists
// indented under their key, empty maps and lists in flow form.

const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

function key(k) {
  return PLAIN_KEY.test(k) ? k : JSON.stringify(k);
}

function isMap(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function block(s, pad) {
  const trailing = /\n*$/.exec(s)[0].length;
  const indicator = trailing === 0 ? '|-' : trailing === 1 ? '|' : '|+';
  const body = trailing === 0 ? s : s.slice(0, s.length - (trailing === 1 ? 1 : 0));
  const lines = body.split('\n');
  if (trailing > 1) lines.pop();
  if (/^[ \t]/.test(lines[0] ?? ''))
    throw new Error('a block text starting with a blank needs an indentation indicator');
  return `${indicator}\n${lines.map((l) => (l === '' ? '' : pad + l)).join('\n')}`;
}

function scalar(v, pad) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return v.includes('\n') ? block(v, pad) : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`cannot emit ${typeof v}`);
}

/** The value after `key:` (inline, or a newline and the nested block at `indent` spaces). */
function after(v, indent) {
  if (isMap(v)) return Object.keys(v).length === 0 ? ' {}' : `\n${mapping(v, indent)}`;
  if (Array.isArray(v)) return v.length === 0 ? ' []' : `\n${sequence(v, indent)}`;
  return ` ${scalar(v, ' '.repeat(indent))}`;
}

function mapping(o, indent) {
  const pad = ' '.repeat(indent);
  return Object.entries(o)
    .map(([k, v]) => `${pad}${key(k)}:${after(v, indent + 2)}`)
    .join('\n');
}

function sequence(list, indent) {
  const pad = ' '.repeat(indent);
  return list
    .map((v) => {
      if (isMap(v) && Object.keys(v).length > 0) return `${pad}- ${mapping(v, indent + 2).slice(indent + 2)}`;
      if (Array.isArray(v) && v.length > 0) return `${pad}-\n${sequence(v, indent + 2)}`;
      if (isMap(v)) return `${pad}- {}`;
      if (Array.isArray(v)) return `${pad}- []`;
      return `${pad}- ${scalar(v, ' '.repeat(indent + 2))}`;
    })
    .join('\n');
}

/** A YAML document for a top-level map, ending with a newline. */
export function toYamlText(o) {
  return `${mapping(o, 0)}\n`;
}

/** JSON with one-space indentation and no final newline (the corpus.json style). */
export function toJsonText(o) {
  return JSON.stringify(o, null, 1);
}
