/**
 * Parse tree of Go `text/template` (the node types of Go's text/template/parse/node.go), with each
 * node's `String()` as Go prints it in execution errors (`executing "t" at <.Foo.Bar>`).
 */

/** Position of a node: UTF-16 offset into the source of the tree that holds it. */
interface Base {
  pos: number;
}

export interface TextNode extends Base {
  type: 'text';
  text: string;
}
export interface ActionNode extends Base {
  type: 'action';
  line: number;
  pipe: PipeNode;
}
export interface PipeNode extends Base {
  type: 'pipe';
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface CommandNode extends Base {
  type: 'command';
  args: ArgNode[];
}
export interface FieldNode extends Base {
  type: 'field';
  ident: string[];
}
export interface VariableNode extends Base {
  type: 'variable';
  ident: string[];
}
export interface IdentifierNode extends Base {
  type: 'identifier';
  ident: string;
}
export interface ChainNode extends Base {
  type: 'chain';
  node: ArgNode;
  field: string[];
}
export interface DotNode extends Base {
  type: 'dot';
}
export interface NilNode extends Base {
  type: 'nil';
}
export interface BoolNode extends Base {
  type: 'bool';
  value: boolean;
}
export interface StringNode extends Base {
  type: 'string';
  quoted: string;
  text: string;
}
/** A numeric constant with every interpretation that fits, as Go's NumberNode. */
export interface NumberNode extends Base {
  type: 'number';
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int: number;
  float: number;
}
export interface ListNode extends Base {
  type: 'list';
  nodes: Node[];
}
export interface BranchNode extends Base {
  type: 'if' | 'range' | 'with';
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | undefined;
}
export interface TemplateNode extends Base {
  type: 'template';
  line: number;
  name: string;
  pipe: PipeNode | undefined;
}
export interface BreakNode extends Base {
  type: 'break';
  line: number;
}
export interface ContinueNode extends Base {
  type: 'continue';
  line: number;
}
export interface CommentNode extends Base {
  type: 'comment';
  text: string;
}
/** Internal markers the parser returns for `{{end}}` and `{{else}}`. */
export interface EndNode extends Base {
  type: 'end';
}
export interface ElseNode extends Base {
  type: 'else';
  line: number;
}

export type ArgNode =
  | FieldNode
  | VariableNode
  | IdentifierNode
  | ChainNode
  | DotNode
  | NilNode
  | BoolNode
  | StringNode
  | NumberNode
  | PipeNode;
export type Node =
  | TextNode
  | ActionNode
  | ListNode
  | BranchNode
  | TemplateNode
  | BreakNode
  | ContinueNode
  | CommentNode
  | EndNode
  | ElseNode
  | ArgNode
  | CommandNode;

/** A parsed template: its name, the source it came from (for error positions) and its body. */
export interface Tree {
  name: string;
  /** Name of the top-level template whose text held this definition (Go `ParseName`). */
  parseName: string;
  text: string;
  root: ListNode;
}

/** Go `IsEmptyTree`: only whitespace text, comments and empty lists. */
export function isEmptyTree(n: Node): boolean {
  switch (n.type) {
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return n.text.trim() === '';
    case 'comment':
      return true;
    default:
      return false;
  }
}

/** Go's `Node.String()` for the nodes that appear in errors. */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'text':
      return JSON.stringify(n.text);
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) s = `${n.decl.map(nodeString).join(', ')} ${n.isAssign ? '=' : ':='} `;
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'field':
      return n.ident.map((i) => `.${i}`).join('');
    case 'variable':
      return n.ident.join('.');
    case 'identifier':
      return n.ident;
    case 'chain': {
      const head = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return head + n.field.map((f) => `.${f}`).join('');
    }
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'string':
      return n.quoted;
    case 'number':
      return n.text;
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'if':
    case 'range':
    case 'with': {
      const els = n.elseList ? `{{else}}${nodeString(n.elseList)}` : '';
      return `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}${els}{{end}}`;
    }
    case 'template':
      return n.pipe
        ? `{{template ${JSON.stringify(n.name)} ${nodeString(n.pipe)}}}`
        : `{{template ${JSON.stringify(n.name)}}}`;
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
    case 'comment':
      return `{{${n.text}}}`;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
  }
}
