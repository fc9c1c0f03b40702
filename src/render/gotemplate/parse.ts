/**
 * Parser for Go `text/template` source: the grammar and error messages of Go's text/template/parse
 * (parse.go). `parseTemplates` returns every tree the source defines (`{{define}}`, `{{block}}` and the
 * top-level body); errors read as Go's, e.g. `template: inject:3: unexpected "}" in operand` or
 * `template: inject:7: function "foo" not defined`.
 */
import {
  type ArgNode,
  type BranchNode,
  type CommandNode,
  type ElseNode,
  type EndNode,
  type ListNode,
  type Node,
  type PipeNode,
  type TemplateNode,
  type Tree,
  type VariableNode,
  isEmptyTree,
  nodeString,
} from './ast.ts';
import { goUnquote, newNumber } from './literals.ts';
import { T, type Token, goQuoteString, lex, tokenString } from './lex.ts';

/** A parse failure; `message` is Go's full text (`template: NAME:LINE: ...`). */
export class TemplateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateParseError';
  }
}

/** Parser state for one body (a top-level text or one `{{define}}`/`{{block}}`). */
class TreeParser {
  tree: Tree;
  vars: string[] = ['$'];
  rangeDepth = 0;
  actionLine = 0;

  constructor(
    name: string,
    private readonly p: SourceParser,
  ) {
    this.tree = { name, parseName: p.parseName, text: p.text, root: { type: 'list', pos: 0, nodes: [] } };
  }

  errorf(msg: string): never {
    throw new TemplateParseError(`template: ${this.p.parseName}:${this.p.lastLine}: ${msg}`);
  }

