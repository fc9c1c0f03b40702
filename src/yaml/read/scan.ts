import type { Json } from '../../model.ts';
import type { TextMap, TextNode, TextPair, TextSeq } from './text-node.ts';
import { isYaml11Bool, resolveManifestPlain, resolvePlain } from '../scalars.ts';

/**
 * The pieces of the two fast readers (`manifest-reader.ts`, `fragment-reader.ts`) that read one line's worth
 * of YAML: plain scalar resolution (the rules are in `scalars.ts`), quoted scalars and one-line flow
 * collections. Anything they do not read exactly as the `yaml` package does throws `Declined`.
 */

/** Thrown inside the reader for anything it does not read itself. */
export class Declined extends Error {}

/** Declines the input: the caller reads it with the `yaml` package instead. */
export function decline(): never {
  throw new Declined();
}

export const SPACE = 32;
export const HASH = 35;
export const TAB = 9;
export const CR = 13;
export const COLON = 58;
export const DASH = 45;
export const DOT = 46;
/** Collections nested deeper than this are left to the `yaml` package. */
export const MAX_DEPTH = 200;

/** A plain scalar's value as Go reads YAML 1.1 (`yes` is true); declines rare forms (`0x1f`, `1_000`, `.inf`). */
export function resolveGo11(s: string): Json {
  const v = resolvePlain(s, '1.1');
  return v === undefined ? decline() : v;
}

/**
 * A plain scalar's value in both readings of a manifest (`resolveManifestPlain` in `scalars.ts`: the YAML 1.2 core
 * value, with `yes`, `on` and the other 1.1 booleans the strings they are in the Kubernetes reading too); declines
 * what the two readings may read otherwise (`0644`, `1_000`, `0x1f`).
 */
export function resolveManifest(s: string): Json {
  const v = resolveManifestPlain(s);
  return v === undefined ? decline() : v;
}

/**
 * A plain scalar's value where Go's YAML 1.1 reading of template output, the Kubernetes reading and YAML 1.2 core
 * all agree: `resolveGo11`, declining the 1.1 booleans too (`yes` is true for Istio's injector, a string for the
 * Kubernetes reading). The read-back's verifier reads with it (src/yaml/read/fragment-verifier.ts).
 */
export function resolveAgreed(s: string): Json {
  return isYaml11Bool(s) ? decline() : resolveGo11(s);
}

/** Whether a block sequence entry (`-` before a space or the line's end `ce`) starts at `i`. */
export function seqEntryAt(text: string, i: number, ce: number): boolean {
  if (text.charCodeAt(i) !== DASH) return false;
  return i + 1 >= ce || text.charCodeAt(i + 1) === SPACE;
}

/** A space and the flow indicators `,[]{}`: after `-`, `?` or `:` in flow, they make it an indicator. */
const FLOW_BREAK = new Set([SPACE, 44, 91, 93, 123, 125]);

/** Characters that cannot start a plain scalar in block context (YAML 1.2 `c-indicator`, less `-?:`). */
export const NOT_PLAIN_START = new Set([
  ',',
  '[',
  ']',
  '{',
  '}',
  '#',
  '&',
  '*',
  '!',
  '|',
  '>',
  "'",
  '"',
  '%',
  '@',
  '`',
]);

const DOUBLE_ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};

/** Index of the closing quote of the quoted scalar at `i`, before `ce` (the line's end; multi-line: declined). */
export function quoteEnd(text: string, i: number, ce: number): number {
  const j = closeOnLine(text, i, ce);
  return j < 0 ? decline() : j;
}

/**
 * Index of the closing quote of the quoted scalar at `i` when it closes before `ce`, the end of its line; -1 when it
 * does not (`quoteEnd` without declining).
 */
export function closeOnLine(text: string, i: number, ce: number): number {
  const q = text.charCodeAt(i);
  for (let j = i + 1; j < ce; j++) {
    const ch = text.charCodeAt(j);
    if (q === 34 && ch === 92) j++;
    else if (ch === q) {
      if (q === 39 && text.charCodeAt(j + 1) === 39) j++;
      else return j;
    }
  }
  return -1;
}

/** The value of the quoted scalar from `i` to its closing quote `close` (YAML escapes decoded). */
export function unquote(text: string, i: number, close: number): string {
  const body = text.slice(i + 1, close);
  if (text.charCodeAt(i) === 39) return body.includes("'") ? body.replace(/''/g, "'") : body;
  if (!body.includes('\\')) return body;
  let out = '';
  for (let j = 0; j < body.length; j++) {
    const ch = body.charAt(j);
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    j++;
    const e = body.charAt(j);
    const simple = DOUBLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const hex = body.slice(j + 1, j + 1 + len);
    if (len === 0 || hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) decline();
    const cp = parseInt(hex, 16);
    if (cp > 0x10ffff) decline();
    out += String.fromCodePoint(cp);
    j += len;
  }
  return out;
}

/** How a flow collection is read: the scalar rules, and whether a trailing comma (`{a: 1,}`) is read. */
export interface FlowRules {
  /** Resolves a plain scalar (declining what it does not read): `resolveManifest`, `resolveGo11` or `resolveAgreed`. */
  resolve: (s: string) => Json;
  /** Read `[a, b,]` as `[a, b]` (YAML allows it; Istio's templates write `annotations: {...,}`). */
  trailingComma: boolean;
}

