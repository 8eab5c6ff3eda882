/**
 * Evaluates compiled rules and queries with OPA's semantics. `Evaluator` runs bodies by backtracking with
 * continuations (a callback per solution; returning true stops the enumeration), with a fast path that
 * evaluates single-valued terms through closures compiled once per term. It unifies, walks refs through
 * input, data and the rule tree, computes rule values (complete, partial set and object, ref heads,
 * defaults, `else`) with per-evaluation and shared caches, and calls builtins and user functions.
 * Undefined means no solution, never an exception; conflicts throw `eval_conflict_error`; builtin errors
 * make the call undefined and in strict mode are collected in `ctx.errs` for the caller to raise.
 * `with` is applied by with-modifier.ts; the evaluation state is eval-context.ts.
 */
import type { Expr, Loc, Term } from './ast.js';
import type { BuiltinDef } from './builtins/types.js';
import { BuiltinError } from './builtins/types.js';
import { BUILTINS } from './builtins/index.js';
import type { Node, Rule } from './compiler.js';
import { RegoError } from './errors.js';
import { applyWith } from './with-modifier.js';
import { RObject, RSet, equal, isInt, keyOf, toRegoString, typeName, type Value } from './value.js';

import { COMPUTING, EvalCtx, type Frame, type K, type KV, type MockT, UNSET } from './eval-context.js';

const NOPE = Symbol('nope');

function conflict(msg: string, loc?: Loc): RegoError { return new RegoError('eval_conflict_error', msg, loc); }

function lookupIn(v: Value, key: Value): Value | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    if (typeof key === 'number' && Number.isInteger(key) && key >= 0 && key < v.length) return v[key];
    return undefined;
  }
  if (v instanceof RObject) return typeof key === 'string' ? v.getStr(key) : v.get(key);
  return v.has(key) ? key : undefined;
}

function iterate(v: Value, f: (k: Value, x: Value) => boolean): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) if (f(i, v[i])) return true; return false; }
  if (v instanceof RObject) { for (const e of v.m.values()) if (f(e[0], e[1])) return true; return false; }
  for (const x of v.m.values()) if (f(x, x)) return true;
  return false;
}

function isGroundTerm(t: Term, f: Frame): boolean {
  switch (t.t) {
    case 'scalar': return true;
    case 'var': return t.slot !== undefined && t.slot >= 0 && f[t.slot] !== undefined;
    case 'array': case 'set': for (const x of t.items) if (!isGroundTerm(x, f)) return false; return true;
    case 'object': for (const [k, v] of t.entries) if (!isGroundTerm(k, f) || !isGroundTerm(v, f)) return false; return true;
    default: return true; // refs, calls, comprehensions: evaluable
  }
}

export class Evaluator {
  constructor(public ctx: EvalCtx) {}

  // ------------------------------------------------------------------ bodies
  evalBody(body: Expr[], i: number, f: Frame, ctx: EvalCtx, k: K): boolean {
    // fast path: run single-valued expressions in a loop, fall back to continuations on the first
    // expression that may enumerate
    let b0 = -1, b1 = -1, b2 = -1; // slots bound here (up to 3 tracked without allocation)
    let more: number[] | undefined;
    let result: boolean;
    loop: for (;;) {
      if (i === body.length) { result = k(); break; }
      if (ctx.cover !== undefined) ctx.cover.exprs.add(body[i]);
      const e = body[i];
      if (e.withs === undefined) {
        if (e.k === 'term') {
          const d = this.direct(e.term, f, ctx);
          if (d !== NOPE) {
            const ok = d !== undefined && d !== false;
            if (ok === !!e.negated) { result = false; break loop; }
            i++; continue;
          }
        } else if ((e.k === 'assign' || e.k === 'unify') && !e.negated) {
          const a = e.a;
          if (a.t === 'var' && a.slot !== undefined && a.slot >= 0 && f[a.slot] === undefined) {
            const d = this.direct(e.b, f, ctx);
            if (d !== NOPE) {
              if (d === undefined) { result = false; break loop; }
              f[a.slot] = d;
              if (b0 < 0) b0 = a.slot; else if (b1 < 0) b1 = a.slot; else if (b2 < 0) b2 = a.slot; else (more ??= []).push(a.slot);
              i++; continue;
            }
          }
        } else if (e.k === 'some') { i++; continue; }
        else if (e.k === 'somein' && !e.negated) {
          // `some [k,] v in coll` with fresh vars: iterate directly
          const vt = e.val, kt = e.key;
          const vs = vt.t === 'var' && vt.slot !== undefined && vt.slot >= 0 && f[vt.slot] === undefined ? vt.slot : -1;
          const ks = kt === undefined ? -2 : kt.t === 'var' && kt.slot !== undefined && kt.slot >= 0 && f[kt.slot] === undefined && kt.slot !== vs ? kt.slot : -1;
          if (vs >= 0 && ks !== -1) {
            const c = this.direct(e.coll, f, ctx);
            if (c !== NOPE) {
              const next = i + 1;
              result = false;
              if (c !== undefined && c !== null && typeof c === 'object') {
                result = iterate(c, (key, val) => {
                  f[vs] = val; if (ks >= 0) f[ks] = key;
                  const r = this.evalBody(body, next, f, ctx, k);
                  f[vs] = undefined; if (ks >= 0) f[ks] = undefined;
                  return r;
                });
              }
              break loop;
            }
          }
        }
      }
      const next = i + 1;
      result = this.evalExpr(e, f, ctx, () => this.evalBody(body, next, f, ctx, k));
      break;
    }
    if (b0 >= 0) { f[b0] = undefined; if (b1 >= 0) { f[b1] = undefined; if (b2 >= 0) f[b2] = undefined; } }
    if (more) for (const s2 of more) f[s2] = undefined;
    return result;
  }

