/**
 * Recursive-descent parser of Rego v1: `parseModule` (package, imports, rules), `parseQuery` (a query
 * body) and `parseTerm` build the tree of ast.ts, with operators already turned into builtin calls
 * (`a + b` is `plus`, `x in c` is `internal.member_2`). Rego v0 syntax is refused (a rule body needs
 * `if`). Newlines separate body literals except inside brackets. Term nesting and operator chains are
 * capped (`MAX_TERM_NESTING`, `MAX_OPERATOR_CHAIN`) so a hostile policy cannot exhaust the stack.
 * The first syntax error throws a `RegoError` `rego_parse_error` with its location.
 */
import type { Expr, ImportAST, Loc, ModuleAST, RuleAST, Term, With } from './ast.js';
import { RegoError } from './errors.js';
import { lex, type Token } from './lexer.js';

const KEYWORDS = new Set(['as', 'contains', 'default', 'else', 'every', 'false', 'if', 'import', 'in', 'not', 'null', 'package', 'some', 'true', 'with']);

const BINOPS: Record<string, string> = {
  '==': 'equal', '!=': 'neq', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte',
  '|': 'or', '&': 'and', '+': 'plus', '-': 'minus', '*': 'mul', '/': 'div', '%': 'rem',
};

/**
 * How deep terms may nest (brackets, parentheses, unary minus) and how many binary operators one
 * expression may chain. Far beyond any real policy; without them a hostile policy of a few KB (thousands
 * of `[` or `+ 1`) exhausts the stack of this recursive-descent parser or of the compiler after it.
 */
export const MAX_TERM_NESTING = 256;
export const MAX_OPERATOR_CHAIN = 256;

export class Parser {
  private toks: Token[];
  private p = 0;
  private nesting = 0;
  private nlStack: boolean[] = [false];
  constructor(private src: string, private file: string, row0 = 1, col0 = 1) {
    this.toks = lex(src, file, row0, col0);
  }

  private get tok(): Token { return this.toks[this.p]; }
  private peek(n = 1): Token { return this.toks[Math.min(this.p + n, this.toks.length - 1)]; }
  private loc(t: Token = this.tok): Loc { return { file: this.file, row: t.row, col: t.col }; }
  private err(msg: string, t: Token = this.tok): never { throw new RegoError('rego_parse_error', msg, this.loc(t)); }
  private isP(text: string, t: Token = this.tok): boolean { return t.type === 'punct' && t.text === text; }
  private isKw(text: string, t: Token = this.tok): boolean { return t.type === 'ident' && t.text === text && !t.dotAfter; }
  private expectP(text: string): Token {
    if (!this.isP(text)) this.err(`unexpected ${this.describe()} token: expected ${text}`);
    return this.toks[this.p++];
  }
  private describe(t: Token = this.tok): string {
    if (t.type === 'eof') return 'eof';
    if (t.type === 'ident') return KEYWORDS.has(t.text) && !t.dotAfter ? `${t.text} keyword` : 'ident';
    if (t.type === 'string') return 'string';
    if (t.type === 'number') return 'number';
    return t.text === '{' ? 'lbrace' : t.text === '}' ? 'rbrace' : t.text === '[' ? 'lbrack' : t.text === ']' ? 'rbrack' : t.text === '(' ? 'lparen' : t.text === ')' ? 'rparen' : t.text;
  }
  private get nlSig(): boolean { return this.nlStack[this.nlStack.length - 1]; }
  /** token begins on a new line while newlines are significant */
  private atLineBreak(): boolean { return this.nlSig && this.tok.nl; }

