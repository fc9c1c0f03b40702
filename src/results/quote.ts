/**
 * The one way a message quotes a value (issue 19 for config values, issue 36 for every message): JSON, a string
 * cut after a limit with its length (`"postgres://admi…" (41 characters)`), so that a value taken from the input
 * (an annotation, a patch, a config field, a template's output) is never copied whole into results, CI logs or the
 * Argo CD UI, however long it is. test/security/quoted-values.test.ts keeps every message on it.
 */

/** Characters of a config value quoted in a message (a config field may hold a secret: a short cut). */
export const QUOTED_VALUE_CHARS = 20;
/** Characters of input data (annotations, labels, patches, maps) quoted in a message. */
export const QUOTED_DATA_CHARS = 200;

/**
 * `value` quoted for a message: a string as JSON, cut after `limit` characters (code points) with `…"` and
 * `(N characters)`; any other value as its JSON, and when that is longer than `limit * 2`, by its shape
 * (`a list`, `a map`) for config values (`limit` `QUOTED_VALUE_CHARS`), else cut like a string.
 */
export function quoteValue(value: unknown, limit: number = QUOTED_VALUE_CHARS): string {
  if (typeof value !== 'string') {
    const json = JSON.stringify(value) ?? String(value);
    if (json.length <= limit * 2) return json;
    return limit <= QUOTED_VALUE_CHARS
      ? describeShape(value)
      : `${cut(json, limit)} (${json.length} characters of JSON)`;
  }
  const chars = [...value];
  if (chars.length <= limit) return JSON.stringify(value);
  return `${JSON.stringify(chars.slice(0, limit).join('')).slice(0, -1)}…" (${chars.length} characters)`;
}

/** `quoteValue` for input data: cut after `QUOTED_DATA_CHARS`. */
export function quoteData(value: unknown): string {
  return quoteValue(value, QUOTED_DATA_CHARS);
}

function cut(json: string, limit: number): string {
  return `${[...json].slice(0, limit).join('')}…`;
}

function describeShape(value: unknown): string {
  return Array.isArray(value) ? 'a list' : value !== null && typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}