  evalExpr(e: Expr, f: Frame, ctx: EvalCtx, k: K): boolean {
    if (e.withs) {
      const c2 = applyWith(this, e, f, ctx);
      if (c2 === undefined) return false;
      if (e.negated) { const found = this.evalExprInner(e, f, c2, () => true); return found ? false : k(); }
      return this.evalExprInner(e, f, c2, k);
    }
    if (e.negated) {
      const found = this.evalExprInner(e, f, ctx, () => true);
      return found ? false : k();
    }
    return this.evalExprInner(e, f, ctx, k);
  }

  private evalExprInner(e: Expr, f: Frame, ctx: EvalCtx, k: K): boolean {
    switch (e.k) {
      case 'term': {
        const d = this.direct(e.term, f, ctx);
        if (d !== NOPE) return d === undefined || d === false ? false : k();
        return this.evalTerm(e.term, f, ctx, (v) => (v !== false ? k() : false));
      }
      case 'unify': case 'assign': {
        const a = e.a;
        if (a.t === 'var' && a.slot !== undefined && a.slot >= 0 && f[a.slot] === undefined) {
          const d = this.direct(e.b, f, ctx);
          if (d !== NOPE) {
            if (d === undefined) return false;
            f[a.slot] = d; const r = k(); f[a.slot] = undefined; return r;
          }
        }
        return this.unify(e.a, e.b, f, ctx, k);
      }
      case 'some': return k();
      case 'somein': return this.evalTerm(e.coll, f, ctx, (c) => iterate(c, (key, val) => {
        if (e.key) return this.unifyTV(e.key, key, f, ctx, () => this.unifyTV(e.val, val, f, ctx, k));
        return this.unifyTV(e.val, val, f, ctx, k);
      }));
      case 'block': return this.evalBody(e.body, 0, f, ctx, k);
      case 'every': return this.evalTerm(e.coll, f, ctx, (c) => {
        if (c === null || typeof c !== 'object') return false;
        const failed = iterate(c, (key, val) => {
          const ok = (e.key ? this.unifyTV(e.key, key, f, ctx, () => this.unifyTV(e.val, val, f, ctx, () => this.evalBody(e.body, 0, f, ctx, () => true)))
            : this.unifyTV(e.val, val, f, ctx, () => this.evalBody(e.body, 0, f, ctx, () => true)));
          return !ok;
        });
        return failed ? false : k();
      });
    }
  }

  // ------------------------------------------------------------------ unification
  unify(a: Term, b: Term, f: Frame, ctx: EvalCtx, k: K): boolean {
    if (a.t === 'var' && f[a.slot!] === undefined && a.slot !== undefined && a.slot >= 0) return this.evalTerm(b, f, ctx, (v) => this.unifyTV(a, v, f, ctx, k));
    if (b.t === 'var' && f[b.slot!] === undefined && b.slot !== undefined && b.slot >= 0) return this.evalTerm(a, f, ctx, (v) => this.unifyTV(b, v, f, ctx, k));
    if (a.t === 'array' && b.t === 'array') {
      if (a.items.length !== b.items.length) return false;
      const step = (i: number): boolean => (i === a.items.length ? k() : this.unify(a.items[i], b.items[i], f, ctx, () => step(i + 1)));
      return step(0);
    }
    if (a.t === 'object' && b.t === 'object' && !isGroundTerm(a, f) && !isGroundTerm(b, f)) {
      if (a.entries.length !== b.entries.length) return false;
      // match keys (keys must be ground)
      const step = (i: number): boolean => {
        if (i === a.entries.length) return k();
        const [ka, va] = a.entries[i];
        return this.evalTerm(ka, f, ctx, (kv) => {
          const m = b.entries.find(([kb]) => { let r = false; this.evalTerm(kb, f, ctx, (x) => { r = equal(x, kv); return true; }); return r; });
          if (!m) return false;
          return this.unify(va, m[1], f, ctx, () => step(i + 1));
        });
      };
      return step(0);
    }
    if (!isGroundTerm(a, f)) return this.evalTerm(b, f, ctx, (v) => this.unifyTV(a, v, f, ctx, k));
    return this.evalTerm(a, f, ctx, (v) => this.unifyTV(b, v, f, ctx, k));
  }

  unifyTV(t: Term, v: Value, f: Frame, ctx: EvalCtx, k: K): boolean {
    switch (t.t) {
      case 'var': {
        const s = t.slot!;
        const cur = f[s];
        if (cur !== undefined) return equal(cur, v) ? k() : false;
        f[s] = v;
        const r = k();
        f[s] = undefined;
        return r;
      }
      case 'scalar': return equal(t.v, v) ? k() : false;
      case 'array': {
        if (!Array.isArray(v) || v.length !== t.items.length) return false;
        const step = (i: number): boolean => (i === v.length ? k() : this.unifyTV(t.items[i], v[i], f, ctx, () => step(i + 1)));
        return step(0);
      }
      case 'object': {
        if (!(v instanceof RObject) || v.size !== t.entries.length) return false;
        if (isGroundTerm(t, f)) break;
        const step = (i: number): boolean => {
          if (i === t.entries.length) return k();
          return this.evalTerm(t.entries[i][0], f, ctx, (kv) => {
            const x = v.get(kv);
            if (x === undefined) return false;
            return this.unifyTV(t.entries[i][1], x, f, ctx, () => step(i + 1));
          });
        };
        return step(0);
      }
    }
    return this.evalTerm(t, f, ctx, (x) => (equal(x, v) ? k() : false));
  }

