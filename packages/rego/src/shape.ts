/**
 * Normalise compiled terms and expressions into objects of one shape each, so the evaluator's
 * property reads stay monomorphic (V8 inline caches) instead of seeing a dozen object layouts.
 */
import type { Expr, Term, With } from './ast.js';

class TermNode {
  t: string = '';
  v: unknown = undefined;
  name: unknown = undefined;
  slot: unknown = undefined;
  wildcard: unknown = undefined;
  head: unknown = undefined;
  path: unknown = undefined;
  root: unknown = undefined;
  dataPath: unknown = undefined;
  items: unknown = undefined;
  entries: unknown = undefined;
  key: unknown = undefined;
  value: unknown = undefined;
  body: unknown = undefined;
  fn: unknown = undefined;
  args: unknown = undefined;
  op: unknown = undefined;
  target: unknown = undefined;
  parts: unknown = undefined;
  term: unknown = undefined;
  withs: unknown = undefined;
  loc: unknown = undefined;
  dfn: unknown = undefined;
  dn: unknown = undefined;
}

class ExprNode {
  k: string = '';
  term: unknown = undefined;
  a: unknown = undefined;
  b: unknown = undefined;
  vars: unknown = undefined;
  key: unknown = undefined;
  val: unknown = undefined;
  coll: unknown = undefined;
  body: unknown = undefined;
  negated: unknown = undefined;
  withs: unknown = undefined;
  loc: unknown = undefined;
}

const done = new WeakSet<object>();

export function shapeTerm(t: Term): Term {
  if (done.has(t)) return t;
  const n = new TermNode();
  const src = t as unknown as Record<string, unknown>;
  for (const k of Object.keys(src)) {
    if (!(k in n)) continue;
    (n as unknown as Record<string, unknown>)[k] = src[k];
  }
  const r = n as unknown as Term & Record<string, unknown>;
  switch (t.t) {
    case 'ref': r.head = shapeTerm(t.head); r.path = t.path.map(shapeTerm); break;
    case 'array': case 'set': r.items = t.items.map(shapeTerm); break;
    case 'object': r.entries = t.entries.map(([k, v]) => [shapeTerm(k), shapeTerm(v)]); break;
    case 'arraycomp': case 'setcomp': r.head = shapeTerm(t.head); r.body = shapeBody(t.body); break;
    case 'objcomp': r.key = shapeTerm(t.key); r.value = shapeTerm(t.value); r.body = shapeBody(t.body); break;
    case 'call': r.args = t.args.map(shapeTerm); break;
    case 'template': r.parts = t.parts.map((p) => (typeof p === 'string' ? p : shapeTerm(p))); break;
    case 'withterm': r.term = shapeTerm(t.term); r.withs = shapeWiths(t.withs); break;
    default: break;
  }
  done.add(r);
  return r;
}

function shapeWiths(ws: With[] | undefined): With[] | undefined {
  return ws?.map((w) => ({ target: shapeTerm(w.target), value: shapeTerm(w.value), loc: w.loc }));
}

export function shapeExpr(e: Expr): Expr {
  if (done.has(e)) return e;
  const n = new ExprNode();
  const src = e as unknown as Record<string, unknown>;
  for (const k of Object.keys(src)) if (k in n) (n as unknown as Record<string, unknown>)[k] = src[k];
  const r = n as unknown as Expr & Record<string, unknown>;
  switch (e.k) {
    case 'term': r.term = shapeTerm(e.term); break;
    case 'unify': case 'assign': r.a = shapeTerm(e.a); r.b = shapeTerm(e.b); break;
    case 'some': r.vars = e.vars.map(shapeTerm); break;
    case 'somein': r.key = e.key && shapeTerm(e.key); r.val = shapeTerm(e.val); r.coll = shapeTerm(e.coll); break;
    case 'every': r.key = e.key && shapeTerm(e.key); r.val = shapeTerm(e.val); r.coll = shapeTerm(e.coll); r.body = shapeBody(e.body); break;
    case 'block': r.body = shapeBody(e.body); break;
  }
  r.withs = shapeWiths(e.withs);
  done.add(r);
  return r;
}

export function shapeBody(b: Expr[]): Expr[] { return b.map(shapeExpr); }