  parseModule(): ModuleAST {
    if (!this.isKw('package')) this.err('package expected');
    const pkgTok = this.tok; this.p++;
    const pkgRef = this.parseRefTerm();
    const pkg = this.refToPath(pkgRef, 'package');
    const imports: ImportAST[] = [];
    const rules: RuleAST[] = [];
    while (this.isKw('import')) {
      const it = this.tok; this.p++;
      const path = this.parseRefTerm();
      let alias: string | undefined;
      if (this.isKw('as') && !this.tok.nl) { this.p++; if (this.tok.type !== 'ident') this.err('expected alias'); alias = this.tok.text; this.p++; }
      imports.push({ path, alias, loc: this.loc(it) });
    }
    while (this.tok.type !== 'eof') {
      if (this.isKw('import')) this.err('unexpected import keyword');
      if (this.isKw('package')) this.err('unexpected package keyword');
      rules.push(this.parseRule());
    }
    return { file: this.file, pkg, pkgLoc: this.loc(pkgTok), imports, rules };
  }

  private refToPath(t: Term, what: string): string[] {
    const out: string[] = [];
    if (t.t === 'var') return [t.name];
    if (t.t !== 'ref' || t.head.t !== 'var') this.err(`invalid ${what}`);
    const r = t as Extract<Term, { t: 'ref' }>;
    out.push((r.head as { name: string }).name);
    for (const p of r.path) { if (p.t !== 'scalar' || typeof p.v !== 'string') this.err(`invalid ${what} path`); out.push(p.v as string); }
    return out;
  }

  /** ident(.ident | [term])* ; keywords allowed */
  private parseRefTerm(): Term {
    const t = this.tok;
    if (t.type !== 'ident') this.err(`unexpected ${this.describe()} token: expected ident`);
    this.p++;
    const head: Term = { t: 'var', name: t.text, loc: this.loc(t) };
    const path: Term[] = [];
    for (;;) {
      if (this.isP('.') && !this.tok.ws) {
        this.p++; const n = this.tok; if (n.type !== 'ident' || n.ws) this.err('expected ident after .'); this.p++;
        path.push({ t: 'scalar', v: n.text, loc: this.loc(n) });
      } else if (this.isP('[') && !this.tok.ws) {
        this.p++; this.nlStack.push(false); const e = this.parseTermIn(); this.nlStack.pop(); this.expectP(']'); path.push(e);
      } else break;
    }
    return path.length ? { t: 'ref', head, path, loc: head.loc } : head;
  }

  private parseRule(): RuleAST {
    const start = this.tok;
    let isDefault = false;
    if (this.isKw('default')) { isDefault = true; this.p++; }
    if (this.tok.type !== 'ident' || (KEYWORDS.has(this.tok.text) && !this.tok.dotAfter && !['true', 'false', 'null'].includes(this.tok.text))) this.err(`unexpected ${this.describe()} token`);
    const refT = this.parseRefTerm();
    const head: Term[] = refT.t === 'ref' ? [refT.head, ...refT.path] : [refT];
    const rule: RuleAST = { isDefault, head, kind: 'single', assign: false, body: [], loc: this.loc(start) };
    if (this.isP('(') && !this.tok.ws) {
      this.p++; this.nlStack.push(false);
      const args: Term[] = [];
      if (!this.isP(')')) { for (;;) { args.push(this.parseTermIn()); if (this.isP(',')) { this.p++; continue; } break; } }
      this.nlStack.pop(); this.expectP(')');
      rule.kind = 'func'; rule.args = args;
    }
    if (isDefault) {
      if (this.isP(':=') || this.isP('=')) { rule.assign = this.tok.text === ':='; this.p++; rule.value = this.parseTermIn(); }
      else this.err('default rules must have a value');
      return rule;
    }
    if (this.isKw('contains') && rule.kind !== 'func') {
      this.p++; rule.kind = 'multi'; rule.key = this.parseTermIn();
    } else if (this.isP(':=') || this.isP('=')) {
      rule.assign = this.tok.text === ':='; this.p++;
      this.nlStack.push(true);
      rule.value = this.parseTermIn();
      this.nlStack.pop();
    }
    this.parseRuleBody(rule, true);
    // else chain
    let cur = rule;
    while (this.isKw('else')) {
      const et = this.tok; this.p++;
      const er: RuleAST = { isDefault: false, head, kind: rule.kind, args: rule.args, assign: false, body: [], loc: this.loc(et) };
      if (this.isP(':=') || this.isP('=')) { er.assign = this.tok.text === ':='; this.p++; this.nlStack.push(true); er.value = this.parseTermIn(); this.nlStack.pop(); }
      this.parseRuleBody(er, false);
      cur.elseRule = er; cur = er;
    }
    return rule;
  }