  // ------------------------------------------------------------------ terms
  /**
   * Evaluate a term that yields at most one value without continuations.
   * Returns NOPE when the term may enumerate (unbound var in a ref, multi-valued builtin, ...).
   */
  direct(t: Term, f: Frame, ctx: EvalCtx): Value | undefined | typeof NOPE {
    const fn = (t as { dfn?: DirectFn }).dfn;
    if (fn !== undefined) return fn(this, f, ctx);
    return ((t as { dfn?: DirectFn }).dfn = compileDirect(t))(this, f, ctx);
  }

  /** generic single-value evaluation (used by compiled closures for the shapes they do not specialise) */
  directSlow(t: Term, f: Frame, ctx: EvalCtx): Value | undefined | typeof NOPE {
    switch (t.t) {
      case 'scalar': return t.v;
      case 'var': { const v = f[t.slot!]; return v === undefined ? NOPE : v; }
      case 'ref': return this.directRef(t, f, ctx);
      case 'call': return this.directCall(t, f, ctx);
      case 'array': {
        const n = t.items.length; const out: Value[] = new Array(n);
        for (let i = 0; i < n; i++) { const x = this.direct(t.items[i], f, ctx); if (x === NOPE || x === undefined) return x; out[i] = x; }
        return out;
      }
      case 'object': return this.directObject(t, f, ctx);
      case 'set': {
        const o = new RSet();
        for (const it of t.items) { const x = this.direct(it, f, ctx); if (x === NOPE || x === undefined) return x; o.add(x); }
        return o;
      }
      case 'arraycomp': case 'setcomp': case 'objcomp': {
        let out: Value | undefined;
        this.evalTerm(t, f, ctx, (v) => { out = v; return true; });
        return out;
      }
      default: return NOPE;
    }
  }

  directObject(t: Extract<Term, { t: 'object' }>, f: Frame, ctx: EvalCtx): Value | undefined | typeof NOPE {
    const o = new RObject();
    for (const [kt, vt] of t.entries) {
      const kv = this.direct(kt, f, ctx); if (kv === NOPE || kv === undefined) return kv;
      const vv = this.direct(vt, f, ctx); if (vv === NOPE || vv === undefined) return vv;
      o.set(kv, vv);
    }
    return o;
  }

  directRef(t: Extract<Term, { t: 'ref' }>, f: Frame, ctx: EvalCtx): Value | undefined | typeof NOPE {
    {
      {
        let v: Value | undefined;
        const path = t.path;
        let i = 0;
        if (t.root === 'input') { v = ctx.input; if (v === undefined) return undefined; }
        else if (t.root === 'data') {
          const rt = t as RefWithNode;
          if (rt.dn === undefined) rt.dn = staticRuleNode(ctx.root, path);
          if (rt.dn !== null && !ctx.overrides) {
            const [node, idx] = rt.dn;
            if (node.funcs.length || node.defaultRule?.kind === 'func') return undefined;
            const nv = this.nodeValue(node, undefined, ctx);
            if (nv === undefined) return undefined;
            return this.walkDirect(nv, path, idx, f, ctx, false);
          }
          // descend the rule tree while keys are known
          let node: Node = ctx.root; let base: Value | undefined = ctx.data;
          for (;;) {
            if (ctx.overrides && node.path.length && ctx.overrides.has(node.key)) { v = ctx.overrides.get(node.key); break; }
            if (node.rules.length || node.defaultRule || node.funcs.length) {
              if (node.funcs.length || node.defaultRule?.kind === 'func') return undefined;
              v = this.nodeValue(node, base, ctx); if (v === undefined) return undefined; break;
            }
            if (i === path.length) { v = this.nodeValue(node, base, ctx); return v; }
            const p = path[i];
            let key: Value | undefined | typeof NOPE;
            if (p.t === 'scalar') key = p.v; else if (p.t === 'var') { key = f[p.slot!]; if (key === undefined) return NOPE; } else return NOPE;
            if (typeof key === 'number' && Number.isInteger(key)) key = String(key);
            if (typeof key !== 'string') return undefined;
            const child = node.children.get(key);
            const b2: Value | undefined = base instanceof RObject ? base.getStr(key) : undefined;
            i++;
            if (!child) { if (b2 === undefined) return undefined; return this.walkDirect(b2, path, i, f, ctx, true); }
            node = child; base = b2;
          }
        } else {
          const h = t.head;
          if (h.t === 'var') { v = f[h.slot!]; if (v === undefined) return NOPE; }
          else { const hv = this.direct(h, f, ctx); if (hv === NOPE || hv === undefined) return hv; v = hv; }
        }
        if (v === undefined) return undefined;
        return this.walkDirect(v, path, i, f, ctx, false);
      }
    }
  }

