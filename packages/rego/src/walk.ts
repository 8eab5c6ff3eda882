/**
 * One walk over the terms of compiled rules, for the analyses that read them rather than evaluate them
 * (the compiler's volatility and recursion checks, the policy's input paths): every term of each rule's
 * body, value, key, dynamic key and arguments, along its else chain, into comprehensions, `every`,
 * negated blocks and `with` values. A ref's head is walked only when the ref has no root (`input` or
 * `data`); a call's function term is not walked (its name and target say what it calls).
 */
import type { Expr, Term } from './ast.js';

export interface RuleVisitor {
  /** Each term before its children; false: skip them. */
  term(t: Term): boolean | void;
  /** Each expression before its terms. */
  expr?(e: Expr): void;
}

/** What the walk reads of a compiled rule. */
export interface WalkedRule {
  body: Expr[];
  value?: Term;
  key?: Term;
  dyn: Term[];
  args?: Term[];
  elseRule?: WalkedRule;
}

export function walkRules(rules: Iterable<WalkedRule>, v: RuleVisitor): void {
  const term = (t: Term | undefined): void => {
    if (!t || v.term(t) === false) return;
    switch (t.t) {
      case 'ref': if (!t.root) term(t.head); t.path.forEach(term); return;
      case 'array': case 'set': t.items.forEach(term); return;
      case 'object': t.entries.forEach(([k, x]) => { term(k); term(x); }); return;
      case 'arraycomp': case 'setcomp': term(t.head); body(t.body); return;
      case 'objcomp': term(t.key); term(t.value); body(t.body); return;
      case 'call': t.args.forEach(term); return;
      case 'template': t.parts.forEach((p) => typeof p !== 'string' && term(p)); return;
      case 'withterm': term(t.term); t.withs.forEach((w) => term(w.value)); return;
      default: return;
    }
  };
  const body = (b: Expr[]): void => {
    for (const e of b) {
      v.expr?.(e);
      switch (e.k) {
        case 'term': term(e.term); break;
        case 'unify': case 'assign': term(e.a); term(e.b); break;
        case 'somein': term(e.key); term(e.val); term(e.coll); break;
        case 'every': term(e.key); term(e.val); term(e.coll); body(e.body); break;
        case 'block': body(e.body); break;
        default: break;
      }
      if (e.withs) for (const w of e.withs) term(w.value);
    }
  };
  for (const r of rules) {
    for (let cur: WalkedRule | undefined = r; cur; cur = cur.elseRule) {
      body(cur.body); term(cur.value); term(cur.key); cur.dyn.forEach(term); cur.args?.forEach(term);
    }
  }
}
