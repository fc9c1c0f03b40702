/**
 * Lexer for Go `text/template` source (the rules of Go's text/template/parse/lex.go): text, `{{`/`}}`
 * actions with `{{- `/` -}}` trim markers, `/* comments *\/`, and the tokens inside actions. Produces the
 * whole token list at once; an error token ends the list. Positions are UTF-16 offsets into the source;
 * `line` is 1-based and counts newlines before the token, as Go does.
 */

/** Token kinds, named after Go's `itemType` constants. */
export enum T {
  Error,
  Bool,
  Char,
  CharConstant,
  Comment,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  // keywords
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

/** One token: kind, source offset, text and line. */
export interface Token {
  typ: T;
  pos: number;
  val: string;
  line: number;
}

const KEYWORDS: Record<string, T> = {
  '.': T.Dot,
  block: T.Block,
  break: T.Break,
  continue: T.Continue,
  define: T.Define,
  else: T.Else,
  end: T.End,
  if: T.If,
  range: T.Range,
  nil: T.Nil,
  template: T.Template,
  with: T.With,
};

const LEFT = '{{';
const RIGHT = '}}';
const LEFT_COMMENT = '/*';
const RIGHT_COMMENT = '*/';

/** Go's item String(): how a token appears in "unexpected X" parse errors. */
export function tokenString(t: Token): string {
  if (t.typ === T.EOF) return 'EOF';
  if (t.typ === T.Error) return t.val;
  if (t.typ >= T.Block && t.typ !== T.Dot) return `<${t.val}>`;
  if (t.typ === T.Dot) return `<.>`;
  if ([...t.val].length > 10) return `${goQuoteString([...t.val].slice(0, 10).join(''))}...`;
  return goQuoteString(t.val);
}

/** Go `%q` of a string (strconv.Quote): printable runes kept, the rest escaped. */
export function goQuoteString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 11) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c === 0xfffd && ch !== '\ufffd') out += '\\ufffd';
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}

function isAlphaNumeric(c: string): boolean {
  return c === '_' || /[\p{L}\p{Nd}]/u.test(c);
}

function runeName(c: string): string {
  const cp = c.codePointAt(0) as number;
  const hex = cp.toString(16).toUpperCase().padStart(4, '0');
  return `U+${hex} '${c}'`;
}

/**
 * Splits `src` into tokens. Lexing errors become a final `T.Error` token whose `val` is Go's message
 * (e.g. `unclosed action`, `bad character U+0023 '#'`).
 *
 * Long by design: parser (the state machine of Go's text/template/parse/lex.go: lexText, lexLeftDelim,
 * lexComment, lexInsideAction and the number, quote, identifier and variable states, one branch per
 * state, kept together so each can be checked against the Go source side by side).
 */