  private parseRuleBody(rule: RuleAST, first: boolean): void {
    if (this.isKw('if')) {
      this.p++;
      let done = false;
      if (this.isP('{')) {
        const save = this.p; const depth = this.nlStack.length;
        try { rule.body = this.parseBraceBody(); done = true; } catch (e1) {
          this.p = save; this.nlStack.length = depth;
          try { this.nlStack.push(true); rule.body = [this.parseLiteral()]; this.nlStack.pop(); done = true; } catch { throw e1; }
        }
      }
      if (!done) { this.nlStack.push(true); rule.body = [this.parseLiteral()]; this.nlStack.pop(); }
    } else if (this.isP('{') && first && !this.tok.nl) {
      this.err('`if` keyword is required before rule body');
    } else if (this.isP('{') && !first) {
      rule.body = this.parseBraceBody();
    } else {
      rule.bodyLess = true;
      rule.body = [{ k: 'term', term: { t: 'scalar', v: true, loc: rule.loc }, loc: rule.loc }];
    }
  }

  parseBraceBody(): Expr[] {
    const open = this.expectP('{');
    this.nlStack.push(true);
    const body: Expr[] = [];
    while (!this.isP('}')) {
      if (this.tok.type === 'eof') this.err('unexpected eof token: expected }', open);
      body.push(this.parseLiteral());
      if (this.isP(';')) { this.p++; continue; }
      if (this.isP('}')) break;
      if (!this.tok.nl) this.err(`unexpected ${this.describe()} token`);
    }
    this.nlStack.pop();
    this.p++;
    if (body.length === 0) this.err('found empty body', open);
    return body;
  }

  /** body for query strings: literals separated by ; or newlines */
  parseQuery(): Expr[] {
    this.nlStack.push(true);
    const body: Expr[] = [];
    while (this.tok.type !== 'eof') {
      body.push(this.parseLiteral());
      if (this.isP(';')) { this.p++; continue; }
      if ((this.tok.type as string) === 'eof') break;
      if (!this.tok.nl) this.err(`unexpected ${this.describe()} token`);
    }
    if (body.length === 0) this.err('empty query');
    return body;
  }

  /** expression inside a string template: a term, optionally followed by `with` modifiers */
  parseTemplateExpr(): Term {
    const t = this.parseTermIn();
    if (this.isKw('with')) {
      const e = this.parseWiths({ k: 'term', term: t, loc: t.loc });
      if (this.tok.type !== 'eof') this.err(`unexpected ${this.describe()} token`);
      return { t: 'withterm', term: t, withs: e.withs!, loc: t.loc };
    }
    if (this.tok.type !== 'eof') this.err(`unexpected ${this.describe()} token`);
    return t;
  }

  parseTermOnly(): Term {
    const t = this.parseTermIn();
    if (this.tok.type !== 'eof') this.err(`unexpected ${this.describe()} token`);
    return t;
  }

