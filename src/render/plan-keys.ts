/**
 * The key walk of the sidecar plans (`./plans.ts`): the key of a workload's data, with each slot-safe,
 * unsteered value replaced by a marker and collected in walk order, and the steering a `NoPlan` adds.
 *
 * A key is a sequence of pieces (JSON texts of names and literals, markers, brackets), walked into a trie
 * (`KeyTrie`): the key is the trie node the walk ends at, so equal piece sequences, and only those, reach one
 * node. Before, the pieces were joined into one text; equal pieces give equal texts, so a node is at least as
 * fine a key as the text was (and the pieces, each a whole JSON token or a marker JSON never holds, read back
 * from the text one way, so it is exactly as fine). A step along a known path compares the piece with the one
 * seen before (most are the same string object: memo texts and property names), where the text was joined and
 * hashed anew for every workload.
 */
import { defined } from '../checked.ts';
import { getOrMake, isJsonObject } from '../json.ts';
import { ANY_TOKEN, isDigitSlot, isNumberSlot, isSlotSafe, type DataPath, type Steer } from './plan-values.ts';

/** Steers `path` under `root`: its values become part of the key from then on (a steered node covers its subtree). */
export function steerAdd(root: Steer, path: DataPath): void {
  let node = root;
  for (const seg of path) {
    if (node.all) return;
    node = getOrMake(node.kids, seg, () => ({ kids: new Map() }));
  }
  node.all = true;
  node.kids.clear();
}

/**
 * Nodes a key trie holds before its planner starts it over (`KeyTrie.size`): a run of distinct shapes cannot
 * grow memory without bound (4096 keys of 256 new pieces each).
 */
export const MAX_KEY_NODES = 1 << 20;

/** A trie of key pieces (see the module comment); `size` counts its nodes. */
export class KeyTrie {
  size = 1;
  readonly root = new KeyNode(this);
}

/**
 * One node of a {@link KeyTrie}: a key prefix. Two kinds of edge lead on: a piece (`step`) and a map key
 * (`stepName`), apart, so that a map key never reads as a piece. The first edge of each kind seen after a node is
 * kept in fields (most prefixes are followed by one only), the others in a map made when a second one comes.
 */
export class KeyNode {
  private piece: string | undefined;
  private next: KeyNode | undefined;
  private more: Map<string, KeyNode> | undefined;
  private name: string | undefined;
  private nameNext: KeyNode | undefined;
  private names: Map<string, KeyNode> | undefined;

  constructor(private readonly trie: KeyTrie) {}

  /** The node of this prefix followed by `piece`, made when new. */
  step(piece: string): KeyNode {
    if (this.piece === piece && this.next) return this.next;
    if (this.piece === undefined) {
      this.piece = piece;
      this.next = this.made();
      return this.next;
    }
    this.more ??= new Map();
    let node = this.more.get(piece);
    if (!node) {
      node = this.made();
      this.more.set(piece, node);
    }
    return node;
  }

  /**
   * The node of this prefix followed by map key `k`: the key text's piece was its JSON text and `:` (which
   * no other piece is), so a name edge stands for it. `k` is checked for a token only when its edge is made: an
   * edge found was made for the same text.
   * @throws HAS_TOKEN when `k` holds a placeholder token.
   */
  stepName(k: string): KeyNode {
    if (this.name === k && this.nameNext) return this.nameNext;
    let node = this.names?.get(k);
    if (node) return node;
    if (ANY_TOKEN.test(k)) throw HAS_TOKEN;
    node = this.made();
    if (this.name === undefined) {
      this.name = k;
      this.nameNext = node;
    } else {
      this.names ??= new Map();
      this.names.set(k, node);
    }
    return node;
  }

  private made(): KeyNode {
    this.trie.size++;
    return new KeyNode(this.trie);
  }
}

/** Kinds of a top-level field of the template data (`FieldKinds`, see `PlanShape` of ./plans.ts). */
export const DERIVED = 0;
export const SLOT = 1;
export const IDENTITY = 2;
export const LITERAL = 3;

/**
 * The kind of each top-level field of a planner's data (`DERIVED`, `SLOT`, `IDENTITY`, else `LITERAL`, by its
 * `PlanShape`'s names). A kind is a function of the name alone, so the kinds of the last field list are given
 * again for a list of the same names (a workload's template data has the fields of the one before).
 */
