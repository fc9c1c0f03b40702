import { parseAllDocuments, stringify } from 'yaml';

/**
 * `-o yaml|json`: converts the output text between YAML and JSON. Output already in the asked form is
 * returned as it is (byte for byte). Conversion re-serialises, so comments and layout are not kept.
 *
 * YAML is read as kubectl and kustomize read it (YAML 1.1: `yes`/`on` booleans, `0644` octal, `<<`
 * merge keys), so the JSON says what the cluster would receive; integers beyond 2^53 keep every digit.
 * Several documents become one `kind: List` in JSON (as `kubectl get -o json` prints several objects), and
 * a JSON `kind: List` stays a List in YAML. A document without an object (comments only, or empty) is left out:
 * a `null` item is what `kubectl apply` rejects. YAML output quotes every string a YAML 1.1 reader would read
 * as something else (`"yes"`, `"0644"`).
 */

/** Whether a text is JSON-framed output (its first non-space character opens a JSON object or array). */
export function looksLikeJson(text: string): boolean {
  return /^\s*[{[]/.test(text);
}

const BIG = '\u0000bigint:';

function toJsonText(value: unknown): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${BIG}${v.toString()}` : v), 2);
  return text.replace(new RegExp(`"${BIG.replace('\u0000', '\\\\u0000')}(-?\\d+)"`, 'g'), '$1');
}

/**
 * Converts `text` (meshinject's output: a ResourceList, a List, or a YAML stream) to `format`.
 *
 * @throws Error naming the document when the text does not parse (it is meshinject's own output, so this
 *   means a bug)
 */
export function convertOutput(text: string, format: 'yaml' | 'json'): string {
  if ((format === 'json') === looksLikeJson(text)) return text;
  const docs = parseAllDocuments(text, { version: '1.1', merge: true, intAsBigInt: true, uniqueKeys: false });
  const values: unknown[] = [];
  for (const [i, d] of [...docs].entries()) {
    if (d.errors.length > 0)
      throw new Error(`cannot convert document ${i + 1} to ${format}: ${d.errors[0]?.message.split('\n')[0]}`);
    if (d.contents === null) continue;
    const value: unknown = d.toJS({ maxAliasCount: 100 });
    // A document of comments only (a license header before `---`) holds no object (issue #21 §3).
    if (value === null || value === undefined) continue;
    values.push(value);
  }
  if (format === 'json') {
    const value = values.length === 1 ? values[0] : { apiVersion: 'v1', kind: 'List', items: values };
    return `${toJsonText(value)}\n`;
  }
  return values.map((v) => stringify(v, { version: '1.1', lineWidth: 0 })).join('---\n');
}
