import type { Json } from '../../model.ts';
import { isShared } from '../../json.ts';
import { needsQuotes } from '../scalars.ts';

/**
 * A small, fast emitter for new YAML text (what injection adds): block maps and sequences, plain scalars
 * where every YAML 1.1 and 1.2 reader reads them back as the same string, single quotes for other
 * one-line strings, `|`/`|-` literals for multi-line strings, double quotes for anything with control
 * characters. Output lines end with `\n`.
 */

const INDICATOR_START = /^[-?:,[\]{}#&*!|>'"%@`]/;

/**
 * Words, names, paths, image references and URLs that are plain in every reader: they start with a character no
 * YAML 1.1/1.2 non-string form or indicator starts with (booleans, null and numbers start with one of
 * `yYnNtTfFoOeE~+-.` or a digit; so do sexagesimals and timestamps, YAML 1.1 §2, the only forms with a `:`) and hold
 * no space or `#`, and a `:` only between other characters (never before a space or at the end, where it would end
 * a key: YAML 1.2 `ns-plain-char`). Checked before the cache (issue #40: the per-workload names and references a
 * sidecar carries, `docker.io/istio/proxyv2:1.31.0`, `kubernetes://apis/apps/v1/...`, are each seen once).
 * As a pattern: `^[a-dg-mpqrsuvwxzA-DG-MPQRSUVWXZ/][a-zA-Z0-9_./-]*(?::[a-zA-Z0-9_./-]+)*$`; read here character by
 * character from `PLAIN_CHARS` (a pattern's call costs more than the loop over a short name; test/yaml/emit-shortcuts.test.ts
 * holds the loop to the pattern): a first character that may start, then word characters and single colons, not
 * last. Exported for that test.
 */
export function isSimplePlain(s: string): boolean {
  const n = s.length;
  const first = s.charCodeAt(0);
  if (n === 0 || first >= 128 || (PLAIN_CHARS[first] ?? 0) < PLAIN_START) return false;
  let colon = false;
  for (let i = 1; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === COLON) {
      if (colon) return false;
      colon = true;
    } else if (c < 128 && PLAIN_CHARS[c] !== 0) colon = false;
    else return false;
  }
  return !colon;
}

const COLON = 58;
/** `PLAIN_CHARS` value of a character that may also start a simple plain scalar (`isSimplePlain`). */
const PLAIN_START = 2;

/**
 * By character code (< 128): 0 for a character no simple plain scalar holds (`isSimplePlain`), 1 for `[a-zA-Z0-9_./-]`,
 * `PLAIN_START` for those of them it may start with (`[a-dg-mpqrsuvwxzA-DG-MPQRSUVWXZ/]`).
 * Module state by design: a constant table, filled once at load.
 */
const PLAIN_CHARS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[a-zA-Z0-9_./-]/.test(ch)) PLAIN_CHARS[c] = /[a-dg-mpqrsuvwxzA-DG-MPQRSUVWXZ/]/.test(ch) ? PLAIN_START : 1;
}

function isPlainSafe(s: string): boolean {
  if (isSimplePlain(s)) return true;
  if (s === '' || s !== s.trim() || needsQuotes(s)) return false;
  if (INDICATOR_START.test(s) && !/^[-?:][^\s,[\]{}]/.test(s)) return false;
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':') || NOT_RAW.test(s)) return false;
  if (s === '---' || s === '...') return false;
  return true;
}

/**
 * A string as a one-line YAML scalar, as Go's sigs.k8s.io/yaml writes it: plain when safe; double quotes
 * for strings that would read as another type (`"true"`, `"15020"`); single quotes for other strings that
 * cannot be plain (`'*'`, `'{"a":1}'`); double quotes with escapes for control characters.
 */
export function emitString(s: string): string {
  // Names and paths (most keys and values) are plain without a cache lookup.
  if (isSimplePlain(s)) return s;
  // Strings led by a flow or other indicator (JSON values: `{"scrape":"true"}`, a workload's probers, its ports) are
  // quoted whatever follows, and mostly seen once: decided by `indicatorLed` without the patterns or the cache.
  if (INDICATOR_LED[s.charCodeAt(0)] === 1) return indicatorLed(s);
  const hit = QUOTED.get(s);
  if (hit !== undefined) return hit;
  const out = quote(s);
  if (s.length <= QUOTED_MAX_LENGTH) {
    if (QUOTED.size >= QUOTED_MAX_ENTRIES) QUOTED.clear();
    // Kept as copies: a string read from a text is often a slice of it, and a cached slice would keep the whole
    // text (a rendered template, an input file) alive for as long as the entry.
    const key = ownCopy(s);
    QUOTED.set(key, out === s ? key : ownCopy(out));
  }
  return out;
}