  directCall(t: Extract<Term, { t: 'call' }>, f: Frame, ctx: EvalCtx): Value | undefined | typeof NOPE {
    {
      {
        const target = t.target as BuiltinDef | { kind: 'user'; path: string[] } | undefined;
        if (!target || ctx.mocks) return NOPE;
        const n = t.args.length;
        const vals: Value[] = new Array(n);
        for (let i = 0; i < n; i++) { const x = this.direct(t.args[i], f, ctx); if (x === NOPE) return NOPE; if (x === undefined) return undefined; vals[i] = x; }
        if ('kind' in target && target.kind === 'user') {
          let out: Value | undefined;
          this.callUser(target.path, vals, ctx, (v) => { out = v; return true; }, t.loc);
          return out;
        }
        const bi = target as BuiltinDef;
        if (bi.multi) return NOPE;
        return callBuiltin(bi, vals, ctx, t.loc);
      }
    }
  }


  walkDirect(v: Value, path: Term[], i: number, f: Frame, ctx: EvalCtx, dataDoc: boolean): Value | undefined | typeof NOPE {
    for (; i < path.length; i++) {
      const p = path[i];
      let key: Value | undefined | typeof NOPE;
      if (p.t === 'scalar') key = p.v;
      else if (p.t === 'var') { key = f[p.slot!]; if (key === undefined) return NOPE; }
      else { key = this.direct(p, f, ctx); if (key === NOPE || key === undefined) return key; }
      let x = lookupIn(v, key);
      if (x === undefined && dataDoc && typeof key === 'number' && v instanceof RObject) x = v.getStr(String(key));
      if (x === undefined) return undefined;
      v = x;
    }
    return v;
  }

  /** Every value `head` takes over the solutions of `body`, handed to `emit` (the array and set comprehensions). */
  private eachHead(head: Term, body: Expr[], f: Frame, ctx: EvalCtx, emit: (v: Value) => void): void {
    this.evalBody(body, 0, f, ctx, () => {
      const d = this.direct(head, f, ctx);
      if (d !== NOPE) { if (d !== undefined) emit(d); return false; }
      return this.evalTerm(head, f, ctx, (v) => { emit(v); return false; });
    });
  }

  evalTerm(t: Term, f: Frame, ctx: EvalCtx, k: KV): boolean {
    if (t.t === 'ref' || t.t === 'call' || t.t === 'array' || t.t === 'object' || t.t === 'set') {
      const d = this.direct(t, f, ctx);
      if (d !== NOPE) return d === undefined ? false : k(d);
    }
    switch (t.t) {
      case 'scalar': return k(t.v);
      case 'var': {
        const v = f[t.slot!];
        if (v === undefined) throw new RegoError('rego_unsafe_var_error', `var ${t.name} is unsafe`, t.loc);
        return k(v);
      }
      case 'ref': return this.evalRef(t, f, ctx, k);
      case 'array': {
        const n = t.items.length;
        const out: Value[] = new Array(n);
        const step = (i: number): boolean => {
          if (i === n) return k(out.slice());
          return this.evalTerm(t.items[i], f, ctx, (v) => { out[i] = v; return step(i + 1); });
        };
        return step(0);
      }
      case 'set': {
        const n = t.items.length;
        const out: Value[] = new Array(n);
        const step = (i: number): boolean => {
          if (i === n) return k(new RSet(out));
          return this.evalTerm(t.items[i], f, ctx, (v) => { out[i] = v; return step(i + 1); });
        };
        return step(0);
      }
      case 'object': {
        const n = t.entries.length;
        const ks: Value[] = new Array(n), vs: Value[] = new Array(n);
        const step = (i: number): boolean => {
          if (i === n) { const o = new RObject(); for (let j = 0; j < n; j++) o.set(ks[j], vs[j]); return k(o); }
          return this.evalTerm(t.entries[i][0], f, ctx, (kv) => { ks[i] = kv; return this.evalTerm(t.entries[i][1], f, ctx, (vv) => { vs[i] = vv; return step(i + 1); }); });
        };
        return step(0);
      }
      case 'arraycomp': {
        const out: Value[] = [];
        this.eachHead(t.head, t.body, f, ctx, (v) => { out.push(v); });
        return k(out);
      }
      case 'setcomp': {
        const out = new RSet();
        this.eachHead(t.head, t.body, f, ctx, (v) => { out.add(v); });
        return k(out);
      }
      case 'objcomp': {
        const out = new RObject();
        this.evalBody(t.body, 0, f, ctx, () => this.evalTerm(t.key, f, ctx, (kv) => this.evalTerm(t.value, f, ctx, (vv) => {
          const ex = out.get(kv);
          if (ex !== undefined && !equal(ex, vv)) throw conflict('object keys must be unique', t.loc);
          out.set(kv, vv); return false;
        })));
        return k(out);
      }
      case 'call': return this.evalCall(t, f, ctx, k);
      case 'withterm': {
        const c2 = applyWith(this, { k: 'term', term: t.term, withs: t.withs, loc: t.loc }, f, ctx);
        if (c2 === undefined) return false;
        return this.evalTerm(t.term, f, c2, k);
      }
      case 'template': {
        let s = '';
        for (const p of t.parts) {
          if (typeof p === 'string') { s += p; continue; }
          let got: Value | undefined;
          let multi = false;
          this.evalTerm(p, f, ctx, (v) => { if (got !== undefined && !equal(got, v)) multi = true; got = v; return false; });
          if (multi) throw new RegoError('eval_conflict_error', 'template-strings must not produce multiple outputs', p.loc);
          s += got === undefined ? '<undefined>' : typeof got === 'string' ? got : toRegoString(got);
        }
        return k(s);
      }
    }
  }