  unexpected(token: Token, context: string): never {
    if (token.typ === T.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.p.parseName}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${token.val}${extra}`);
    }
    this.errorf(`unexpected ${tokenString(token)} in ${context}`);
  }

  next(): Token {
    return this.p.next();
  }

  nextNonSpace(): Token {
    let t = this.next();
    while (t.typ === T.Space) t = this.next();
    return t;
  }

  peek(): Token {
    return this.p.peek();
  }

  peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.p.backup();
    return t;
  }

  expect(typ: T, context: string): Token {
    const t = this.nextNonSpace();
    if (t.typ !== typ) this.unexpected(t, context);
    return t;
  }

  /** Body of a define/block: items up to `{{end}}`. */
  parseDefinitionBody(context: string): void {
    const [list, end] = this.itemList();
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.tree.root = list;
    this.p.add(this.tree, this);
  }

  /** Top level: text and actions to EOF, with `{{define}}` spun off into its own tree. */
  parseTop(): void {
    const root: ListNode = { type: 'list', pos: 0, nodes: [] };
    this.tree.root = root;
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === T.Define) {
          const sub = new TreeParser('definition', this.p);
          const nameTok = sub.nextNonSpace();
          if (nameTok.typ !== T.String && nameTok.typ !== T.RawString) sub.unexpected(nameTok, 'define clause');
          sub.tree.name = sub.unquote(nameTok.val);
          sub.expect(T.RightDelim, 'define clause');
          sub.parseDefinitionBody('define clause');
          continue;
        }
        this.p.backupTo(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      if (n.type !== 'comment') root.nodes.push(n);
    }
  }

  unquote(s: string): string {
    try {
      return goUnquote(s);
    } catch (e) {
      this.errorf((e as Error).message);
    }
  }

  itemList(): [ListNode, EndNode | ElseNode] {
    const list: ListNode = { type: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      if (n.type !== 'comment') list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Text:
        return { type: 'text', pos: token.pos, text: token.val };
      case T.LeftDelim: {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      case T.Comment:
        return { type: 'comment', pos: token.pos, text: token.val };
      default:
        this.unexpected(token, 'input');
    }
  }

  action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Block:
        return this.blockControl();
      case T.Break:
      case T.Continue: {
        const word = token.typ === T.Break ? 'break' : 'continue';
        if (this.rangeDepth === 0) this.errorf(`{{${word}}} outside {{range}}`);
        const t = this.nextNonSpace();
        if (t.typ !== T.RightDelim) this.unexpected(t, `{{${word}}}`);
        return { type: word, pos: token.pos, line: token.line };
      }
      case T.Else:
        return this.elseControl(token);
      case T.End:
        this.expect(T.RightDelim, 'end');
        return { type: 'end', pos: token.pos };
      case T.If:
        return this.branch('if', token);
      case T.Range:
        return this.branch('range', token);
      case T.Template:
        return this.templateControl(token);
      case T.With:
        return this.branch('with', token);
      default:
        break;
    }
    this.p.backup();
    const t = this.peek();
    return { type: 'action', pos: t.pos, line: t.line, pipe: this.pipeline('command', T.RightDelim) };
  }

  elseControl(token: Token): ElseNode {
    const peek = this.peekNonSpace();
    // "else if" / "else with": leave the keyword pending for branch().
    if (peek.typ === T.If || peek.typ === T.With) return { type: 'else', pos: peek.pos, line: peek.line };
    this.expect(T.RightDelim, 'else');
    return { type: 'else', pos: token.pos, line: token.line };
  }

  branch(context: 'if' | 'range' | 'with', token: Token): BranchNode {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(context, T.RightDelim);
      if (context === 'range') this.rangeDepth++;
      const [list, next] = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | undefined;
      if (next.type === 'else') {
        if (context === 'if' && this.peek().typ === T.If) {
          const tok = this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.branch('if', tok)] };
        } else if (context === 'with' && this.peek().typ === T.With) {
          const tok = this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.branch('with', tok)] };
        } else {
          const [els, end] = this.itemList();
          if (end.type !== 'end') this.errorf(`expected end; found ${nodeString(end)}`);
          elseList = els;
        }
      }
      return { type: context, pos: pipe.pos, line: token.line, pipe, list, elseList };
    } finally {
      this.vars.length = mark;
    }
  }

  templateName(token: Token, context: string): string {
    if (token.typ === T.String || token.typ === T.RawString) return this.unquote(token.val);
    this.unexpected(token, context);
  }

  templateControl(token: Token): TemplateNode {
    const name = this.templateName(this.nextNonSpace(), 'template clause');
    let pipe: PipeNode | undefined;
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.p.backup();
      pipe = this.pipeline('template clause', T.RightDelim);
    }
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  blockControl(): TemplateNode {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.templateName(token, context);
    const pipe = this.pipeline(context, T.RightDelim);
    const sub = new TreeParser(name, this.p);
    sub.parseDefinitionBody(context);
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  pipeline(context: string, end: T): PipeNode {
    const first = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: first.pos, line: first.line, isAssign: false, decl: [], cmds: [] };
    // Variable declarations: $x := / $x = / $i, $e :=
    for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== T.Variable) break;
      this.nextNonSpace();
      const afterVar = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === T.Assign || next.typ === T.Declare) {
        pipe.isAssign = next.typ === T.Assign;
        this.nextNonSpace();
        pipe.decl.push(this.variable(v));
        this.vars.push(v.val);
        break;
      }
      if (next.typ === T.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(this.variable(v));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === T.Variable || p === T.RightDelim || p === T.RightParen) continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      }
      // Not a declaration: put the variable (and any space after it) back.
      this.p.backupTo(v);
      void afterVar;
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.typ === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (token.typ) {
        case T.Bool:
        case T.CharConstant:
        case T.Complex:
        case T.Dot:
        case T.Field:
        case T.Identifier:
        case T.Number:
        case T.Nil:
        case T.RawString:
        case T.String:
        case T.Variable:
        case T.LeftParen:
          this.p.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = (c.args[0] as ArgNode).type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === T.Space) continue;
      if (token.typ === T.RightDelim || token.typ === T.RightParen) this.p.backup();
      else if (token.typ !== T.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  operand(): ArgNode | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().typ !== T.Field) return node;
    const fields: string[] = [];
    const pos = this.peek().pos;
    while (this.peek().typ === T.Field) fields.push(this.next().val.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', pos: node.pos, ident: [...node.ident, ...fields] };
      case 'variable':
        return { type: 'variable', pos: node.pos, ident: [...node.ident, ...fields] };
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        return this.errorf(`unexpected . after term ${goQuoteString(nodeString(node))}`);
      default:
        return { type: 'chain', pos, node, field: fields };
    }
  }

  term(): ArgNode | undefined {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Identifier:
        if (!this.p.hasFunction(token.val)) this.errorf(`function ${goQuoteString(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, ident: token.val };
      case T.Dot:
        return { type: 'dot', pos: token.pos };
      case T.Nil:
        return { type: 'nil', pos: token.pos };
      case T.Variable: {
        const v = this.variable(token);
        if (!this.vars.includes(v.ident[0] as string))
          this.errorf(`undefined variable ${goQuoteString(v.ident[0] as string)}`);
        return v;
      }
      case T.Field:
        return { type: 'field', pos: token.pos, ident: token.val.slice(1).split('.') };
      case T.Bool:
        return { type: 'bool', pos: token.pos, value: token.val === 'true' };
      case T.CharConstant:
      case T.Complex:
      case T.Number:
        try {
          return newNumber(token.pos, token.val, token.typ);
        } catch (e) {
          return this.errorf((e as Error).message);
        }
      case T.LeftParen:
        return this.pipeline('parenthesized pipeline', T.RightParen);
      case T.String:
      case T.RawString:
        return { type: 'string', pos: token.pos, quoted: token.val, text: this.unquote(token.val) };
      default:
        this.p.backup();
        return undefined;
    }
  }