/** `s` as a string of its own, sharing no text with another (V8 cuts a slice of 13 characters or more as a view). */
function ownCopy(s: string): string {
  return s.length < 13 ? s : `${s} `.slice(0, -1);
}

/**
 * Emitted forms of short strings already seen (emission cache, issue #13 §3): `emitString` is a pure
 * function of its argument, and injected text repeats the same keys and values (`name`, `istio-proxy`,
 * `/var/run/secrets/...`) in every workload. Bounded: cleared when full.
 * Module state by design: a bounded memo of a pure function of a string (`emitString`).
 */
const QUOTED = new Map<string, string>();
const QUOTED_MAX_ENTRIES = 8192;
const QUOTED_MAX_LENGTH = 256;

/**
 * Character codes (< 128) of the indicators after which no string is plain and none is typed: `,[]{}#&*!|>'"%@` and
 * the backquote (YAML 1.2 `c-indicator` without `-`, `?` and `:`, which may start a plain scalar). `needsQuotes` is
 * false for them (every typed form starts with a letter, a digit, `-`, `+`, `.`, `_` or `~`: ../scalars.ts), so
 * `quote` gives single quotes, or double quotes where a character must be escaped.
 * Module state by design: a constant table, filled once at load.
 */
const INDICATOR_LED = new Uint8Array(128);
for (const ch of ',[]{}#&*!|>\'"%@`') INDICATOR_LED[ch.charCodeAt(0)] = 1;

/** `quote(s)` for a string led by an `INDICATOR_LED` character (held to it by test/yaml/emit-shortcuts.test.ts). */
function indicatorLed(s: string): string {
  if (NOT_RAW.test(s)) return doubleQuoted(s);
  return s.includes("'") ? `'${s.replace(/'/g, "''")}'` : `'${s}'`;
}

/** The general path of `emitString`, without its shortcuts and cache (exported for the tests that hold them to it). */
export function quote(s: string): string {
  if (isPlainSafe(s)) return s;
  if (needsQuotes(s)) return doubleQuoted(s);
  if (!NOT_RAW.test(s)) return `'${s.replace(/'/g, "''")}'`;
  return doubleQuoted(s);
}

/**
 * Characters a YAML scalar must not hold raw for every reader to read back the same string: C0 controls,
 * DEL, the C1 controls (U+0080-U+009F, NEL among them), LS, PS and the BOM. YAML 1.1 readers (go-yaml v2,
 * PyYAML) take NEL, LS and PS for line breaks and fold them into spaces inside quotes (issue #21 §6).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: YAML's character sets (YAML 1.2 §5.1, c-printable) are defined by control characters
export const NOT_RAW = /[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;
const NOT_RAW_ALL = /[\x7f-\x9f\u2028\u2029\ufeff]/g;
const NAMED_ESCAPES: Record<string, string> = { '\x85': '\\N', '\u2028': '\\L', '\u2029': '\\P', '\ufeff': '\\uFEFF' };

/**
 * `s` as a YAML double-quoted scalar: JSON's escapes (a JSON string is a valid YAML double-quoted scalar),
 * plus YAML's for what JSON leaves raw: `\N` (NEL), `\L` (LS), `\P` (PS), `\xHH` for DEL and the other
 * C1 controls, `\uFEFF`. Read back as `s` by YAML 1.1 and 1.2 readers alike.
 */
export function doubleQuoted(s: string): string {
  const json = JSON.stringify(s);
  return NOT_RAW.test(s)
    ? json.replace(
        NOT_RAW_ALL,
        (c) => NAMED_ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
      )
    : json;
}

/**
 * Runs of spaces by length, made once (indentation is written for every line of new text).
 * Module state by design: a memo of `n` spaces by `n`.
 */
const PADS: string[] = [];

/** `n` spaces (`' '.repeat(n)`, kept for n < 256). */
export function spaces(n: number): string {
  if (n >= 256) return ' '.repeat(n);
  const known = PADS[n];
  if (known !== undefined) return known;
  const pad = ' '.repeat(n);
  PADS[n] = pad;
  return pad;
}

