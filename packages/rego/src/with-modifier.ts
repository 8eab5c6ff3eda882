/**
 * The `with` keyword: an expression evaluated with input or data replaced at a path, or with a function
 * (built-in or user-defined) mocked by a value or another function. Builds the derived context the
 * expression runs in; the evaluator calls `applyWith` for expressions that carry `with` clauses.
 */
import type { Expr, Term } from './ast.js';
import { BUILTINS } from './builtins/index.js';
import type { Node } from './compiler.js';
import type { EvalCtx, Frame, KV, MockT } from './eval-context.js';
import { RObject, type Value } from './value.js';

/**
 * What `with` needs of the evaluator: evaluating a term (the replacement values). `Evaluator` implements
 * it; declared here rather than imported so that this module does not depend on evaluator.ts, which
 * imports it.
 */
export interface TermEvaluator {
  evalTerm(t: Term, f: Frame, ctx: EvalCtx, k: KV): boolean;
}

export function applyWith(ev: TermEvaluator, e: Expr, f: Frame, ctx: EvalCtx): EvalCtx | undefined {
  const c2 = ctx.derive();
  for (const w of e.withs!) {
    let val: Value | undefined;
    let fnTarget: Term | undefined;
    if (w.value.t === 'ref' && w.value.root === 'data' || w.value.t === 'var' && w.value.slot === undefined) fnTarget = w.value;
    const tg = w.target;
    if (tg.t === 'var' && tg.slot === -1) {
      // builtin mock
      c2.mocks = new Map(c2.mocks ?? []);
      c2.mocks.set(tg.name, mockFor(ev, w.value, f, ctx));
      continue;
    }
    if (tg.t !== 'ref') continue;
    const path = tg.dataPath!;
    if (tg.root === 'data') {
      // function mock?
      let n: Node | undefined = ctx.root;
      for (const p of path) n = n?.children.get(p);
      if (n && n.isFunc) { c2.mocks = new Map(c2.mocks ?? []); c2.mocks.set('data.' + path.join('.'), mockFor(ev, w.value, f, ctx)); continue; }
    }
    void fnTarget;
    ev.evalTerm(w.value, f, ctx, (v) => { val = v; return true; });
    if (val === undefined) return undefined;
    if (tg.root === 'input') {
      c2.input = path.length === 0 ? val : setPath(c2.input ?? new RObject(), path, val);
    } else {
      c2.overrides = new Map(c2.overrides ?? []);
      c2.overrides.set(path.join('\u0000'), val);
      c2.data = path.length === 0 ? val : setPath(c2.data, path, val);
    }
  }
  return c2;
}

function mockFor(ev: TermEvaluator, t: Term, f: Frame, ctx: EvalCtx): MockT {
  if (t.t === 'var' && t.slot === undefined) {
    const bi = BUILTINS.get(t.name); if (bi) return { kind: 'builtin', def: bi };
  }
  if (t.t === 'ref' && t.head.t === 'var' && !t.root) {
    const name = [(t.head as { name: string }).name, ...t.path.map((p) => String((p as { v: Value }).v))].join('.');
    const bi = BUILTINS.get(name); if (bi) return { kind: 'builtin', def: bi };
  }
  if (t.t === 'ref' && t.root === 'data') {
    const path = t.path.map((p) => (p.t === 'scalar' ? String(p.v) : ''));
    let n: Node | undefined = ctx.root; for (const p of path) n = n?.children.get(p);
    if (n && n.isFunc) return { kind: 'user', path };
  }
  let val: Value | undefined;
  ev.evalTerm(t, f, ctx, (v) => { val = v; return true; });
  return { kind: 'value', v: val === undefined ? null : val };
}

/** `root` with `v` set at `path` (objects created on the way; the original is not changed). */
export function setPath(root: Value, path: string[], v: Value): Value {
  if (path.length === 0) return v;
  const o = root instanceof RObject ? root.clone() : new RObject();
  const ex = o.getStr(path[0]);
  o.set(path[0], setPath(ex === undefined ? new RObject() : ex, path.slice(1), v));
  return o;
}