  private evalRef(t: Extract<Term, { t: 'ref' }>, f: Frame, ctx: EvalCtx, k: KV): boolean {
    if (t.root === 'input') {
      if (ctx.input === undefined) return false;
      return this.walk(ctx.input, t.path, 0, f, ctx, k);
    }
    if (t.root === 'data') return this.resolveData(ctx.root, ctx.data, t.path, 0, f, ctx, k);
    const head = t.head;
    if (head.t === 'var') {
      const v = f[head.slot!];
      if (v === undefined) throw new RegoError('rego_unsafe_var_error', `var ${head.name} is unsafe`, head.loc);
      return this.walk(v, t.path, 0, f, ctx, k);
    }
    return this.evalTerm(head, f, ctx, (v) => this.walk(v, t.path, 0, f, ctx, k));
  }

  walk(v: Value, path: Term[], i: number, f: Frame, ctx: EvalCtx, k: KV, dataDoc = false): boolean {
    for (; i < path.length; i++) {
      const p = path[i];
      let key: Value | undefined;
      if (p.t === 'scalar') key = p.v;
      else if (p.t === 'var') {
        key = f[p.slot!];
        if (key === undefined) {
          const slot = p.slot!;
          const rest = i + 1;
          return iterate(v, (kk, x) => { f[slot] = kk; const r = this.walk(x, path, rest, f, ctx, k); f[slot] = undefined; return r; });
        }
      } else if (isGroundTerm(p, f)) {
        const rest = i + 1;
        return this.evalTerm(p, f, ctx, (kk) => { const x = lookupIn(v, kk); return x === undefined ? false : this.walk(x, path, rest, f, ctx, k); });
      } else {
        const rest = i + 1;
        return iterate(v, (kk, x) => this.unifyTV(p, kk, f, ctx, () => this.walk(x, path, rest, f, ctx, k)));
      }
      let x = lookupIn(v, key);
      if (x === undefined && dataDoc && typeof key === 'number' && v instanceof RObject) x = v.getStr(String(key));
      if (x === undefined) return false;
      v = x;
    }
    return k(v);
  }

  // ------------------------------------------------------------------ data / rules
  resolveData(node: Node, base: Value | undefined, path: Term[], i: number, f: Frame, ctx: EvalCtx, k: KV): boolean {
    for (;;) {
      if (ctx.overrides && node.path.length) {
        const ov = ctx.overrides.get(node.key);
        if (ov !== undefined) return this.walk(ov, path, i, f, ctx, k);
      }
      if (node.rules.length || node.defaultRule || node.funcs.length) {
        if (node.funcs.length || node.defaultRule?.kind === 'func') return false;
        const v = this.nodeValue(node, base, ctx);
        if (v === undefined) return false;
        return this.walk(v, path, i, f, ctx, k);
      }
      if (i === path.length) {
        const v = this.nodeValue(node, base, ctx);
        return v === undefined ? false : k(v);
      }
      const p = path[i];
      let key: Value | undefined;
      if (p.t === 'scalar') key = p.v;
      else if (p.t === 'var' && f[p.slot!] !== undefined) key = f[p.slot!];
      else if (p.t === 'var') {
        const slot = p.slot!;
        const keys = new Set<string>(node.children.keys());
        if (base instanceof RObject) for (const kk of base.keys()) if (typeof kk === 'string') keys.add(kk);
        for (const kk of keys) {
          f[slot] = kk;
          const child = node.children.get(kk);
          const b2 = base instanceof RObject ? base.getStr(kk) : undefined;
          const r = child ? this.resolveData(child, b2, path, i + 1, f, ctx, k) : b2 === undefined ? false : this.walk(b2, path, i + 1, f, ctx, k);
          f[slot] = undefined;
          if (r) return true;
        }
        return false;
      } else {
        return this.evalTerm(p, f, ctx, (kk) => {
          const v = this.nodeValue(node, base, ctx);
          if (v === undefined) return false;
          const x = lookupIn(v, kk);
          return x === undefined ? false : this.walk(x, path, i + 1, f, ctx, k);
        });
      }
      if (typeof key === 'number' && Number.isInteger(key)) key = String(key);
      if (typeof key !== 'string') return false;
      const child = node.children.get(key);
      const b2 = base instanceof RObject ? base.getStr(key) : undefined;
      if (!child) return b2 === undefined ? false : this.walk(b2, path, i + 1, f, ctx, k, true);
      node = child; base = b2; i++;
    }
  }

  nodeValue(node: Node, base: Value | undefined, ctx: EvalCtx): Value | undefined {
    if (ctx.overrides && node.path.length) { const ov = ctx.overrides.get(node.key); if (ov !== undefined) return ov; }
    const shared = ctx.shared !== undefined && !node.volatile && !ctx.overrides && !ctx.mocks ? ctx.shared : undefined;
    if (shared !== undefined) { const sv = shared.get(node); if (sv !== undefined || shared.has(node)) return sv; }
    const cache = ctx.cache;
    const cached = cache[node.id];
    if (cached !== UNSET) {
      if (cached === COMPUTING) throw new RegoError('rego_recursion_error', `rule data.${node.path.join('.')} is recursive`);
      return cached;
    }
    cache[node.id] = COMPUTING;
    let v: Value | undefined;
    try {
      if (node.funcs.length || node.defaultRule?.kind === 'func') v = undefined;
      else if (node.rules.length || node.defaultRule) v = this.ruleValue(node, ctx);
      if (node.children.size && !(node.rules.length && node.rules[0].kind === 'single' && !node.rules[0].dyn.length)) {
        const fromBase = !(v instanceof RObject) && base instanceof RObject && v === undefined;
        const o = v instanceof RObject ? v.clone() : fromBase ? (base as RObject).clone() : v === undefined ? new RObject() : undefined;
        if (o) {
          for (const [ck, child] of node.children) {
            const cv = this.nodeValue(child, base instanceof RObject ? base.getStr(ck) : undefined, ctx);
            if (cv !== undefined) {
              const ex = o.getStr(ck);
              if (ex === undefined) o.set(ck, cv);
              else if (ex instanceof RObject && cv instanceof RObject) o.set(ck, mergeObj(ex, cv, !fromBase));
              else if (ex instanceof RSet && cv instanceof RSet) o.set(ck, new RSet([...ex, ...cv]));
              else if (!fromBase && !equal(ex, cv)) throw conflict('object keys must be unique', child.rules[0]?.loc);
            }
          }
          v = o;
        }
      } else if (!node.rules.length && !node.defaultRule && !node.funcs.length) {
        v = base;
        if (v === undefined && node.children.size === 0) v = new RObject();
      }
    } catch (e) { cache[node.id] = UNSET; throw e; }
    cache[node.id] = v;
    if (shared !== undefined && ctx.errs.length === 0) shared.set(node, v);
    return v;
  }