/** A key as YAML text. */
export function emitKey(k: string): string {
  return emitString(k);
}

function isCollection(v: Json): v is Json[] | { [k: string]: Json } {
  return typeof v === 'object' && v !== null;
}

function isEmptyCollection(v: Json): boolean {
  if (!isCollection(v)) return false;
  if (Array.isArray(v)) return v.length === 0;
  for (const _ in v) return false;
  return true;
}

function isMultiline(v: Json): v is string {
  // A literal block finds its indentation from the first non-empty line: that line must not start with a space.
  return (
    typeof v === 'string' &&
    v.includes('\n') &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: YAML's character sets (YAML 1.2 §5.1, c-printable) are defined by control characters
    !/[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]/.test(v) &&
    !/^\n*[ \t]/.test(v) &&
    !/[ \t]$/m.test(v)
  );
}

/** A value that fits after `key: ` or `- ` on one line, or undefined for block collections / literals. */
export function emitInline(v: Json): string | undefined {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return isMultiline(v) ? undefined : emitString(v);
  if (isEmptyCollection(v)) return Array.isArray(v) ? '[]' : '{}';
  return undefined;
}

/** A flow collection on one line (for values written into an existing flow collection). */
export function emitFlow(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(emitFlow).join(', ')}]`;
  if (isCollection(v)) {
    const entries = Object.entries(v).filter(([, x]) => x !== null);
    return `{${entries.map(([k, x]) => `${emitKey(k)}: ${emitFlow(x)}`).join(', ')}}`;
  }
  if (typeof v === 'string') {
    const s = emitString(v);
    // In flow context a plain scalar must not hold flow indicators nor start with `?` or `:` (`"?page=1"`, `":8080"`).
    return (/[,[\]{}]/.test(s) || /^[?:]/.test(s)) && !/^['"]/.test(s) ? `'${v.replace(/'/g, "''")}'` : s;
  }
  // What is left is null, a boolean or a number: `emitInline`'s scalars.
  return String(v);
}

/** `s` (multi-line, `isMultiline`) as a literal block scalar whose lines are at column `indent`. */
export function literal(s: string, indent: number): string {
  const chomp = s.endsWith('\n') ? (s.endsWith('\n\n') ? '+' : '') : '-';
  const body = chomp === '-' ? s : s.slice(0, -1);
  const pad = spaces(indent);
  // Every non-empty line indented: one pass, no array of lines (issue #40).
  const first = body === '' || body.charCodeAt(0) === 10 ? '' : pad;
  return `|${chomp}\n${first}${body.replace(NON_EMPTY_LINE_AFTER, `\n${pad}`)}\n`;
}

/** A line break followed by a non-empty line (a literal block's lines to indent). */
const NON_EMPTY_LINE_AFTER = /\n(?=[^\n])/g;

/** Options of block emission. */
export interface BlockStyle {
  /** `wide`: sequences indented under their key; `compact`: `- ` at the key's column. */
  seqIndent: 'compact' | 'wide';
  /** Write `key: null` entries (Go's `toYaml`); by default they are left out (Kubernetes reads null as absent). */
  keepNulls?: boolean;
}

/**
 * Block text already written for shared subtrees (`isShared` of ../json.ts: deep-frozen, so the text of one
 * at a given place never changes), by subtree, then by where it was written (`placeOf`). A sidecar plan's
 * token-free parts (most of the proxy container, the init container, the volumes) are written once per
 * column and style instead of once per workload.
 * Module state by design: a memo keyed by deep-frozen subtrees, which cannot change.
 */
const SHARED_TEXT = new WeakMap<object, SharedTexts>();

/** The texts of one shared subtree: at the first place it was written (`placeOf`), and at any others. */
interface SharedTexts {
  place: number;
  text: string;
  more: Map<number, string> | undefined;
}

/** Where text is written, as a number: the column, after `key:` or `- `, and the style (see `sharedText`). */
function placeOf(afterDash: boolean, column: number, style: BlockStyle): number {
  return column * 8 + (afterDash ? 4 : 0) + (style.seqIndent === 'wide' ? 2 : 0) + (style.keepNulls ? 1 : 0);
}