export class FieldKinds {
  private readonly slots: ReadonlySet<string>;
  private readonly identities: ReadonlySet<string>;
  private readonly derived: ReadonlySet<string>;
  private lastFields: readonly string[] = [];
  private lastKinds = new Uint8Array(0);

  constructor(slots: readonly string[], identities: readonly string[], derived: readonly string[]) {
    this.slots = new Set(slots);
    this.identities = new Set(identities);
    this.derived = new Set(derived);
  }

  /** The kind of each of `fields`, in order. */
  of(fields: readonly string[]): Uint8Array {
    const last = this.lastFields;
    let same = fields.length === last.length;
    for (let i = 0; same && i < fields.length; i++) same = fields[i] === last[i];
    if (same) return this.lastKinds;
    const kinds = new Uint8Array(fields.length);
    for (let i = 0; i < fields.length; i++) kinds[i] = this.kindOf(defined(fields[i], 'a field of the data'));
    this.lastFields = fields;
    this.lastKinds = kinds;
    return kinds;
  }

  private kindOf(k: string): number {
    if (this.derived.has(k)) return DERIVED;
    if (this.slots.has(k)) return SLOT;
    return this.identities.has(k) ? IDENTITY : LITERAL;
  }
}

/** Thrown inside the key walk: the data holds a token already, so no plan can tell its slots apart. */
export const HAS_TOKEN = new Error('data holds a placeholder token');

/**
 * The key text of each deep-frozen object the key walk wrote as a literal (`frozenText`), or null when its JSON
 * holds a token.
 * Module state by design: a memo keyed by deep-frozen objects (checked by `deepFrozen`), whose text never changes;
 * weakly held. (Istio's ProxyConfig of the template data is one object for every pod without
 * `proxy.istio.io/config`.)
 */
const FROZEN_TEXT = new WeakMap<object, string | null>();
/**
 * The short key text (`\u0005` and a number) of each distinct JSON text of a deep-frozen object: equal texts get
 * one number, so two keys are equal exactly when the JSON texts were (a ProxyConfig's 400 characters are not
 * hashed again for every workload's key).
 * Module state by design: an interning table of texts; bounded (`MAX_MEMO`). Its numbers come from
 * `frozenIds`, which never counts back, so a number names one text even after the table starts over.
 */
const FROZEN_IDS = new Map<string, string | null>();
/**
 * The next number `FROZEN_IDS` gives a text.
 * Module state by design: a counter that only goes up, so no two texts ever share a number.
 */
let frozenIds = 0;
/**
 * Objects found deep-frozen: every object and array in them frozen. Frozen stays frozen, so a yes never goes
 * stale (a no is not kept: a value may be frozen later).
 * Module state by design: a memo of a fact that cannot change once true, keyed by the object, weakly held.
 */
const DEEP_FROZEN = new WeakSet<object>();
/**
 * Entries a string memo of the key walk (`FROZEN_IDS`, `STRING_KEYS`, `LITERAL_STRINGS`) holds before it starts over:
 * a run of distinct names cannot grow memory without bound. Starting over loses nothing but the memo (a
 * `FROZEN_IDS` number is then new for an old text: a finer key, never a coarser one, `frozenIds`).
 */
const MAX_MEMO = 65_536;
/**
 * The key text of each string the walk met in a slot root (`stringKey`): `\u0001` (slot-safe), `\u0004` (digit
 * string), its JSON text (a literal), or null (it holds a token).
 * Module state by design: a memo of a pure function of the string; bounded (`MAX_MEMO`).
 */
const STRING_KEYS = new Map<string, string | null>();
/**
 * The key text of each string written as a literal (`literalKey`): its JSON text, or null (it holds a token).
 * Module state by design: a memo of a pure function of the string; bounded (`MAX_MEMO`).
 */
const LITERAL_STRINGS = new Map<string, string | null>();
/** Whether every object and array in `v` (itself included) is frozen, so that its JSON text can never change. */
export function deepFrozen(v: object): boolean {
  if (DEEP_FROZEN.has(v)) return true;
  if (!Object.isFrozen(v)) return false;
  for (const x of Object.values(v)) if (typeof x === 'object' && x !== null && !deepFrozen(x)) return false;
  DEEP_FROZEN.add(v);
  return true;
}