/**
 * The manifest reader's flow rules: both manifest readings (`resolveManifest`: 1.1 look-alikes declined, 1.1
 * booleans strings); trailing commas declined.
 */
export const MANIFEST_FLOW: FlowRules = { resolve: resolveManifest, trailingComma: false };

/**
 * A flow collection at `i` that closes before `ce` (on the same line: `{a: 1, "b": [x, y]}`), nested at
 * most `MAX_DEPTH - depth` deep; implicit nulls (`{a}`), non-string keys, duplicate keys, `<<` and
 * anything unusual are declined, and so are trailing commas unless `rules` allow them.
 *
 * Long by design: parser (YAML 1.2 flow collections, spec chapter 7.4).
 */
export function readFlow(
  text: string,
  i: number,
  ce: number,
  depth: number,
  rules: FlowRules = MANIFEST_FLOW,
): { value: Json; node: TextMap | TextSeq } {
  let p = i;
  const ws = (): void => {
    while (text.charCodeAt(p) === SPACE) p++;
    if (p >= ce) decline();
  };
  const scalar = (inMap: boolean, asKey: boolean): { value: Json; node: TextNode } => {
    ws();
    const c = text.charCodeAt(p);
    if (c === 123 || c === 91) {
      if (asKey) decline();
      return collection();
    }
    const start = p;
    if (c === 34 || c === 39) {
      const close = quoteEnd(text, p, ce);
      p = close + 1;
      return {
        value: unquote(text, start, close),
        node: { t: 'scalar', style: c === 34 ? 'double' : 'single', start, end: p, outerEnd: p },
      };
    }
    // `-`, `?` and `:` start a plain scalar only before a character that is part of it (`-x`, not `- `, `-,`, `-]`).
    if (
      NOT_PLAIN_START.has(text.charAt(p)) ||
      ((c === DASH || c === 63 || c === COLON) && (p + 1 >= ce || FLOW_BREAK.has(text.charCodeAt(p + 1))))
    )
      decline();
    while (p < ce) {
      const ch = text.charCodeAt(p);
      if (ch === 44 || ch === 93 || ch === 125 || ch === 91 || ch === 123) break;
      if (ch === COLON) {
        const after = text.charCodeAt(p + 1);
        if (after === SPACE) {
          if (!inMap || !asKey) decline();
          break;
        }
        if (after === 44 || after === 93 || after === 125 || p + 1 >= ce) decline();
      }
      if (ch === HASH && text.charCodeAt(p - 1) === SPACE) decline();
      if (ch === TAB) decline();
      p++;
    }
    let e = p;
    while (text.charCodeAt(e - 1) === SPACE) e--;
    const s = text.slice(start, e);
    if (s === '') decline();
    return { value: rules.resolve(s), node: { t: 'scalar', style: 'plain', start, end: e, outerEnd: e } };
  };
  /** After an entry: true at the closing bracket `close`; past the `,` before another entry otherwise. */
  const entryEnds = (close: number): boolean => {
    ws();
    const c = text.charCodeAt(p);
    if (c === close) return true;
    if (c !== 44) decline();
    p++;
    ws();
    if (text.charCodeAt(p) !== close) return false;
    // A trailing comma (`[a, ]`): read by the fragment reader, left to yaml by the manifest reader.
    return rules.trailingComma ? true : decline();
  };
  const collection = (): { value: Json; node: TextMap | TextSeq } => {
    const start = p;
    if (++depth > MAX_DEPTH) decline();
    if (text.charCodeAt(p) === 123) {
      p++;
      const value: { [k: string]: Json } = {};
      const pairs: TextPair[] = [];
      ws();
      if (text.charCodeAt(p) !== 125) {
        for (;;) {
          const k = scalar(true, true);
          if (
            typeof k.value !== 'string' ||
            k.value === '<<' ||
            k.value === '__proto__' ||
            Object.hasOwn(value, k.value)
          )
            decline();
          ws();
          if (text.charCodeAt(p) !== COLON) decline();
          p++;
          // After a plain key the `:` needs a space; after a quoted key (JSON style) it does not.
          if (k.node.t === 'scalar' && k.node.style === 'plain' && text.charCodeAt(p) !== SPACE) decline();
          const v = scalar(true, false);
          value[k.value] = v.value;
          pairs.push({ key: k.value, keyNode: k.node, value: v.node });
          if (entryEnds(125)) break;
        }
      }
      p++;
      depth--;
      return { value, node: { t: 'map', flow: true, pairs, start, end: p, outerEnd: p } };
    }
    p++;
    const value: Json[] = [];
    const items: TextNode[] = [];
    ws();
    if (text.charCodeAt(p) !== 93) {
      for (;;) {
        const v = scalar(false, false);
        value.push(v.value);
        items.push(v.node);
        if (entryEnds(93)) break;
      }
    }
    p++;
    depth--;
    return { value, node: { t: 'seq', flow: true, items, start, end: p, outerEnd: p } };
  };
  return collection();
}
