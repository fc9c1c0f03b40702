/**
 * The one escaping rule for text written for a person or a CI log (stderr result lines, the summary, the
 * table and GitHub reports, `explain` text, error messages): a value taken from the input (an annotation,
 * a name, a file name, a template's error) can neither start a new line (a forged `[error] ...` result or a
 * GitHub `::error` workflow command), nor move the cursor or colour a terminal (ESC, BEL, CSI), nor reorder
 * what a reader sees (Unicode bidi overrides, "Trojan Source", CVE-2021-42574).
 *
 * Escaped, each as a visible backslash sequence: LF `\n`, CR `\r`, the other C0 controls but TAB and DEL
 * `\xHH`, the C1 controls U+0080-U+009F (NEL, CSI, OSC, ...) `\xHH`, and as `\uHHHH` the line and paragraph
 * separators U+2028/U+2029, the bidi embeddings and overrides U+202A-U+202E, the bidi isolates
 * U+2066-U+2069 and the bidi marks U+200E, U+200F, U+061C. Everything else, TAB and backslashes included,
 * is kept as it is. Structured outputs (SARIF, JUnit, JSON, the ResourceList's results) keep exact values:
 * their own encodings carry any text.
 */

/** The characters `escapeLine` rewrites (linear: one character class, no backtracking). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters a terminal acts on are what escapeLine rewrites
const UNSAFE = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069]/g;

function escapeChar(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `s` made safe to print on one line of a terminal or CI log (see the module comment for the rule).
 * `O(s.length)`; its output holds none of the escaped characters.
 */
export function escapeLine(s: string): string {
  return s.replace(UNSAFE, escapeChar);
}