/** The text after `key:` (`afterKey`) or `- ` (`afterDashText`) of shared `v` at its place, made once per place. */
function sharedText(v: Json, afterDash: boolean, column: number, style: BlockStyle): string {
  const place = placeOf(afterDash, column, style);
  const known = SHARED_TEXT.get(v as object);
  // Most shared parts are written at one place only: that text is the entry's own, with no map of places to look in.
  if (known !== undefined && known.place === place) return known.text;
  const more = known?.more?.get(place);
  if (more !== undefined) return more;
  const text = afterDash ? afterDashText(v, column, style) : afterKey(v, column, style);
  if (known === undefined) SHARED_TEXT.set(v as object, { place, text, more: undefined });
  else {
    const others = known.more ?? new Map<number, string>();
    others.set(place, text);
    known.more = others;
  }
  return text;
}

/**
 * The text after `key:` for a value: ` inline\n`, or `\n` + indented block lines (children at `indent`).
 * `indent` is the column of the key this value belongs to.
 */
export function emitAfterKey(v: Json, keyColumn: number, style: BlockStyle): string {
  if (isShared(v)) return sharedText(v, false, keyColumn, style);
  return afterKey(v, keyColumn, style);
}

/**
 * New block text is written as pieces into one array and joined once, at the top of the value being written: a
 * string joined at every level of a nested collection would copy each line once per level above it, and every
 * level's joined string would be garbage as soon as its parent had copied it (issue #40: a sidecar container is
 * some five levels deep). Joined, not added up with `+=`: a joined string is flat, while one added up is a rope of
 * every small piece (key, colon, indentation, value), which the read-back's first look at the text flattens piece by
 * piece, and a memoised shared part's rope again in every workload that holds it. A shared part's text
 * (`sharedText`, a flat string made once) is one piece.
 */
function afterKey(v: Json, keyColumn: number, style: BlockStyle): string {
  const out: string[] = [];
  afterKeyOf(out, v, keyColumn, style);
  return out.join('');
}

/** `afterKey`'s pieces, pushed to `out` (`v` itself written anew, its shared parts from `sharedText`). */
function afterKeyOf(out: string[], v: Json, keyColumn: number, style: BlockStyle): void {
  const inline = emitInline(v);
  if (inline !== undefined) out.push(' ', inline, '\n');
  else blockAfterKey(out, v, keyColumn, style);
}

/** `afterKeyOf`'s pieces for a `v` with no inline form (`emitInline`: a multi-line string, a non-empty collection). */
function blockAfterKey(out: string[], v: Json, keyColumn: number, style: BlockStyle): void {
  if (typeof v === 'string') out.push(' ', literal(v, keyColumn + 2));
  else if (Array.isArray(v)) {
    out.push('\n');
    seqLinesInto(out, v, style.seqIndent === 'wide' ? keyColumn + 2 : keyColumn, style);
  } else {
    out.push('\n');
    mapLinesInto(out, v as { [k: string]: Json }, keyColumn + 2, style, true);
  }
}

/** Block map lines with keys at `column`. */
export function emitMapLines(o: { [k: string]: Json }, column: number, style: BlockStyle): string {
  const out: string[] = [];
  mapLinesInto(out, o, column, style, true);
  return out.join('');
}

/** The pieces of `emitMapLines`, without the indentation of the first line when `padFirst` is false (after `- `). */
function mapLinesInto(
  out: string[],
  o: { [k: string]: Json },
  column: number,
  style: BlockStyle,
  padFirst: boolean,
): void {
  let first = !padFirst;
  for (const k in o) {
    const v = o[k];
    if (v === undefined || (v === null && !style.keepNulls)) continue;
    // A value written on the key's line (shared or not: its text is ` inline\n` either way) follows `key: `.
    const inline = emitInline(v);
    if (inline !== undefined) out.push(keyLine(k, first ? -1 : column, true), inline, '\n');
    else {
      out.push(keyLine(k, first ? -1 : column, false));
      // `emitAfterKey`, less the `emitInline` just made: `v` is a multi-line string or a non-empty collection.
      if (isShared(v)) out.push(sharedText(v, false, column, style));
      else blockAfterKey(out, v, column, style);
    }
    first = false;
  }
}

