import { resolveManifestPlain } from '../scalars.ts';
import { COLON, CR, DASH, HASH, SPACE, TAB, decline, unquote } from './scan.ts';

/**
 * Plain and quoted scalars written over several lines in block context, for the manifest reader
 * (manifest-reader.ts): what YAML emitters that wrap long strings at a line width write (PyYAML and the
 * `yaml` package do by default, at 80 columns). The lines fold as YAML 1.2 folds flow scalars (spec 7.3 and
 * 7.3.3): the line break between two lines becomes a space, each empty line between them a line feed, and the
 * white space around a break is dropped. What is unusual is declined (the caller then leaves the document to
 * the `yaml` package): a tab or a `: ` in a plain scalar's lines, a continuation line that starts with `- `,
 * `? ` or `: `, a line not indented more than the parent collection, a backslash at the end of a double-quoted
 * line, and a plain scalar that folds to anything but a string. Differential property tests hold what it
 * reads to the `yaml` package (test/yaml/manifest-reader.test.ts, test/yaml/manifest-reader-multiline.test.ts).
 */

/** One line of the text: its content (`cs` to `ce`, line break excluded), its indentation and the next line. */
interface RawLine {
  cs: number;
  ce: number;
  ind: number;
  nx: number;
}

/** The line that starts at `p`. */
function lineAt(text: string, p: number): RawLine {
  let cs = p;
  while (text.charCodeAt(cs) === SPACE) cs++;
  let le = text.indexOf('\n', cs);
  if (le < 0) le = text.length;
  const nx = le < text.length ? le + 1 : text.length;
  if (text.charCodeAt(le - 1) === CR && le - 1 >= cs) le--;
  return { cs, ce: le, ind: cs - p, nx };
}

/**
 * Where a plain scalar that starts at `i` ends on its line (`ce`: the line's end), trailing spaces left out, and
 * whether a comment follows it.
 * @throws Declined (scan.ts) for a `: ` or a tab in it
 */
export function plainLineEnd(text: string, i: number, ce: number): { end: number; commented: boolean } {
  let e = ce;
  let commented = false;
  for (let j = i; j < ce; j++) {
    const ch = text.charCodeAt(j);
    if (ch === HASH && text.charCodeAt(j - 1) === SPACE) {
      e = j;
      commented = true;
      break;
    }
    if (ch === COLON && (j + 1 >= ce || text.charCodeAt(j + 1) === SPACE)) decline();
    if (ch === TAB) decline();
  }
  while (text.charCodeAt(e - 1) === SPACE) e--;
  return { end: e, commented };
}

/**
 * The lines that continue a plain scalar whose first line's text runs from `start` to `end` (no comment after it;
 * the next line starts at `nx`), in a collection at column `indent`: undefined when the next content line is not
 * more indented (a one-line scalar). Else its folded value, the end of its last line's text and the start of the
 * line after that.
 * @throws Declined (scan.ts) for what is left to the `yaml` package
 */
export function plainContinued(
  text: string,
  start: number,
  end: number,
  nx: number,
  indent: number,
): { value: string; end: number; nx: number } | undefined {
  // The common case first, without scanning a line: the next line is not blank and not more indented.
  let q = nx;
  while (text.charCodeAt(q) === SPACE) q++;
  const c0 = text.charCodeAt(q);
  if (q >= text.length || (q - nx <= indent && c0 !== 10 && c0 !== CR)) return undefined;
  let value = text.slice(start, end);
  let last = end;
  let lastNx = nx;
  let blanks = 0;
  let lines = 1;
  for (let p = nx; p < text.length; ) {
    const l = lineAt(text, p);
    p = l.nx;
    if (l.cs >= l.ce) {
      blanks++;
      continue;
    }
    const c = text.charCodeAt(l.cs);
    // A comment line ends the scalar (the reader then declines a content line more indented after it).
    if (l.ind <= indent || c === HASH) break;
    // Any character but these may start a continuation line (YAML 1.2 `ns-plain-char`; `[`, `"` or `&` there are
    // text): `- `, `? ` and `: ` are left to the `yaml` package, which reads them otherwise or not at all.
    const sp = l.cs + 1 >= l.ce || text.charCodeAt(l.cs + 1) === SPACE;
    if (c === TAB || ((c === DASH || c === 63 || c === COLON) && sp)) decline();
    // A comment after a line ends the scalar there.
    const { end: e, commented } = plainLineEnd(text, l.cs, l.ce);
    value += blanks === 0 ? ' ' : '\n'.repeat(blanks);
    value += text.slice(l.cs, e);
    blanks = 0;
    last = e;
    lastNx = l.nx;
    lines++;
    if (commented) break;
  }
  if (lines === 1) return undefined;
  // Two lines fold with a space or a line feed between them: never a number, a boolean or null, but checked.
  if (resolveManifestPlain(value) !== value) decline();
  return { value, end: last, nx: lastNx };
}

/**
 * A quoted scalar that starts at `i` (its quote) and closes on a later line, in a collection at column `indent`:
 * its value and the index of its closing quote. Every line after the first must be blank or indented more than
 * `indent`.
 * @throws Declined (scan.ts) for what is left to the `yaml` package, and for a scalar that does not close
 */
export function quotedContinued(text: string, i: number, indent: number): { value: string; close: number } {
  const q = text.charCodeAt(i);
  const lines: string[] = [];
  let from = i + 1;
  for (let j = i + 1; j < text.length; j++) {
    const ch = text.charCodeAt(j);
    if (ch === TAB) decline();
    if (q === 34 && ch === 92) {
      const after = text.charCodeAt(j + 1);
      if (after === 10 || after === CR) decline();
      j++;
      continue;
    }
    if (ch === q) {
      if (q === 39 && text.charCodeAt(j + 1) === 39) {
        j++;
        continue;
      }
      lines.push(text.slice(from, j));
      const quote = String.fromCharCode(q);
      const body = fold(lines);
      return { value: unquote(`${quote}${body}${quote}`, 0, body.length + 1), close: j };
    }
    if (ch === 10) {
      const end = text.charCodeAt(j - 1) === CR ? j - 1 : j;
      const line = text.slice(from, end);
      // A backslash before the break (or before the spaces folding drops) escapes what folding would change.
      if (q === 34 && line.trimEnd().endsWith('\\')) decline();
      lines.push(line);
      const l = lineAt(text, j + 1);
      if (l.cs < l.ce && l.ind <= indent) decline();
      from = j + 1;
    }
  }
  return decline();
}

/**
 * The lines of a quoted scalar folded (YAML 1.2 spec 7.3): the spaces before each line break and after it are
 * dropped, one line break becomes a space and each empty line between two lines a line feed (tabs are declined
 * before this).
 */
function fold(lines: readonly string[]): string {
  let out = (lines[0] ?? '').replace(/ +$/, '');
  let blanks = 0;
  for (let k = 1; k < lines.length; k++) {
    const lastLine = k === lines.length - 1;
    let s = (lines[k] ?? '').replace(/^ +/, '');
    if (!lastLine) s = s.replace(/ +$/, '');
    if (s === '' && !lastLine) {
      blanks++;
      continue;
    }
    out += blanks === 0 ? ' ' : '\n'.repeat(blanks);
    out += s;
    blanks = 0;
  }
  return out;
}
