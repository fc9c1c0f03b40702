/**
 * Go `fmt.Sscanf` with a format of two `%d` verbs around one separator, into two `uint32` (part of ./go-parse.ts):
 * how OpenShift's `ParseBlock` reads the `openshift.io/sa.scc.*` namespace annotations that Istio's `GetProxyIDs`
 * uses (`fmt.Sscanf(in, "%d/%d", &start, &size)`, pkg/kube/inject/openshift.go; go1.24 fmt/scan.go).
 */
import type { GoParsed } from './go-parse.ts';

/** Go `isSpace` (fmt/scan.go): the Unicode White_Space runes the scanner skips. */
function isSpace(c: string): boolean {
  const r = c.codePointAt(0) ?? -1;
  if (r === 0x20 || (r >= 0x09 && r <= 0x0d) || r === 0x85 || r === 0xa0 || r === 0x1680) return true;
  return (r >= 0x2000 && r <= 0x200a) || r === 0x2028 || r === 0x2029 || r === 0x202f || r === 0x205f || r === 0x3000;
}

/** One `%d` into a `uint32` from `s` at `i`: blanks skipped (a newline is an error), decimal digits, no sign. */
function scanUint32(s: string, i0: number): { value: number; end: number } | { error: string } {
  let i = i0;
  while (i < s.length) {
    const c = s[i] ?? '';
    if (c === '\r' && s[i + 1] === '\n') {
      i++;
      continue;
    }
    if (c === '\n') return { error: 'unexpected newline' };
    if (!isSpace(c)) break;
    i++;
  }
  if (i >= s.length) return { error: 'EOF' };
  const start = i;
  while (i < s.length && (s[i] ?? '') >= '0' && (s[i] ?? '') <= '9') i++;
  if (i === start) return { error: 'expected integer' };
  const tok = s.slice(start, i);
  const n = BigInt(tok);
  if (n >= 1n << 64n) return { error: `strconv.ParseUint: parsing ${JSON.stringify(tok)}: value out of range` };
  if (n >= 1n << 32n) return { error: `unsigned integer overflow on token ${tok}` };
  return { value: Number(n), end: i };
}

/**
 * Go `fmt.Sscanf(s, "%d<sep>%d", &a, &b)` with `a`, `b` of type `uint32`: both numbers, or Go's error (`expected
 * integer`, `EOF` before a number, `unexpected EOF` before the separator, `input does not match format`, `unsigned
 * integer overflow on token 4294967296`).
 * Blanks before each number are skipped; a sign is refused; whatever follows the second number is ignored.
 */
export function scanTwoUint32(s: string, sep: string): GoParsed<[number, number]> {
  const a = scanUint32(s, 0);
  if ('error' in a) return { ok: false, error: a.error };
  if (a.end >= s.length) return { ok: false, error: 'unexpected EOF' };
  if (s[a.end] !== sep) return { ok: false, error: 'input does not match format' };
  const b = scanUint32(s, a.end + 1);
  if ('error' in b) return { ok: false, error: b.error };
  return { ok: true, value: [a.value, b.value] };
}