  variable(t: Token): VariableNode {
    return { type: 'variable', pos: t.pos, ident: t.val.split('.') };
  }
}

/** Shared state for one source text: the token stream and the set of trees it defines. */
class SourceParser {
  readonly tokens: Token[];
  idx = 0;
  lastLine = 1;
  readonly trees = new Map<string, Tree>();

  constructor(
    readonly parseName: string,
    readonly text: string,
    private readonly funcs: (name: string) => boolean,
  ) {
    this.tokens = lex(text);
  }

  hasFunction(name: string): boolean {
    return this.funcs(name);
  }

  next(): Token {
    const t = this.tokens[Math.min(this.idx, this.tokens.length - 1)] as Token;
    this.idx++;
    this.lastLine = t.line;
    return t;
  }

  peek(): Token {
    return this.tokens[Math.min(this.idx, this.tokens.length - 1)] as Token;
  }

  backup(): void {
    this.idx--;
  }

  /** Rewinds so that `t` is the next token. */
  backupTo(t: Token): void {
    let i = Math.min(this.idx, this.tokens.length - 1);
    while (i > 0 && this.tokens[i] !== t) i--;
    this.idx = i;
  }

  add(tree: Tree, parser: TreeParser): void {
    const old = this.trees.get(tree.name);
    if (!old || isEmptyTree(old.root)) {
      this.trees.set(tree.name, tree);
      return;
    }
    if (!isEmptyTree(tree.root)) parser.errorf(`template: multiple definition of template ${goQuoteString(tree.name)}`);
  }
}

/**
 * Parses `text` as the template `name` (Go `template.New(name).Funcs(...).Parse(text)`), returning
 * every tree it defines by name: the top-level body under `name`, plus each `{{define}}` and `{{block}}`.
 * `hasFunction` says whether an identifier is a defined function (builtins included).
 * @throws TemplateParseError with Go's message.
 */
export function parseTemplates(name: string, text: string, hasFunction: (name: string) => boolean): Map<string, Tree> {
  const sp = new SourceParser(name, text, hasFunction);
  const top = new TreeParser(name, sp);
  top.parseTop();
  sp.add(top.tree, top);
  return sp.trees;
}