  parseLiteral(): Expr {
    const st = this.tok; const loc = this.loc(st);
    let e: Expr;
    if (this.isKw('some')) {
      this.p++;
      const terms: Term[] = [];
      this.nlStack.push(false);
      for (;;) { terms.push(this.parseTermRel()); if (this.isP(',')) { this.p++; continue; } break; }
      this.nlStack.pop();
      if (this.isKw('in')) {
        this.p++;
        const coll = this.parseTermRel();
        if (terms.length > 2) this.err('unexpected , token');
        e = terms.length === 2 ? { k: 'somein', key: terms[0], val: terms[1], coll, loc } : { k: 'somein', val: terms[0], coll, loc };
      } else {
        for (const t of terms) if (t.t !== 'var') this.err('expected var in some declaration');
        e = { k: 'some', vars: terms, loc };
      }
    } else if (this.isKw('every')) {
      this.p++;
      let key: Term | undefined; let val = this.parseTermRel();
      if (this.isP(',')) { this.p++; key = val; val = this.parseTermRel(); }
      if (!this.isKw('in')) this.err('expected in');
      this.p++;
      const coll = this.parseTermRel();
      const body = this.parseBraceBody();
      e = { k: 'every', key, val, coll, body, loc };
    } else if (this.isKw('not')) {
      this.p++;
      if (this.isP('{')) {
        const save = this.p;
        try { const body = this.parseBraceBody(); e = { k: 'block', body, loc, negated: true }; return this.parseWiths(e); } catch { this.p = save; }
      }
      const inner = this.parseLiteralExpr(loc);
      inner.negated = true;
      e = inner;
    } else {
      e = this.parseLiteralExpr(loc);
    }
    return this.parseWiths(e);
  }

  private parseWiths(e: Expr): Expr {
    while (this.isKw('with')) {
      const wt = this.tok; this.p++;
      const target = this.parseRefTerm();
      if (!this.isKw('as')) this.err('expected as');
      this.p++;
      const value = this.parseTermIn();
      (e.withs ??= []).push({ target, value, loc: this.loc(wt) } as With);
    }
    return e;
  }

  private parseLiteralExpr(loc: Loc): Expr {
    let a = this.parseTermIn();
    if (this.isP(',') && this.nlSig) {
      // k, v in coll
      this.p++;
      const v = this.parseTermRel();
      if (!this.isKw('in')) this.err('unexpected , token');
      this.p++;
      const coll = this.parseTermRel();
      a = { t: 'call', fn: { t: 'var', name: 'internal.member_3', loc }, args: [a, v, coll], loc: a.loc, op: 'in' };
    }
    if ((this.isP(':=') || this.isP('=')) && !this.atLineBreak()) {
      const op = this.tok.text; this.p++;
      const b = this.parseTermIn();
      return { k: op === ':=' ? 'assign' : 'unify', a, b, loc };
    }
    return { k: 'term', term: a, loc };
  }

  parseTermIn(noOr = false): Term {
    let lhs = this.parseTermRel(noOr);
    while (this.isKw('in') && !this.atLineBreak()) {
      this.p++;
      const rhs = this.parseTermRel(noOr);
      lhs = { t: 'call', fn: { t: 'var', name: 'internal.member_2', loc: lhs.loc }, args: [lhs, rhs], loc: lhs.loc, op: 'in' };
    }
    return lhs;
  }

  private parseBin(level: number, noOr: boolean): Term {
    const LEVELS = [['==', '!=', '<', '<=', '>', '>='], ['|'], ['&'], ['+', '-'], ['*', '/', '%']];
    if (level >= LEVELS.length) return this.parseUnary();
    let lhs = this.parseBin(level + 1, noOr);
    for (let chained = 0; ; chained++) {
      const t = this.tok;
      if (t.type !== 'punct' || !LEVELS[level].includes(t.text) || this.atLineBreak()) break;
      if (noOr && t.text === '|') break;
      if (chained >= MAX_OPERATOR_CHAIN) this.err(`expression too long: more than ${MAX_OPERATOR_CHAIN} chained operators`);
      this.p++;
      const rhs = this.parseBin(level + 1, noOr);
      lhs = { t: 'call', fn: { t: 'var', name: BINOPS[t.text], loc: this.loc(t) }, args: [lhs, rhs], loc: lhs.loc, op: t.text };
      if (level === 0) {
        // relational operators are not associative in OPA, but chaining parses left to right
      }
    }
    return lhs;
  }
  private parseTermRel(noOr = false): Term { return this.parseBin(0, noOr); }