  ruleValue(node: Node, ctx: EvalCtx): Value | undefined {
    const rules = node.rules;
    const kind = rules.length ? (rules[0].dyn.length ? 'obj' : rules[0].kind) : 'single';
    if (kind === 'single') {
      let result: Value | undefined;
      let rloc: Loc | undefined;
      for (const r of rules) {
        for (let cur: Rule | undefined = r; cur; cur = cur.elseRule) {
          const f: Frame = new Array(cur.nslots);
          let found = false;
          const rr = cur;
          const value = rr.value;
          this.evalBody(cur.body, 0, f, ctx, () => {
            found = true;
            ctx.cover?.rules.add(rr);
            let d: Value | undefined | typeof NOPE = true;
            if (value !== undefined) {
              d = this.direct(value, f, ctx);
              if (d === NOPE) {
                return this.evalTerm(value, f, ctx, (v) => {
                  if (result !== undefined && !equal(result, v)) throw conflict('complete rules must not produce multiple outputs', rloc ?? rr.loc);
                  result = v; rloc = rr.loc; return false;
                });
              }
              if (d === undefined) return false;
            }
            if (result !== undefined && !equal(result, d)) throw conflict('complete rules must not produce multiple outputs', rloc ?? rr.loc);
            result = d; rloc = rr.loc;
            return false;
          });
          if (found) break;
        }
      }
      if (result === undefined && node.defaultRule?.value) { ctx.cover?.rules.add(node.defaultRule); this.evalTerm(node.defaultRule.value, [], ctx, (v) => { result = v; return true; }); }
      return result;
    }
    if (kind === 'multi') {
      const out = new RSet();
      for (const r of rules) {
        const f: Frame = new Array(r.nslots);
        const key = r.key!;
        this.evalBody(r.body, 0, f, ctx, () => {
          ctx.cover?.rules.add(r);
          const d = this.direct(key, f, ctx);
          if (d !== NOPE) { if (d !== undefined) out.add(d); return false; }
          return this.evalTerm(key, f, ctx, (v) => { out.add(v); return false; });
        });
      }
      return out;
    }
    // object with dynamic keys (possibly nested)
    const out = new RObject();
    for (const r of rules) {
      for (let cur: Rule | undefined = r; cur; cur = cur.elseRule) {
        const f: Frame = new Array(cur.nslots);
        const rr = cur;
        let found = false;
        this.evalBody(cur.body, 0, f, ctx, () => {
          found = true;
          ctx.cover?.rules.add(rr);
          const keys: Value[] = [];
          const step = (i: number): boolean => {
            if (i === rr.dyn.length) {
              if (rr.kind === 'multi') return this.evalTerm(rr.key!, f, ctx, (v) => { insertMulti(out, keys, v, rr); return false; });
              if (rr.value) return this.evalTerm(rr.value, f, ctx, (v) => { insert(out, keys, v, rr); return false; });
              insert(out, keys, true, rr); return false;
            }
            return this.evalTerm(rr.dyn[i], f, ctx, (kv) => { keys[i] = kv; return step(i + 1); });
          };
          return step(0);
        });
        if (found) break;
      }
    }
    if (out.size === 0 && node.defaultRule?.value) { let d: Value | undefined; this.evalTerm(node.defaultRule.value, [], ctx, (v) => { d = v; return true; }); return d; }
    return out;
    /** The object that holds the last of `keys` under `o`, made on the way where missing. */
    function parentOf(o: RObject, keys: Value[], r: Rule): RObject {
      let cur = o;
      for (let i = 0; i < keys.length - 1; i++) {
        let nx = cur.get(keys[i]);
        if (nx === undefined) { nx = new RObject(); cur.set(keys[i], nx); }
        else if (!(nx instanceof RObject)) throw conflict('object keys must be unique', r.loc);
        cur = nx;
      }
      return cur;
    }
    function insert(o: RObject, keys: Value[], v: Value, r: Rule) {
      const cur = parentOf(o, keys, r);
      const last = keys[keys.length - 1];
      const ex = cur.get(last);
      if (ex !== undefined && !equal(ex, v)) throw conflict('object keys must be unique', r.loc);
      cur.set(last, v);
      if (v instanceof RObject) ruleLeaves.add(v);
    }
    function insertMulti(o: RObject, keys: Value[], v: Value, r: Rule) {
      const cur = parentOf(o, keys, r);
      const last = keys[keys.length - 1];
      let s = cur.get(last);
      if (s === undefined) { s = new RSet(); cur.set(last, s); }
      if (!(s instanceof RSet)) throw conflict('object keys must be unique', r.loc);
      s.add(v);
    }
  }

