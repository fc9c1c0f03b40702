import { parse } from 'yaml';
import type { Json } from '../../model.ts';
import { FRAGMENT_YAML_OPTIONS } from './readers.ts';
import { Declined, decline } from './scan.ts';
import { FRAGMENT_FLOW, LineReader, afterSpaces, isEntry } from './fragment-lines.ts';
import type { FlowRules } from './scan.ts';

/**
 * Reads the block YAML that driver templates render (the hot path of injection: one fragment per
 * workload) as Istio's injector reads it: YAML 1.1 as Go's sigs.k8s.io/yaml does (`yes`/`on` are booleans,
 * `0x1f` and `017` numbers; the rules are in `scalars.ts`), i.e. `yaml`'s `parse(text, FRAGMENT_YAML_OPTIONS)`.
 * The fast reader (`readFragmentFast`) reads the subset templates produce and declines the rest, which
 * `yaml` reads instead. Returns the document's data (null for an empty text).
 *
 * @throws the `yaml` package's error for text that is not YAML
 */
export function parseFragment(text: string): Json {
  const fast = readFragmentFast(text);
  return fast !== undefined ? fast : (parse(text, FRAGMENT_YAML_OPTIONS) as Json);
}

/**
 * The fast fragment reader: the data of `text`, or `undefined` where it declines. It reads block maps and
 * sequences, plain / single- / double-quoted scalars, `|` literal block scalars (any chomping), flow
 * collections (`readFlow`, trailing commas allowed, spread over lines), comments and blank lines.
 *
 * It declines (the decline list, pinned by test/yaml/fragment-reader.test.ts): anchors, aliases and tags
 * (`&`, `*`, `!`), explicit keys (`?`), directives and document markers (`%`, `---`, `...`), tabs in
 * indentation, multi-line plain or quoted scalars, `>` folded block scalars and block scalars with an
 * indentation indicator, `<<` merge keys and duplicate keys in flow collections, implicit nulls in flow
 * (`{a}`), keys in flow that are not strings, plain scalars whose readers disagree or that JSON cannot
 * hold exactly (`0x1f`, `0644`, `1_000`, `1:20`, `.inf`, integers beyond 2^53: `scalars.ts`), and any
 * structure it does not recognise (wrong indentation, `a: b: c`, text after a flow collection).
 *
 * @param rules how plain scalars read: `FRAGMENT_FLOW` (Go's YAML 1.1 reading of template output), or
 *   `AGREED_FLOW` (the read-back verifier's: a YAML 1.1 boolean declined; what the verifier proves is this reading)
 */
export function readFragmentFast(text: string, rules: FlowRules = FRAGMENT_FLOW): Json | undefined {
  try {
    return new FastReader(text, rules).document();
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

/** Reads the block structure into data (`readFragmentFast`). */
class FastReader extends LineReader {
  document(): Json {
    const first = this.line(0);
    if (first === undefined) return null;
    const v = this.node(first.indent);
    if (this.line(this.pos) !== undefined) decline();
    return v;
  }

  /** A block node whose lines start at `indent` (or a scalar on its own line). */
  private node(indent: number): Json {
    const line = this.line(this.pos);
    if (line === undefined || line.indent !== indent) decline();
    if (line.text === '-' || line.text.startsWith('- ')) return this.seq(indent);
    if (this.keyEnd(line.text) >= 0) return this.map(indent);
    // A lone scalar or flow collection.
    this.pos++;
    return this.inlineValue(line.text, line, indent);
  }

  private seq(indent: number): Json[] {
    const out: Json[] = [];
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) {
        if (line.indent > indent) decline();
        break;
      }
      const rest = line.text === '-' ? '' : afterSpaces(line.text, 2);
      if (rest === '' || rest[0] === '#') {
        this.pos++;
        const next = this.line(this.pos);
        out.push(next && next.indent > indent ? this.node(next.indent) : null);
        continue;
      }
      // `- key: value` starts a compact map at the column of `key`; `- - x` a nested seq.
      const col = indent + (line.text.length - rest.length);
      this.replaceLine(this.pos, col, rest);
      if (rest === '-' || rest.startsWith('- ') || this.keyEnd(rest) >= 0) {
        out.push(this.node(col));
      } else {
        this.pos++;
        out.push(this.inlineValue(rest, line, indent));
      }
    }
    return out;
  }

  private map(indent: number): { [k: string]: Json } {
    const out: { [k: string]: Json } = {};
    for (let line = this.line(this.pos); line !== undefined; line = this.line(this.pos)) {
      if (line.indent !== indent) {
        if (line.indent > indent) decline();
        break;
      }
      const end = this.keyEnd(line.text);
      if (end < 0) decline();
      const key = this.key(line.text.slice(0, end));
      if (key === '<<' || key === '__proto__') decline();
      const rest = afterSpaces(line.text, end + 1);
      this.pos++;
      let value: Json;
      if (rest === '' || rest[0] === '#') {
        const next = this.line(this.pos);
        if (next && next.indent > indent) value = this.node(next.indent);
        else if (next && next.indent === indent && isEntry(next.text)) value = this.seq(indent);
        else value = null;
      } else {
        value = this.inlineValue(rest, line, indent);
      }
      out[key] = value;
    }
    return out;
  }
}