  private parseUnary(): Term {
    if (this.nesting >= MAX_TERM_NESTING) this.err(`terms nested deeper than ${MAX_TERM_NESTING} levels`);
    this.nesting++;
    try {
      return this.parseUnaryTerm();
    } finally {
      this.nesting--;
    }
  }

  private parseUnaryTerm(): Term {
    if (this.isP('-')) {
      const mt = this.tok; this.p++;
      const nt = this.tok;
      if (nt.type === 'number' && !nt.ws) {
        this.p++;
        const v = nt.value as number | bigint;
        const neg: Term = { t: 'scalar', v: typeof v === 'bigint' ? -v : v === 0 ? 0 : -v, loc: this.loc(mt) };
        return this.parsePostfix(neg);
      }
      const operand = this.parseUnary();
      return { t: 'call', fn: { t: 'var', name: 'minus', loc: this.loc(mt) }, args: [{ t: 'scalar', v: 0, loc: this.loc(mt) }, operand], loc: this.loc(mt), op: 'neg' };
    }
    return this.parsePostfix(this.parsePrimary());
  }

  private parsePostfix(base: Term): Term {
    let cur = base;
    for (;;) {
      if (this.isP('.') && !this.tok.ws) {
        this.p++; const n = this.tok; if (n.type !== 'ident' || n.ws) this.err(`unexpected ${this.describe()} token: expected ident`); this.p++;
        cur = this.appendRef(cur, { t: 'scalar', v: n.text, loc: this.loc(n) });
      } else if (this.isP('[') && !this.tok.ws) {
        this.p++; this.nlStack.push(false); const e = this.parseTermIn(); this.nlStack.pop(); this.expectP(']');
        cur = this.appendRef(cur, e);
      } else if (this.isP('(') && !this.tok.ws && (cur.t === 'var' || cur.t === 'ref')) {
        const ct = this.tok; this.p++; this.nlStack.push(false);
        const args: Term[] = [];
        if (!this.isP(')')) { for (;;) { args.push(this.parseTermIn()); if (this.isP(',')) { this.p++; continue; } break; } }
        this.nlStack.pop(); this.expectP(')');
        cur = { t: 'call', fn: cur, args, loc: cur.loc };
        void ct;
      } else break;
    }
    return cur;
  }

  private appendRef(cur: Term, p: Term): Term {
    if (cur.t === 'ref') return { t: 'ref', head: cur.head, path: [...cur.path, p], loc: cur.loc };
    return { t: 'ref', head: cur, path: [p], loc: cur.loc };
  }

  private parsePrimary(): Term {
    const t = this.tok; const loc = this.loc(t);
    switch (t.type) {
      case 'number': this.p++; return { t: 'scalar', v: t.value as number, loc };
      case 'string': this.p++; return { t: 'scalar', v: t.value as string, loc };
      case 'template': {
        this.p++;
        const parts: (string | Term)[] = [];
        for (const part of t.parts!) {
          if (part.lit) parts.push(part.text);
          else {
            const sub = new Parser(part.text, this.file, part.row, part.col);
            parts.push(sub.parseTemplateExpr());
          }
        }
        return { t: 'template', parts, loc };
      }
      case 'ident': {
        if (!t.dotAfter) {
          if (t.text === 'true' || t.text === 'false') { this.p++; return { t: 'scalar', v: t.text === 'true', loc }; }
          if (t.text === 'null') { this.p++; return { t: 'scalar', v: null, loc }; }
          if (KEYWORDS.has(t.text) && !(t.text === 'contains' && this.isP('(', this.peek()) && !this.peek().ws)) this.err(`unexpected ${t.text} keyword`);
        }
        this.p++;
        if (t.text === 'set' && this.isP('(') && !this.tok.ws && this.peek().type === 'punct' && this.peek().text === ')') { this.p += 2; return { t: 'set', items: [], loc }; }
        return { t: 'var', name: t.text, loc, wildcard: t.text === '_' };
      }
      case 'punct': {
        if (t.text === '(') {
          this.p++; this.nlStack.push(false); let e = this.parseTermIn();
          if (this.isP(',')) {
            this.p++; const v = this.parseTermRel();
            if (!this.isKw('in')) this.err(`unexpected ${this.describe()} token: expected in`);
            this.p++; const coll = this.parseTermRel();
            e = { t: 'call', fn: { t: 'var', name: 'internal.member_3', loc }, args: [e, v, coll], loc, op: 'in' };
          }
          this.nlStack.pop(); this.expectP(')'); return e;
        }
        if (t.text === '[') return this.parseArray();
        if (t.text === '{') return this.parseBrace();
        break;
      }
    }
    return this.err(`unexpected ${this.describe()} token`);
  }