  // ------------------------------------------------------------------ calls
  evalCall(t: Extract<Term, { t: 'call' }>, f: Frame, ctx: EvalCtx, k: KV): boolean {
    const args = t.args;
    const n = args.length;
    const vals: Value[] = new Array(n);
    const target = t.target as (BuiltinDef & { kind?: undefined }) | { kind: 'user'; path: string[]; arity: number } | undefined;
    if (!target) throw new RegoError('rego_type_error', `undefined function ${t.name}`, t.loc);
    let order: number[] | undefined;
    for (let i = 0; i < n; i++) { const a = args[i]; if (a.t === 'var' && f[a.slot!] === undefined) { order = []; break; } }
    if (order) {
      for (let i = 0; i < n; i++) { const a = args[i]; if (!(a.t === 'var' && f[a.slot!] === undefined)) order.push(i); }
      for (let i = 0; i < n; i++) { const a = args[i]; if (a.t === 'var' && f[a.slot!] === undefined) order.push(i); }
      const ord = order;
      const step2 = (j: number): boolean => {
        if (j === n) return this.invoke(t, target, vals.slice(), ctx, k);
        const i = ord[j];
        return this.evalTerm(args[i], f, ctx, (v) => { vals[i] = v; return step2(j + 1); });
      };
      return step2(0);
    }
    const step = (i: number): boolean => {
      if (i === n) return this.invoke(t, target, vals.slice(), ctx, k);
      return this.evalTerm(args[i], f, ctx, (v) => { vals[i] = v; return step(i + 1); });
    };
    return step(0);
  }

  private invoke(t: Extract<Term, { t: 'call' }>, target: BuiltinDef | { kind: 'user'; path: string[]; arity: number }, vals: Value[], ctx: EvalCtx, k: KV): boolean {
    if (ctx.mocks) {
      const m = ctx.mocks.get(t.name!);
      if (m) {
        if (m.kind === 'value') return k(m.v);
        if (m.kind === 'builtin') target = m.def;
        else { const c2 = ctx.derive(); c2.mocks = undefined; return this.callUser(m.path, vals, c2, k, t.loc); }
      }
    }
    if ('kind' in target && target.kind === 'user') return this.callUser(target.path, vals, ctx, k, t.loc);
    const bi = target as BuiltinDef;
    let r: Value | Value[] | undefined;
    try {
      r = bi.fn(vals, ctx);
    } catch (e) {
      if (e instanceof BuiltinError) {
        if (e.always) throw new RegoError(e.code, e.message, t.loc);
        if (ctx.strict) ctx.errs.push(new RegoError(e.code, e.message, t.loc));
        return false;
      }
      if (e instanceof RegoError) throw e;
      if (e instanceof RangeError || e instanceof TypeError || e instanceof SyntaxError) {
        if (ctx.strict) ctx.errs.push(new RegoError('eval_builtin_error', `${bi.name}: ${(e as Error).message}`, t.loc));
        return false;
      }
      throw e;
    }
    if (r === undefined) return false;
    if (bi.multi) { for (const x of r as Value[]) if (k(x)) return true; return false; }
    return k(r as Value);
  }

  callUser(path: string[], vals: Value[], ctx: EvalCtx, k: KV, loc?: Loc): boolean {
    let node: Node | undefined = ctx.root;
    for (const p of path) node = node?.children.get(p);
    if (!node || (!node.funcs.length && !node.defaultRule)) return false;
    let result: Value | undefined;
    for (const r of node.funcs) {
      for (let cur: Rule | undefined = r; cur; cur = cur.elseRule) {
        const f: Frame = new Array(cur.nslots);
        const rr = cur;
        let found = false;
        const args = rr.args!;
        const bindArgs = (i: number): boolean => {
          if (i === args.length) return this.evalBody(rr.body, 0, f, ctx, () => {
            found = true;
            ctx.cover?.rules.add(rr);
            const yieldV = (v: Value) => { if (result !== undefined && !equal(result, v)) throw conflict('functions must not produce multiple outputs for same inputs', rr.loc); result = v; return false; };
            if (rr.value) return this.evalTerm(rr.value, f, ctx, yieldV);
            return yieldV(true);
          });
          return this.unifyTV(args[i], vals[i], f, ctx, () => bindArgs(i + 1));
        };
        bindArgs(0);
        if (found) break;
      }
    }
    if (result === undefined && node.defaultRule?.value) this.evalTerm(node.defaultRule.value, [], ctx, (v) => { result = v; return true; });
    void loc;
    if (result === undefined) return false;
    return k(result);
  }
}

type RefWithNode = Extract<Term, { t: 'ref' }> & { dn?: [Node, number] | null };
type DirectFn = (ev: Evaluator, f: Frame, ctx: EvalCtx) => Value | undefined | typeof NOPE;

function lookupStatic(v: Value, key: string | number): Value | undefined {
  if (typeof key === 'string') return v instanceof RObject ? v.getStr(key) : v instanceof RSet ? (v.has(key) ? key : undefined) : undefined;
  return lookupIn(v, key);
}