/**
 * `key:` and `key: ` as written at a column (its spaces, the key, the colon, and the space before a value on the
 * same line), by column, space and key: a map's keys repeat in every workload (`name`, `value`, `valueFrom`,
 * `fieldRef`, ...), and one piece replaces three or four, with no look at the key's characters (issue #40).
 * Indexed by `(column + 1) * 2 + (space ? 1 : 0)` for columns -1 (after `- `: no indentation) to 255. Bounded: a
 * memo is cleared when full; keys longer than `KEY_LINE_MAX_LENGTH` are written each time.
 * Module state by design: memos of a pure function of a key, a column and a flag.
 */
const KEY_LINES: Array<Map<string, string> | undefined> = [];
const KEY_LINES_MAX_ENTRIES = 1024;
const KEY_LINE_MAX_LENGTH = 64;

/** `spaces(column)` (none for -1), `emitKey(k)`, `:` and, with `space`, a space: one flat string. */
function keyLine(k: string, column: number, space: boolean): string {
  const at = (column + 1) * 2 + (space ? 1 : 0);
  let memo = KEY_LINES[at];
  const known = memo?.get(k);
  if (known !== undefined) return known;
  const line = [column < 0 ? '' : spaces(column), emitKey(k), space ? ': ' : ':'].join('');
  if (k.length <= KEY_LINE_MAX_LENGTH && column <= 255) {
    if (memo === undefined) {
      memo = new Map();
      KEY_LINES[at] = memo;
    } else if (memo.size >= KEY_LINES_MAX_ENTRIES) memo.clear();
    // A copy of the key: one cut from a text would keep that text alive for as long as the entry.
    memo.set(ownCopy(k), line);
  }
  return line;
}

/** The text after `- ` for a sequence entry whose dash is at `dashColumn`. */
export function emitAfterDash(v: Json, dashColumn: number, style: BlockStyle): string {
  if (isShared(v)) return sharedText(v, true, dashColumn, style);
  return afterDashText(v, dashColumn, style);
}

function afterDashText(v: Json, dashColumn: number, style: BlockStyle): string {
  const out: string[] = [];
  afterDashOf(out, v, dashColumn, style);
  return out.join('');
}

/** `emitAfterDash`'s pieces, pushed to `out` (a shared `v`'s text as one piece). */
function afterDashInto(out: string[], v: Json, dashColumn: number, style: BlockStyle): void {
  if (isShared(v)) out.push(sharedText(v, true, dashColumn, style));
  else afterDashOf(out, v, dashColumn, style);
}

/** `afterDashText`'s pieces, pushed to `out` (`v` itself written anew, its shared parts from `sharedText`). */
function afterDashOf(out: string[], v: Json, dashColumn: number, style: BlockStyle): void {
  const inline = emitInline(v);
  if (inline !== undefined) out.push(inline, '\n');
  else if (typeof v === 'string') out.push(literal(v, dashColumn + 2));
  // A list's first dash follows this entry's dash on its line: its indentation is left out.
  else if (Array.isArray(v)) seqLinesInto(out, v, dashColumn + 2, style, false);
  // The map's first line follows the dash: emitted without its indentation.
  else mapLinesInto(out, v as { [k: string]: Json }, dashColumn + 2, style, false);
}

/** Block sequence lines with dashes at `dashColumn` (joined once, a flat string: see `afterKey`). */
export function emitSeqLines(a: Json[], dashColumn: number, style: BlockStyle): string {
  const out: string[] = [];
  seqLinesInto(out, a, dashColumn, style);
  return out.join('');
}

/** The pieces of `emitSeqLines`, without the indentation of the first dash when `padFirst` is false (after `- `). */
function seqLinesInto(out: string[], a: Json[], dashColumn: number, style: BlockStyle, padFirst = true): void {
  // The indentation and the dash as one piece (`spaces(dashColumn)` then `- `): a piece less per entry to join.
  const dash = dashAt(dashColumn);
  let first = !padFirst;
  for (const v of a) {
    out.push(first ? '- ' : dash);
    afterDashInto(out, v, dashColumn, style);
    first = false;
  }
}

/**
 * `spaces(n)` and `- ` by `n` (for n < 256).
 * Module state by design: a memo of a pure function of `n`.
 */
const DASHES: string[] = [];

/** `n` spaces and `- `, one flat string (kept for n < 256). */
function dashAt(n: number): string {
  const known = DASHES[n];
  if (known !== undefined) return known;
  // Joined: flat (one added up is a rope of its two parts, walked again at each join that copies it).
  const dash = [spaces(n), '- '].join('');
  if (n < 256) DASHES[n] = dash;
  return dash;
}