  private parseCompBody(): Expr[] {
    // after '|'
    this.nlStack.push(true);
    const body: Expr[] = [];
    for (;;) {
      body.push(this.parseLiteral());
      if (this.isP(';')) { this.p++; continue; }
      if (this.isP(']') || this.isP('}')) break;
      if (!this.tok.nl) this.err(`unexpected ${this.describe()} token`);
    }
    this.nlStack.pop();
    return body;
  }

  private parseArray(): Term {
    const st = this.tok; const loc = this.loc(st); this.p++;
    this.nlStack.push(false);
    const items: Term[] = [];
    if (this.isP(']')) { this.p++; this.nlStack.pop(); return { t: 'array', items, loc }; }
    const first = this.parseTermIn(true);
    if (this.isP('|')) {
      this.p++;
      const body = this.parseCompBody();
      this.nlStack.pop(); this.expectP(']');
      return { t: 'arraycomp', head: first, body, loc };
    }
    items.push(first);
    while (this.isP(',')) { this.p++; if (this.isP(']')) break; items.push(this.parseTermIn()); }
    this.nlStack.pop(); this.expectP(']');
    return { t: 'array', items, loc };
  }


  private parseBrace(): Term {
    const st = this.tok; const loc = this.loc(st); this.p++;
    this.nlStack.push(false);
    if (this.isP('}')) { this.p++; this.nlStack.pop(); return { t: 'object', entries: [], loc }; }
    const first = this.parseTermIn(true);
    if (this.isP(':')) {
      this.p++;
      const v = this.parseTermIn(true);
      if (this.isP('|')) {
        this.p++;
        const body = this.parseCompBody();
        this.nlStack.pop(); this.expectP('}');
        return { t: 'objcomp', key: first, value: v, body, loc };
      }
      const entries: [Term, Term][] = [[first, v]];
      while (this.isP(',')) {
        this.p++; if (this.isP('}')) break;
        const k = this.parseTermIn(); this.expectP(':'); const vv = this.parseTermIn(); entries.push([k, vv]);
      }
      this.nlStack.pop(); this.expectP('}');
      return { t: 'object', entries, loc };
    }
    if (this.isP('|')) {
      this.p++;
      const body = this.parseCompBody();
      this.nlStack.pop(); this.expectP('}');
      return { t: 'setcomp', head: first, body, loc };
    }
    const items: Term[] = [first];
    while (this.isP(',')) { this.p++; if (this.isP('}')) break; items.push(this.parseTermIn()); }
    this.nlStack.pop(); this.expectP('}');
    return { t: 'set', items, loc };
  }
}

export function parseModule(src: string, file: string): ModuleAST {
  return new Parser(src, file).parseModule();
}
export function parseQuery(src: string, file = 'query'): Expr[] {
  return new Parser(src, file).parseQuery();
}
export function parseTerm(src: string, file = 'term'): Term {
  return new Parser(src, file).parseTermOnly();
}