/** Compile a term into a closure that evaluates it to a single value (or NOPE when it may enumerate). */
function compileDirect(t: Term): DirectFn {
  switch (t.t) {
    case 'scalar': { const v = t.v; return () => v; }
    case 'var': {
      const slot = t.slot!;
      if (slot === undefined || slot < 0) return (ev, f, ctx) => ev.directSlow(t, f, ctx);
      return (_ev, f) => { const v = f[slot]; return v === undefined ? NOPE : v; };
    }
    case 'ref': {
      const path = t.path;
      const staticKeys = path.every((p) => p.t === 'scalar' && (typeof p.v === 'string' || typeof p.v === 'number'));
      if (!staticKeys) return (ev, f, ctx) => ev.directRef(t, f, ctx);
      const keys = path.map((p) => (p as { v: string | number }).v);
      const n = keys.length;
      if (t.root === 'input') {
        return (_ev, _f, ctx) => {
          let v: Value | undefined = ctx.input;
          for (let i = 0; i < n && v !== undefined; i++) v = lookupStatic(v, keys[i]);
          return v;
        };
      }
      if (!t.root && t.head.t === 'var' && t.head.slot !== undefined && t.head.slot >= 0) {
        const slot = t.head.slot;
        return (_ev, f) => {
          let v: Value | undefined = f[slot];
          if (v === undefined) return NOPE;
          for (let i = 0; i < n && v !== undefined; i++) v = lookupStatic(v, keys[i]);
          return v;
        };
      }
      if (t.root === 'data') {
        let dn: [Node, number] | null | undefined;
        return (ev, f, ctx) => {
          if (ctx.overrides) return ev.directRef(t, f, ctx);
          if (dn === undefined) dn = staticRuleNode(ctx.root, path);
          if (dn === null) return ev.directRef(t, f, ctx);
          const node = dn[0];
          if (node.funcs.length || node.defaultRule?.kind === 'func') return undefined;
          let v = ev.nodeValue(node, undefined, ctx);
          for (let i = dn[1]; i < n && v !== undefined; i++) v = lookupStatic(v, keys[i]);
          return v;
        };
      }
      return (ev, f, ctx) => ev.directRef(t, f, ctx);
    }
    case 'call': {
      const target = t.target as BuiltinDef | { kind: 'user' } | undefined;
      if (!target || ('kind' in target && target.kind === 'user') || (target as BuiltinDef).multi) return (ev, f, ctx) => ev.directCall(t, f, ctx);
      const bi = target as BuiltinDef;
      const loc = t.loc;
      const args = t.args.map((a) => compileDirect(a));
      if (args.length === 1) {
        const [a0] = args;
        return (ev, f, ctx) => {
          if (ctx.mocks) return NOPE;
          const x = a0(ev, f, ctx); if (x === NOPE || x === undefined) return x;
          return callBuiltin(bi, [x], ctx, loc);
        };
      }
      if (args.length === 2) {
        const [a0, a1] = args;
        return (ev, f, ctx) => {
          if (ctx.mocks) return NOPE;
          const x = a0(ev, f, ctx); if (x === NOPE || x === undefined) return x;
          const y = a1(ev, f, ctx); if (y === NOPE || y === undefined) return y;
          return callBuiltin(bi, [x, y], ctx, loc);
        };
      }
      return (ev, f, ctx) => ev.directCall(t, f, ctx);
    }
    default: return (ev, f, ctx) => ev.directSlow(t, f, ctx);
  }
}

/** the rule node reached by the static (constant string) prefix of a data ref, with the index after it */
function staticRuleNode(root: Node, path: Term[]): [Node, number] | null {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const p = path[i];
    if (p.t !== 'scalar' || typeof p.v !== 'string') return null;
    const c = node.children.get(p.v);
    if (!c) return null;
    node = c;
    if (node.rules.length || node.defaultRule || node.funcs.length) return [node, i + 1];
  }
  return null;
}

function callBuiltin(bi: BuiltinDef, vals: Value[], ctx: EvalCtx, loc: Loc): Value | undefined {
  try {
    return bi.fn(vals, ctx) as Value | undefined;
  } catch (e) {
    if (e instanceof BuiltinError) {
      if (e.always) throw new RegoError(e.code, e.message, loc);
      if (ctx.strict) ctx.errs.push(new RegoError(e.code, e.message, loc));
      return undefined;
    }
    if (e instanceof RangeError || e instanceof TypeError || e instanceof SyntaxError) {
      if (ctx.strict) ctx.errs.push(new RegoError('eval_builtin_error', `${bi.name}: ${(e as Error).message}`, loc));
      return undefined;
    }
    throw e;
  }
}

/** object values produced by ref-head rules: other rules may not inject keys into them */
const ruleLeaves = new WeakSet<RObject>();

function mergeObj(a: RObject, b: RObject, strict = false): RObject {
  if (strict && ruleLeaves.has(a)) throw conflict('object keys must be unique');
  const o = a.clone();
  for (const [k, v] of b.entries()) {
    const ex = o.get(k);
    if (ex === undefined) o.set(k, v);
    else if (ex instanceof RObject && v instanceof RObject) o.set(k, mergeObj(ex, v, strict));
    else if (ex instanceof RSet && v instanceof RSet) o.set(k, new RSet([...ex, ...v]));
    else if (strict && !equal(ex, v)) throw conflict('object keys must be unique');
    else if (!strict) o.set(k, v);
  }
  return o;
}


export { isInt, keyOf, typeName };
export { EvalCtx, type MockT } from './eval-context.js';
export { setPath } from './with-modifier.js';