export function lex(src: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let parenDepth = 0;
  let insideAction = false;

  const emit = (typ: T, val = src.slice(start, pos)): void => {
    out.push({ typ, pos: start, val, line: startLine });
    start = pos;
    startLine = line;
  };
  const ignore = (): void => {
    for (let i = start; i < pos; i++) if (src.charCodeAt(i) === 10) line++;
    start = pos;
    startLine = line;
  };
  const advanceTo = (p: number): void => {
    for (let i = pos; i < p; i++) if (src.charCodeAt(i) === 10) line++;
    pos = p;
  };
  const fail = (msg: string): Token[] => {
    out.push({ typ: T.Error, pos: start, val: msg, line: startLine });
    return out;
  };
  const atRightDelim = (): { delim: boolean; trim: boolean } => {
    if (
      src.startsWith(` -${RIGHT}`, pos) ||
      src.startsWith(`\t-${RIGHT}`, pos) ||
      src.startsWith(`\r-${RIGHT}`, pos) ||
      src.startsWith(`\n-${RIGHT}`, pos)
    ) {
      return { delim: true, trim: true };
    }
    return { delim: src.startsWith(RIGHT, pos), trim: false };
  };
  const atTerminator = (): boolean => {
    if (pos >= src.length) return true;
    const c = src[pos] as string;
    if (isSpace(c) || c === '.' || c === ',' || c === '|' || c === ':' || c === ')' || c === '(') return true;
    return src.startsWith(RIGHT, pos);
  };
  const nextChar = (): string => {
    const cp = src.codePointAt(pos);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  };

  for (;;) {
    if (!insideAction) {
      // lexText
      const x = src.indexOf(LEFT, pos);
      if (x < 0) {
        advanceTo(src.length);
        if (pos > start) emit(T.Text);
        emit(T.EOF, '');
        return out;
      }
      let trimLen = 0;
      const trimmed = x + LEFT.length;
      if (src[trimmed] === '-' && trimmed + 1 < src.length && isSpace(src[trimmed + 1] as string)) trimLen = 2;
      let textEnd = x;
      advanceTo(x);
      if (trimLen) while (textEnd > start && isSpace(src[textEnd - 1] as string)) textEnd--;
      if (textEnd > start) {
        out.push({ typ: T.Text, pos: start, val: src.slice(start, textEnd), line: startLine });
      }
      start = pos;
      startLine = line;
      // lexLeftDelim
      pos += LEFT.length + trimLen;
      const afterMarker = pos;
      if (src.startsWith(LEFT_COMMENT, afterMarker)) {
        // lexComment: comments are dropped (Go emits them only with ParseComments).
        pos = afterMarker + LEFT_COMMENT.length;
        const end = src.indexOf(RIGHT_COMMENT, pos);
        if (end < 0) return fail('unclosed comment');
        advanceTo(end + RIGHT_COMMENT.length);
        const r = atRightDelim();
        if (!r.delim) return fail('comment ends before closing delimiter');
        pos += r.trim ? RIGHT.length + 2 : RIGHT.length;
        if (r.trim) {
          let p = pos;
          while (p < src.length && isSpace(src[p] as string)) p++;
          advanceTo(p);
        }
        ignore();
        continue;
      }
      emit(T.LeftDelim, src.slice(start, start + LEFT.length));
      ignore();
      insideAction = true;
      parenDepth = 0;
      continue;
    }
    // lexInsideAction
    const r = atRightDelim();
    if (r.delim && parenDepth === 0) {
      if (r.trim) {
        pos += 2; // " -"
        ignore();
      }
      pos += RIGHT.length;
      emit(T.RightDelim);
      if (r.trim) {
        let p = pos;
        while (p < src.length && isSpace(src[p] as string)) p++;
        advanceTo(p);
        ignore();
      }
      insideAction = false;
      continue;
    }
    if (r.delim) return fail('unclosed left paren');
    if (pos >= src.length) return fail('unclosed action');
    const c = nextChar();
    if (isSpace(c)) {
      // lexSpace: a run of spaces, stopping before a trim marker " -}}".
      let p = pos;
      let n = 0;
      while (p < src.length && isSpace(src[p] as string)) {
        p++;
        n++;
      }
      if (src.startsWith(`-${RIGHT}`, p)) {
        p--;
        n--;
      }
      advanceTo(p);
      if (n > 0) emit(T.Space);
      else {
        // a single space before "-}}": the right-delim branch consumes it
        continue;
      }
      continue;
    }
    if (c === '=') {
      pos++;
      emit(T.Assign);
      continue;
    }
    if (c === ':') {
      pos++;
      if (src[pos] !== '=') return fail('expected :=');
      pos++;
      emit(T.Declare);
      continue;
    }
    if (c === '|') {
      pos++;
      emit(T.Pipe);
      continue;
    }
    if (c === '"') {
      if (!scanQuoted('"')) return fail('unterminated quoted string');
      emit(T.String);
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', pos + 1);
      if (end < 0) return fail('unterminated raw quoted string');
      advanceTo(end + 1);
      emit(T.RawString);
      continue;
    }
    if (c === '$' || c === '.') {
      // lexVariable / lexField (a '.' followed by a digit is a number)
      if (c === '.' && /[0-9]/.test(src[pos + 1] ?? '')) {
        const bad = lexNumber();
        if (bad) return fail(bad);
        continue;
      }
      pos++;
      if (atTerminator()) {
        emit(c === '$' ? T.Variable : T.Dot);
        continue;
      }
      let ch = nextChar();
      while (ch !== '' && isAlphaNumeric(ch)) {
        pos += ch.length;
        ch = nextChar();
      }
      if (!atTerminator()) return fail(`bad character ${runeName(nextChar())}`);
      emit(c === '$' ? T.Variable : T.Field);
      continue;
    }
    if (c === "'") {
      if (!scanQuoted("'")) return fail('unterminated character constant');
      emit(T.CharConstant);
      continue;
    }
    if (c === '+' || c === '-' || /[0-9]/.test(c)) {
      const bad = lexNumber();
      if (bad) return fail(bad);
      continue;
    }
    if (isAlphaNumeric(c)) {
      let ch = c;
      while (ch !== '' && isAlphaNumeric(ch)) {
        pos += ch.length;
        ch = nextChar();
      }
      if (!atTerminator()) return fail(`bad character ${runeName(nextChar())}`);
      const word = src.slice(start, pos);
      const kw = KEYWORDS[word];
      if (kw !== undefined && kw > T.Variable) emit(kw);
      else if (word === 'true' || word === 'false') emit(T.Bool);
      else emit(T.Identifier);
      continue;
    }
    if (c === '(') {
      pos++;
      emit(T.LeftParen);
      parenDepth++;
      continue;
    }
    if (c === ')') {
      pos++;
      parenDepth--;
      if (parenDepth < 0) return fail('unexpected right paren');
      emit(T.RightParen);
      continue;
    }
    const cp = c.codePointAt(0) as number;
    if (cp <= 0x7f && cp >= 0x20 && cp !== 0x7f) {
      pos++;
      emit(T.Char);
      continue;
    }
    return fail(`unrecognized character in action: ${runeName(c)}`);
  }

  /** Scans a `"..."` or `'...'` literal from its opening quote (escapes skipped); false if unterminated on the line. */
  function scanQuoted(quote: string): boolean {
    pos++;
    for (;;) {
      const ch = src[pos];
      if (ch === '\\') {
        const nx = src[pos + 1];
        if (nx === undefined || nx === '\n') return false;
        pos += 2;
        continue;
      }
      if (ch === undefined || ch === '\n') return false;
      pos++;
      if (ch === quote) return true;
    }
  }

  /** lexNumber: scans a number (Go's scanNumber); returns an error message or ''. */
  function lexNumber(): string {
    const s0 = pos;
    if (src[pos] === '+' || src[pos] === '-') pos++;
    let digits = '0123456789_';
    if (src[pos] === '0' && /[xXoObB]/.test(src[pos + 1] ?? '')) {
      const b = (src[pos + 1] as string).toLowerCase();
      pos += 2;
      digits = b === 'x' ? '0123456789abcdefABCDEF_' : b === 'o' ? '01234567_' : '01_';
    }
    const run = (set: string): void => {
      while (pos < src.length && set.includes(src[pos] as string)) pos++;
    };
    run(digits);
    if (src[pos] === '.') {
      pos++;
      run(digits);
    }
    if (digits.length === 11 && /[eE]/.test(src[pos] ?? '')) {
      pos++;
      if (src[pos] === '+' || src[pos] === '-') pos++;
      run('0123456789_');
    }
    if (digits.length === 23 && /[pP]/.test(src[pos] ?? '')) {
      pos++;
      if (src[pos] === '+' || src[pos] === '-') pos++;
      run('0123456789_');
    }
    if (src[pos] === 'i') pos++;
    if (pos < src.length && isAlphaNumeric(nextChar())) {
      pos++;
      return `bad number syntax: ${goQuoteString(src.slice(s0, pos))}`;
    }
    const text = src.slice(s0, pos);
    if (text === '+' || text === '-') {
      return `bad number syntax: ${goQuoteString(text)}`;
    }
    emit(text.endsWith('i') ? T.Complex : T.Number);
    return '';
  }
}