/** `memo`'s value of `k`, else `make(k)` kept in it (the memo starts over at `MAX_MEMO` entries). */
function memoOf(memo: Map<string, string | null>, k: string, make: (k: string) => string | null): string | null {
  let text = memo.get(k);
  if (text === undefined) {
    text = make(k);
    if (memo.size >= MAX_MEMO) memo.clear();
    memo.set(k, text);
  }
  return text;
}

/** The JSON text of `v`, or null when it holds a token. */
function tokenFreeJson(v: unknown): string | null {
  const s = JSON.stringify(v);
  return ANY_TOKEN.test(s) ? null : s;
}

/**
 * The key text of a deep-frozen object: `\u0005` and the number of its JSON text (`FROZEN_IDS`; JSON text never
 * holds a raw `\u0005`, so it reads as nothing else), or null when the text holds a token; worked out once per
 * object (`FROZEN_TEXT`).
 */
function frozenText(v: object): string | null {
  let text = FROZEN_TEXT.get(v);
  if (text === undefined) {
    const json = tokenFreeJson(v);
    text = json === null ? null : memoOf(FROZEN_IDS, json, () => `\u0005${frozenIds++}`);
    FROZEN_TEXT.set(v, text);
  }
  return text;
}

/**
 * The key text of a literal value: its JSON (`u` for undefined; a string's worked out once per distinct string,
 * `LITERAL_STRINGS`); a deep-frozen object's is a short number per distinct JSON text, worked out once per object
 * (`frozenText`). Two values have the same key text exactly when
 * their JSON texts are the same (a deep-frozen object and an unfrozen one of the same text aside: those differ,
 * a finer key).
 * @throws HAS_TOKEN when the text holds a placeholder token.
 */
export function literalKey(v: unknown): string {
  if (v === undefined) return 'u';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // An integer of at most 10 digits: JSON writes it as `String` does, and a token has 11 digits.
  if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 1e10) return String(v);
  const text =
    typeof v === 'string'
      ? memoOf(LITERAL_STRINGS, v, tokenFreeJson)
      : typeof v === 'object' && v !== null && deepFrozen(v)
        ? frozenText(v)
        : tokenFreeJson(v);
  if (text === null) throw HAS_TOKEN;
  return text;
}

/** The key text of a string in a slot root (see `STRING_KEYS`), made. */
function makeStringKey(v: string): string | null {
  if (isSlotSafe(v)) return '\u0001';
  if (isDigitSlot(v)) return '\u0004';
  return tokenFreeJson(v);
}

/**
 * The key of a subtree, walked on from `at`: the pieces of its JSON with each unsteered slot replaced by a marker
 * (which JSON text never holds raw: `\u0001` a slot-safe string, `\u0004` a digit string, `\u0003` a number),
 * its value pushed to `values` in walk order; returns the node reached. A string's and a map key's text are worked
 * out once per distinct string (`STRING_KEYS`; a map key's when its edge is made, `KeyNode.stepName`).
 * @throws HAS_TOKEN when a literal value or a key holds a placeholder token.
 */
export function slotKey(v: unknown, steer: Steer | undefined, values: string[], at: KeyNode): KeyNode {
  if (steer?.all) return at.step(literalKey(v));
  if (typeof v === 'string') {
    const text = memoOf(STRING_KEYS, v, makeStringKey);
    if (text === null) throw HAS_TOKEN;
    if (text === '\u0001' || text === '\u0004') values.push(v);
    return at.step(text);
  }
  if (typeof v === 'number' && isNumberSlot(v)) {
    values.push(String(v));
    return at.step('\u0003');
  }
  if (Array.isArray(v)) {
    let node = at.step('[');
    for (let i = 0; i < v.length; i++) node = slotKey(v[i], steer?.kids.get(String(i)), values, node).step(',');
    return node.step(']');
  }
  if (isJsonObject<unknown>(v)) {
    let node = at.step('{');
    for (const k of Object.keys(v)) {
      node = slotKey(v[k], steer?.kids.get(k), values, node.stepName(k)).step(',');
    }
    return node.step('}');
  }
  return at.step(literalKey(v));
}
