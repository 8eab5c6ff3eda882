/**
 * Compiles parsed modules for the evaluator: `Compiler` indexes rules into a tree of `Node`s by data path
 * (package + static head prefix), resolves imports, package rules and builtins, gives every variable a
 * frame slot, reorders each body so that variables are bound before use, marks the rules whose value
 * depends only on data (cacheable per data document) and normalises term shapes (shape.ts). It checks
 * what OPA checks at compile time: unsafe vars, unknown functions and arity, conflicting or duplicate
 * default rules, recursion, `with` targets. Issues are collected in `errors` (`CompileIssue`), not thrown;
 * `compileQuery` compiles a query body the same way.
 */
import type { Expr, ImportAST, Loc, ModuleAST, RuleAST, Term } from './ast.js';
import { RegoError } from './errors.js';
import { BUILTINS } from './builtins/index.js';
import type { Value } from './value.js';
import { shapeBody, shapeTerm } from './shape.js';
import { walkRules } from './walk.js';

export interface Rule {
  ast: RuleAST;
  file: string;
  path: string[]; // static data path (package + static head prefix)
  dyn: Term[]; // dynamic remainder of head ref
  kind: 'single' | 'multi' | 'func';
  args?: Term[];
  key?: Term;
  value?: Term;
  body: Expr[];
  nslots: number;
  elseRule?: Rule;
  isDefault: boolean;
  loc: Loc;
}

export class Node {
  children = new Map<string, Node>();
  rules: Rule[] = [];
  defaultRule?: Rule;
  funcs: Rule[] = [];
  key: string;
  /** value may depend on input, the clock or other per-evaluation state (not cacheable across evaluations) */
  volatile = true;
  /** index into per-evaluation caches; nodeCount on the root */
  id = 0;
  nodeCount = 0;
  constructor(public path: string[]) { this.key = path.join('\u0000'); }
  child(k: string): Node {
    let c = this.children.get(k);
    if (!c) { c = new Node([...this.path, k]); this.children.set(k, c); }
    return c;
  }
  get isFunc(): boolean { return this.funcs.length > 0; }
}

export interface CompileIssue { code: string; message: string; location?: Loc }

interface Scope { vars: Map<string, number>; parent?: Scope }

export interface CompiledQuery { body: Expr[]; nslots: number; vars: [string, number][] }

class Ctx {
  nslots = 0;
  constructor(public comp: Compiler, public pkg: string[], public imports: Map<string, Term>, public file: string) {}
  newSlot(): number { return this.nslots++; }
}

function lookup(s: Scope | undefined, name: string): number | undefined {
  for (let c = s; c; c = c.parent) { const v = c.vars.get(name); if (v !== undefined) return v; }
  return undefined;
}

export class Compiler {
  root = new Node([]);
  errors: CompileIssue[] = [];
  pkgRules = new Map<string, Set<string>>(); // pkg key -> first head names
  packages: string[] = [];
  rules: Rule[] = [];

  err(code: string, message: string, location?: Loc): void { this.errors.push({ code, message, location }); }

  compileModules(mods: ModuleAST[]): void {
    for (const m of mods) {
      const pk = ['data', ...m.pkg].join('.');
      if (!this.packages.includes(pk)) this.packages.push(pk);
      let set = this.pkgRules.get(pk);
      if (!set) { set = new Set(); this.pkgRules.set(pk, set); }
      for (const r of m.rules) set.add((r.head[0] as { name: string }).name);
    }
    for (const m of mods) { let n = this.root; for (const k of m.pkg) n = n.child(k); }
    for (const m of mods) {
      const imports = new Map<string, Term>();
      for (const im of m.imports) this.addImport(im, imports);
      const pkgPath = m.pkg;
      for (const r of m.rules) {
        try { this.compileRule(r, pkgPath, imports, m.file); } catch (e) {
          if (e instanceof RegoError) this.err(e.code, e.message, e.location); else throw e;
        }
      }
    }
    this.checkConflicts(this.root);
    this.computeVolatility();
    for (const r of this.rules) for (let cur: Rule | undefined = r; cur; cur = cur.elseRule) shapeRule(cur);
    let n = 0;
    const number = (x: Node) => { x.id = n++; for (const c of x.children.values()) number(c); };
    number(this.root);
    this.root.nodeCount = n;
  }

  /** rules (and functions) must not depend on themselves through static refs, as OPA checks at compile time */
  private checkRecursion(all: Node[], info: Map<Node, { refs: string[][] }>): void {
    const deps = new Map<Node, Node[]>();
    for (const n of all) {
      const out: Node[] = [];
      for (const r of info.get(n)!.refs) {
        let cur: Node | undefined = this.root;
        for (const k of r) {
          cur = cur.children.get(k);
          if (!cur) break;
          if (cur.rules.length || cur.defaultRule || cur.funcs.length) { out.push(cur); break; }
        }
      }
      deps.set(n, out);
    }
    const state = new Map<Node, number>(); // 1 visiting, 2 done
    const stack: Node[] = [];
    const reported = new Set<Node>();
    const visit = (n: Node): void => {
      state.set(n, 1); stack.push(n);
      for (const d of deps.get(n) ?? []) {
        const st = state.get(d);
        if (st === 1) {
          const cycle = stack.slice(stack.indexOf(d));
          if (!cycle.some((c) => reported.has(c))) {
            cycle.forEach((c) => reported.add(c));
            const names = [...cycle, d].map((c) => 'data.' + c.path.join('.'));
            const rule = d.rules[0] ?? d.funcs[0] ?? d.defaultRule;
            this.err('rego_recursion_error', `rule ${names[0]} is recursive: ${names.join(' -> ')}`, rule?.loc);
          }
        } else if (st === undefined) visit(d);
      }
      stack.pop(); state.set(n, 2);
    };
    for (const n of all) if (!state.has(n)) visit(n);
  }

  /** mark rule nodes whose value depends only on data (and constants): those can be cached per data document */
  private computeVolatility(): void {
    const VOLATILE_BUILTINS = /^(time\.now_ns|rand\.|http\.send|uuid\.|opa\.runtime|print|trace|io\.jwt|crypto\.x509|net\.lookup)/;
    const info = new Map<Node, { direct: boolean; refs: string[][] }>();
    const all: Node[] = [];
    const visitNodes = (n: Node) => { if (n.rules.length || n.defaultRule || n.funcs.length) all.push(n); for (const c of n.children.values()) visitNodes(c); };
    visitNodes(this.root);
    for (const n of all) {
      const st = { direct: false, refs: [] as string[][] };
      walkRules([...n.rules, ...n.funcs, ...(n.defaultRule ? [n.defaultRule] : [])], {
        term: (t) => {
          if (t.t === 'ref' && t.root === 'input') { st.direct = true; return false; }
          if (t.t === 'ref' && t.root === 'data') {
            const segs: string[] = [];
            for (const p of t.path) { if (p.t === 'scalar' && typeof p.v === 'string') segs.push(p.v); else break; }
            st.refs.push(segs);
          } else if (t.t === 'call') {
            const tg = t.target as { kind?: string; path?: string[]; name?: string } | undefined;
            if (tg?.kind === 'user' && tg.path) st.refs.push(tg.path);
            else if (t.name && VOLATILE_BUILTINS.test(t.name)) st.direct = true;
          } else if (t.t === 'withterm') st.direct = true;
        },
        expr: (e) => { if (e.withs) st.direct = true; },
      });
      info.set(n, st);
    }
    this.checkRecursion(all, info);
    const vol = new Set<Node>(all.filter((n) => info.get(n)!.direct));
    const overlaps = (a: string[], b: string[]) => { const m = Math.min(a.length, b.length); for (let i = 0; i < m; i++) if (a[i] !== b[i]) return false; return true; };
    let changed = true;
    while (changed) {
      changed = false;
      for (const n of all) {
        if (vol.has(n)) continue;
        const st = info.get(n)!;
        if (st.refs.some((r) => r.length === 0 || [...vol].some((m) => overlaps(r, m.path)))) { vol.add(n); changed = true; }
      }
    }
    for (const n of all) n.volatile = vol.has(n);
  }

  private checkConflicts(n: Node): void {
    const kinds = new Set(n.rules.map((r) => (r.dyn.length ? 'obj' : r.kind)));
    if (n.funcs.length && (n.rules.length || n.defaultRule && n.defaultRule.kind !== 'func')) this.err('rego_type_error', `conflicting rules data.${n.path.join('.')} found`, n.funcs[0].loc);
    else if (kinds.size > 1) this.err('rego_type_error', `conflicting rules data.${n.path.join('.')} found`, n.rules[0].loc);
    if (n.rules.some((r) => r.kind === 'single' && !r.dyn.length) && n.children.size) {
      for (const c of n.children.values()) if (c.rules.length || c.children.size) { this.err('rego_type_error', `rule data.${n.path.join('.')} conflicts with [data.${c.path.join('.')}]`, n.rules[0].loc); break; }
    }
    const arities = new Set(n.funcs.map((f) => f.args!.length));
    if (arities.size > 1) this.err('rego_type_error', `conflicting rules data.${n.path.join('.')} found`, n.funcs[0].loc);
    for (const c of n.children.values()) this.checkConflicts(c);
  }

  private addImport(im: ImportAST, imports: Map<string, Term>): void {
    const t = im.path;
    const head = t.t === 'ref' ? t.head : t;
    const name = (head as { name: string }).name;
    if (name !== 'data' && name !== 'input' && name !== 'future' && name !== 'rego') {
      this.err('rego_parse_error', 'invalid import path', im.loc); return;
    }
    if (name === 'future' || name === 'rego') return;
    let alias = im.alias;
    if (!alias) {
      if (t.t === 'ref') { const last = t.path[t.path.length - 1]; if (last.t === 'scalar' && typeof last.v === 'string') alias = last.v; }
      else alias = name;
    }
    if (alias) imports.set(alias, t);
  }

  private compileRule(r: RuleAST, pkg: string[], imports: Map<string, Term>, file: string, parentPath?: { path: string[]; dyn: Term[] }): Rule {
    const ctx = new Ctx(this, pkg, imports, file);
    // static prefix
    let path: string[]; let dyn: Term[];
    if (parentPath) { path = parentPath.path; dyn = parentPath.dyn; }
    else {
      path = [...pkg, (r.head[0] as { name: string }).name];
      let i = 1;
      for (; i < r.head.length; i++) { const h = r.head[i]; if (h.t === 'scalar' && typeof h.v === 'string') path.push(h.v); else break; }
      dyn = r.head.slice(i);
      if (r.kind === 'single' && dyn.length === 0 && r.head.length > 1 && false) { /* noop */ }
    }
    // In v1, `p[x] if ...` without value and kind single => object with value true (ref head)
    const scope: Scope = { vars: new Map() };
    const rule: Rule = { ast: r, file, path, dyn: [], kind: r.kind, args: undefined, key: undefined, value: undefined, body: [], nslots: 0, elseRule: undefined, isDefault: r.isDefault, loc: r.loc };
    // collect head vars: args, dyn, key, value declared implicitly by body
    const preBound: number[] = [];
    if (r.args) {
      const extra: Expr[] = [];
      const args = r.args.map((a) => {
        if (a.t === 'template' || a.t === 'call' || a.t === 'arraycomp' || a.t === 'setcomp' || a.t === 'objcomp') {
          const v: Term = { t: 'var', name: `__arg${extra.length}__`, loc: a.loc };
          extra.push({ k: 'unify', a: v, b: a, loc: a.loc });
          return v;
        }
        return a;
      });
      if (extra.length) r = { ...r, args, body: [...r.body, ...extra] };
      rule.args = r.args!.map((a) => this.declarePattern(a, scope, ctx, preBound));
    }
    if (r.isDefault) {
      if (r.value && this.hasVars(r.value)) this.err('rego_type_error', 'default rule value cannot contain var', r.loc);
    }
    // body
    rule.body = this.compileBody(r.body, scope, ctx, preBound.slice(), false, true);
    rule.dyn = dyn.map((t) => this.compileTerm(t, scope, ctx, true));
    if (r.key) rule.key = this.compileTerm(r.key, scope, ctx, true);
    rule.value = r.value ? this.compileTerm(r.value, scope, ctx, true) : undefined;
    rule.nslots = ctx.nslots;
    if (r.elseRule) {
      const er = this.compileRule(r.elseRule, pkg, imports, file, { path, dyn });
      er.args = undefined;
      rule.elseRule = er;
      // else rule needs own args binding: recompile with args
      if (r.args) {
        const ctx2 = new Ctx(this, pkg, imports, file);
        const sc2: Scope = { vars: new Map() };
        const pb: number[] = [];
        er.args = r.args.map((a) => this.declarePattern(a, sc2, ctx2, pb));
        er.body = this.compileBody(r.elseRule.body, sc2, ctx2, pb.slice(), false, true);
        er.value = r.elseRule.value ? this.compileTerm(r.elseRule.value, sc2, ctx2, true) : undefined;
        er.nslots = ctx2.nslots;
      }
    }
    if (!parentPath) {
      this.rules.push(rule);
      let node = this.root;
      for (const k of path) node = node.child(k);
      if (r.kind === 'func') {
        if (r.isDefault) node.defaultRule = rule; else node.funcs.push(rule);
      } else if (r.isDefault) {
        if (node.defaultRule) this.err('rego_type_error', `multiple default rules data.${path.join('.')} found`, r.loc);
        node.defaultRule = rule;
      } else node.rules.push(rule);
    }
    return rule;
  }

  private hasVars(t: Term): boolean {
    switch (t.t) {
      case 'var': return true;
      case 'ref': return true;
      case 'arraycomp': case 'setcomp': case 'objcomp': return false;
      case 'array': case 'set': return t.items.some((x) => this.hasVars(x));
      case 'object': return t.entries.some(([k, v]) => this.hasVars(k) || this.hasVars(v));
      case 'scalar': return false;
      default: return true;
    }
  }

  private declarePattern(t: Term, scope: Scope, ctx: Ctx, bound: number[]): Term {
    switch (t.t) {
      case 'var': {
        if (t.wildcard) { const s = ctx.newSlot(); bound.push(s); return { ...t, slot: s }; }
        let s = scope.vars.get(t.name);
        if (s === undefined) { s = ctx.newSlot(); scope.vars.set(t.name, s); }
        bound.push(s);
        return { ...t, slot: s };
      }
      case 'array': return { ...t, items: t.items.map((x) => this.declarePattern(x, scope, ctx, bound)) };
      case 'object': return { ...t, entries: t.entries.map(([k, v]) => [this.compileTerm(k, scope, ctx, false), this.declarePattern(v, scope, ctx, bound)] as [Term, Term]) };
      default: return this.compileTerm(t, scope, ctx, false);
    }
  }

  isGlobal(name: string, ctx: Ctx): boolean {
    return name === 'input' || name === 'data' || ctx.imports.has(name) || !!this.pkgRules.get(['data', ...ctx.pkg].join('.'))?.has(name);
  }

  /** collect var names explicitly declared at this body level */
  private declared(body: Expr[], scope: Scope, ctx: Ctx): void {
    const decl = (t: Term) => {
      if (t.t === 'var') { if (!t.wildcard && !scope.vars.has(t.name)) scope.vars.set(t.name, ctx.newSlot()); }
      else if (t.t === 'array') t.items.forEach(decl);
      else if (t.t === 'object') t.entries.forEach(([, v]) => decl(v));
    };
    // `:=` must not redeclare a var, or declare one already used, in the same body (OPA compile errors)
    const assigned = new Set<string>(), used = new Set<string>();
    const names = (t: Term, out: string[]): void => {
      switch (t.t) {
        case 'var': if (!t.wildcard) out.push(t.name); return;
        case 'ref': names(t.head, out); t.path.forEach((p) => names(p, out)); return;
        case 'array': case 'set': t.items.forEach((x) => names(x, out)); return;
        case 'object': t.entries.forEach(([k, v]) => { names(k, out); names(v, out); }); return;
        case 'call': t.args.forEach((x) => names(x, out)); return;
        default: return;
      }
    };
    for (const e of body) {
      if (e.k === 'assign') {
        const lhs: string[] = []; names(e.a, lhs);
        for (const n of lhs) {
          if (assigned.has(n)) this.err('rego_compile_error', `var ${n} assigned above`, e.loc);
          else if (used.has(n) && !this.isGlobal(n, ctx)) this.err('rego_compile_error', `var ${n} referenced above`, e.loc);
          assigned.add(n);
        }
        const rhs: string[] = []; names(e.b, rhs); rhs.forEach((n) => used.add(n));
      } else {
        const all: string[] = [];
        if (e.k === 'term') names(e.term, all);
        else if (e.k === 'unify') { names(e.a, all); names(e.b, all); }
        else if (e.k === 'somein') { if (e.key) names(e.key, all); names(e.val, all); names(e.coll, all); }
        else if (e.k === 'some') e.vars.forEach((v) => { if (v.t === 'var' && !v.wildcard) assigned.add(v.name); });
        else if (e.k === 'every') names(e.coll, all);
        all.forEach((n) => used.add(n));
      }
    }
    for (const e of body) {
      if (e.k === 'some') for (const v of e.vars) decl(v);
      else if (e.k === 'somein') { if (e.key) decl(e.key); decl(e.val); }
      else if (e.k === 'assign') decl(e.a);
    }
    // implicit vars: any var not global and not in any scope
    const visit = (t: Term) => {
      switch (t.t) {
        case 'var':
          if (!t.wildcard && lookup(scope, t.name) === undefined && !this.isGlobal(t.name, ctx)) scope.vars.set(t.name, ctx.newSlot());
          return;
        case 'ref': visit(t.head); t.path.forEach(visit); return;
        case 'array': case 'set': t.items.forEach(visit); return;
        case 'object': t.entries.forEach(([k, v]) => { visit(k); visit(v); }); return;
        case 'call': t.args.forEach(visit); if (t.fn.t === 'ref') t.fn.path.forEach(visit); return;
        case 'template': t.parts.forEach((p) => typeof p !== 'string' && visit(p)); return;
        case 'withterm': visit(t.term); t.withs.forEach((w) => { if (!this.isBuiltinRef(w.value, scope, ctx)) visit(w.value); }); return;
        default: return;
      }
    };
    for (const e of body) {
      if (e.k === 'term') visit(e.term);
      else if (e.k === 'unify' || e.k === 'assign') { visit(e.a); visit(e.b); }
      else if (e.k === 'somein' || e.k === 'every') visit(e.coll);
      if (e.withs) for (const w of e.withs) if (!this.isBuiltinRef(w.value, scope, ctx)) visit(w.value);
    }
  }

  compileBody(body: Expr[], parent: Scope | undefined, ctx: Ctx, bound: number[], isQuery = false, hoist = false): Expr[] {
    const scope: Scope = { vars: new Map(), parent };
    if (parent && !parent.parent && parent.vars.size && !isQuery && bound.length) {
      // function args live in parent scope already
    }
    this.declared(body, scope, ctx);
    const out = body.map((e) => this.compileExpr(e, scope, ctx));
    (out as Expr[] & { scope?: Scope }).scope = scope;
    // hoist scope vars for rule head lookups
    if (parent && hoist) for (const [k, v] of scope.vars) if (!parent.vars.has(k)) parent.vars.set(k, v);
    return this.reorder(out, new Set(bound), scope, ctx);
  }

  private compileExpr(e: Expr, scope: Scope, ctx: Ctx): Expr {
    const withs = e.withs?.map((w) => ({ target: this.compileWithTarget(w.target, ctx), value: this.compileWithValue(w.value, scope, ctx), loc: w.loc }));
    const base = { negated: e.negated, withs, loc: e.loc };
    switch (e.k) {
      case 'term': {
        const t = this.compileTerm(e.term, scope, ctx, false);
        if (t.t === 'call' && t.target !== undefined) {
          const ar = (t.target as { arity: number }).arity;
          if (ar >= 0 && t.args.length === ar + 1) {
            const out = t.args[ar];
            return { k: 'unify', a: { ...t, args: t.args.slice(0, ar) }, b: out, ...base };
          }
        }
        return { k: 'term', term: t, ...base };
      }
      case 'unify': case 'assign': {
        const a = this.compileTerm(e.a, scope, ctx, false);
        const b = this.compileTerm(e.b, scope, ctx, false);
        if (e.k === 'assign' && a.t !== 'var' && a.t !== 'array' && a.t !== 'object') this.err('rego_parse_error', 'cannot assign to ' + (a.t === 'ref' ? 'ref' : a.t), e.loc);
        return { k: e.k, a, b, ...base };
      }
      case 'some': return { k: 'some', vars: e.vars.map((v) => this.compileTerm(v, scope, ctx, false)), ...base };
      case 'somein': return { k: 'somein', key: e.key && this.compileTerm(e.key, scope, ctx, false), val: this.compileTerm(e.val, scope, ctx, false), coll: this.compileTerm(e.coll, scope, ctx, false), ...base };
      case 'block': {
        const inner: Scope = { vars: new Map(), parent: scope };
        const body = this.compileBody(e.body, inner, ctx, this.allSlots(scope), false, true);
        return { k: 'block', body, ...base };
      }
      case 'every': {
        const coll = this.compileTerm(e.coll, scope, ctx, false);
        const inner: Scope = { vars: new Map(), parent: scope };
        const b: number[] = [];
        const key = e.key ? this.declarePattern(e.key, inner, ctx, b) : undefined;
        const val = this.declarePattern(e.val, inner, ctx, b);
        const body = this.compileBody(e.body, inner, ctx, [...b, ...this.allSlots(scope)], false, true);
        return { k: 'every', key, val, coll, body, ...base };
      }
    }
  }

  private allSlots(s: Scope | undefined): number[] {
    const out: number[] = [];
    for (let c = s; c; c = c.parent) for (const v of c.vars.values()) out.push(v);
    return out;
  }

  private isBuiltinRef(t: Term, scope: Scope, ctx: Ctx): boolean {
    const head = t.t === 'ref' ? t.head : t;
    if (head.t !== 'var' || lookup(scope, head.name) !== undefined || this.isGlobal(head.name, ctx)) return false;
    const segs = t.t === 'ref' ? t.path : [];
    if (!segs.every((p) => p.t === 'scalar' && typeof p.v === 'string')) return false;
    return BUILTINS.has([head.name, ...segs.map((p) => String((p as { v: Value }).v))].join('.'));
  }

  private compileWithValue(t: Term, scope: Scope, ctx: Ctx): Term {
    const head = t.t === 'ref' ? t.head : t;
    if (head.t === 'var' && lookup(scope, head.name) === undefined && !this.isGlobal(head.name, ctx)) {
      const segs = t.t === 'ref' ? t.path : [];
      if (segs.every((p) => p.t === 'scalar' && typeof p.v === 'string')) {
        const dotted = [head.name, ...segs.map((p) => String((p as { v: Value }).v))].join('.');
        if (BUILTINS.has(dotted)) return { t: 'var', name: dotted, loc: t.loc };
      }
    }
    return this.compileTerm(t, scope, ctx, false);
  }

  private compileWithTarget(t: Term, ctx: Ctx): Term {
    const head = t.t === 'ref' ? t.head : t;
    const name = (head as { name: string }).name;
    const path = t.t === 'ref' ? t.path : [];
    if (name === 'input' || name === 'data') {
      const segs: string[] = [];
      for (const p of path) { if (p.t !== 'scalar' || typeof p.v !== 'string') { this.err('rego_compile_error', 'with keyword target must be a static ref', t.loc); return t; } segs.push(p.v); }
      return { t: 'ref', head, path, root: name, dataPath: segs, loc: t.loc };
    }
    // function mock target
    const dotted = [name, ...path.map((p) => (p.t === 'scalar' ? String(p.v) : '?'))];
    if (this.isGlobal(name, ctx) && name !== 'input' && name !== 'data') {
      const full = this.globalPath(name, ctx) ?? [];
      return { t: 'ref', head, path, root: 'data', dataPath: [...full, ...dotted.slice(1)], loc: t.loc };
    }
    if (!BUILTINS.has(dotted.join('.'))) this.err('rego_compile_error', `with keyword replacing built-in function: target must not be an unknown function`, t.loc);
    return { t: 'var', name: dotted.join('.'), loc: t.loc, slot: -1 };
  }

  private globalPath(name: string, ctx: Ctx): string[] | undefined {
    const im = ctx.imports.get(name);
    if (im) {
      const h = (im.t === 'ref' ? im.head : im) as { name: string };
      const rest = im.t === 'ref' ? im.path.map((p) => String((p as { v: Value }).v)) : [];
      return h.name === 'data' ? rest : undefined;
    }
    if (this.pkgRules.get(['data', ...ctx.pkg].join('.'))?.has(name)) return [...ctx.pkg, name];
    return undefined;
  }

  compileTerm(t: Term, scope: Scope, ctx: Ctx, headMode: boolean): Term {
    switch (t.t) {
      case 'scalar': return t;
      case 'var': {
        if (t.wildcard) return { ...t, slot: ctx.newSlot() };
        const s = lookup(scope, t.name);
        if (s !== undefined) return { ...t, slot: s };
        if (t.name === 'input') return { t: 'ref', head: t, path: [], root: 'input', loc: t.loc };
        if (t.name === 'data') return { t: 'ref', head: t, path: [], root: 'data', dataPath: [], loc: t.loc };
        const im = ctx.imports.get(t.name);
        if (im) return this.compileTerm(im, { vars: new Map() }, ctx, headMode);
        const gp = this.globalPath(t.name, ctx);
        if (gp) return { t: 'ref', head: { t: 'var', name: 'data', loc: t.loc }, path: gp.map((v) => ({ t: 'scalar', v, loc: t.loc })), root: 'data', loc: t.loc };
        if (headMode) { this.err('rego_unsafe_var_error', `var ${t.name} is unsafe`, t.loc); return t; }
        // undeclared: declare in current scope
        const ns = ctx.newSlot(); scope.vars.set(t.name, ns);
        return { ...t, slot: ns };
      }
      case 'ref': {
        const head = this.compileTerm(t.head, scope, ctx, headMode);
        const path = t.path.map((p) => this.compileTerm(p, scope, ctx, headMode));
        if (head.t === 'ref' && head.root) return { t: 'ref', head: head.head, path: [...head.path, ...path], root: head.root, loc: t.loc };
        if (head.t === 'ref') return { t: 'ref', head: head.head, path: [...head.path, ...path], loc: t.loc };
        return { t: 'ref', head, path, loc: t.loc };
      }
      case 'array': return { ...t, items: t.items.map((x) => this.compileTerm(x, scope, ctx, headMode)) };
      case 'set': return { ...t, items: t.items.map((x) => this.compileTerm(x, scope, ctx, headMode)) };
      case 'object': return { ...t, entries: t.entries.map(([k, v]) => [this.compileTerm(k, scope, ctx, headMode), this.compileTerm(v, scope, ctx, headMode)] as [Term, Term]) };
      case 'template': return { ...t, parts: t.parts.map((p) => (typeof p === 'string' ? p : this.compileTerm(p, scope, ctx, headMode))) };
      case 'withterm': return { ...t, term: this.compileTerm(t.term, scope, ctx, headMode), withs: t.withs.map((w) => ({ target: this.compileWithTarget(w.target, ctx), value: this.compileWithValue(w.value, scope, ctx), loc: w.loc })) };
      case 'arraycomp': case 'setcomp': {
        const inner: Scope = { vars: new Map(), parent: scope };
        const body = this.compileBody(t.body, inner, ctx, this.allSlots(scope), false, true);
        const head = this.compileTerm(t.head, inner, ctx, true);
        return { ...t, head, body };
      }
      case 'objcomp': {
        const inner: Scope = { vars: new Map(), parent: scope };
        const body = this.compileBody(t.body, inner, ctx, this.allSlots(scope), false, true);
        return { ...t, key: this.compileTerm(t.key, inner, ctx, true), value: this.compileTerm(t.value, inner, ctx, true), body };
      }
      case 'call': {
        const args = t.args.map((a) => this.compileTerm(a, scope, ctx, headMode));
        const fn = t.fn;
        const head = fn.t === 'ref' ? fn.head : fn;
        const hname = (head as { name: string }).name;
        const segs: string[] = [];
        if (fn.t === 'ref') for (const p of fn.path) { if (p.t === 'scalar' && typeof p.v === 'string') segs.push(p.v); else { this.err('rego_type_error', 'invalid function reference', t.loc); return t; } }
        if (head.t !== 'var') { this.err('rego_type_error', 'invalid function reference', t.loc); return t; }
        if (lookup(scope, hname) !== undefined && hname !== 'data') { this.err('rego_type_error', `undefined function ${[hname, ...segs].join('.')}`, t.loc); return t; }
        let dpath: string[] | undefined;
        if (hname === 'data') dpath = segs;
        else { const gp = this.globalPath(hname, ctx); if (gp) dpath = [...gp, ...segs]; }
        const name = [hname, ...segs].join('.');
        if (dpath) {
          return { t: 'call', fn: t.fn, args, loc: t.loc, name: 'data.' + dpath.join('.'), target: { kind: 'user', path: dpath, arity: this.funcArity(dpath) }, op: t.op };
        }
        const bi = BUILTINS.get(name);
        if (!bi) { this.err('rego_type_error', `undefined function ${name}`, t.loc); return t; }
        if (args.length !== bi.arity && args.length !== bi.arity + 1 && bi.arity >= 0) {
          this.err('rego_type_error', `${name}: arity mismatch\n\thave: (${args.map(() => 'any').join(', ')})\n\twant: (${Array(bi.arity).fill('any').join(', ')})`, t.loc);
        }
        return { t: 'call', fn: t.fn, args, loc: t.loc, name, target: bi, op: t.op };
      }
    }
  }

  funcArity(path: string[]): number {
    // resolved lazily: modules may define the function later; find in AST
    let n: Node | undefined = this.root;
    for (const k of path) { n = n?.children.get(k); }
    if (n && n.funcs.length) return n.funcs[0].args!.length;
    return this.pendingArity.get(path.join('.')) ?? -1;
  }
  pendingArity = new Map<string, number>();

  // ---------------- safety reordering ----------------
  private termVars(t: Term, needs: Set<number>, provides: Set<number>, outPos: boolean): void {
    switch (t.t) {
      case 'var': if (t.slot !== undefined && t.slot >= 0) (outPos ? provides : needs).add(t.slot); return;
      case 'ref':
        if (!t.root) this.termVars(t.head, needs, provides, false);
        for (const p of t.path) this.termVars(p, needs, provides, true);
        return;
      case 'array': case 'set': for (const x of t.items) this.termVars(x, needs, provides, outPos && t.t === 'array'); return;
      case 'object': for (const [k, v] of t.entries) { this.termVars(k, needs, provides, false); this.termVars(v, needs, provides, outPos); } return;
      case 'call': for (const a of t.args) this.termVars(a, needs, provides, false); return;
      case 'template': for (const p of t.parts) if (typeof p !== 'string') this.termVars(p, needs, provides, false); return;
      case 'withterm': this.termVars(t.term, needs, provides, false); for (const w of t.withs) this.termVars(w.value, needs, provides, false); return;
      case 'arraycomp': case 'setcomp': case 'objcomp': {
        const inner = new Set<number>(); const ip = new Set<number>();
        const bodyVars = (body: Expr[]) => { for (const e of body) this.exprVars(e, inner, ip); };
        bodyVars(t.body);
        if (t.t === 'objcomp') { this.termVars(t.key, inner, ip, false); this.termVars(t.value, inner, ip, false); } else this.termVars(t.head, inner, ip, false);
        for (const v of inner) if (!ip.has(v)) needs.add(v);
        return;
      }
      default: return;
    }
  }

  private exprVars(e: Expr, needs: Set<number>, provides: Set<number>): void {
    const n2 = new Set<number>(), p2 = new Set<number>();
    switch (e.k) {
      case 'term': this.termVars(e.term, n2, p2, false); break;
      case 'unify': case 'assign': this.termVars(e.a, n2, p2, true); this.termVars(e.b, n2, p2, true); break;
      case 'some': break;
      case 'somein': if (e.key) this.termVars(e.key, n2, p2, true); this.termVars(e.val, n2, p2, true); this.termVars(e.coll, n2, p2, false); break;
      case 'block': {
        const inner = new Set<number>(), ip = new Set<number>();
        for (const x of e.body) this.exprVars(x, inner, ip);
        for (const v of inner) if (!ip.has(v)) n2.add(v);
        for (const v of ip) n2.add(v);
        break;
      }
      case 'every': {
        this.termVars(e.coll, n2, p2, false);
        const inner = new Set<number>(), ip = new Set<number>();
        if (e.key) this.termVars(e.key, inner, ip, true);
        this.termVars(e.val, inner, ip, true);
        for (const x of e.body) this.exprVars(x, inner, ip);
        for (const v of inner) if (!ip.has(v)) n2.add(v);
        break;
      }
    }
    if (e.withs) for (const w of e.withs) this.termVars(w.value, n2, p2, false);
    if (e.negated) { for (const v of p2) n2.add(v); p2.clear(); }
    for (const v of n2) needs.add(v);
    for (const v of p2) provides.add(v);
  }

  private reorder(body: Expr[], bound: Set<number>, scope: Scope, ctx: Ctx): Expr[] {
    if (body.length <= 1 && body.every((e) => e.k !== 'term' || true)) {
      // still check safety for single expression
    }
    const local = new Set(scope.vars.values());
    const info = body.map((e) => { const n = new Set<number>(), p = new Set<number>(); this.exprVars(e, n, p); return { e, n, p }; });
    const out: Expr[] = [];
    const b = new Set(bound);
    const remaining = info.slice();
    while (remaining.length) {
      let idx = remaining.findIndex((x) => [...x.n].every((v) => b.has(v) || x.p.has(v) || !local.has(v)));
      if (idx < 0) {
        const x = remaining[0];
        const v = [...x.n].find((s) => !b.has(s))!;
        const name = this.slotName(v, scope) ?? `${v}`;
        this.err('rego_unsafe_var_error', `var ${name} is unsafe`, x.e.loc);
        idx = 0;
      }
      const x = remaining.splice(idx, 1)[0];
      out.push(x.e);
      for (const v of x.p) b.add(v);
      for (const v of x.n) b.add(v);
    }
    void ctx;
    return out;
  }

  private slotName(v: number, scope: Scope): string | undefined {
    for (let c: Scope | undefined = scope; c; c = c.parent) for (const [k, s] of c.vars) if (s === v) return k;
    return undefined;
  }

  compileQuery(body: Expr[], pkg: string[] = []): CompiledQuery {
    const ctx = new Ctx(this, pkg, new Map(), 'query');
    const scope: Scope = { vars: new Map() };
    const compiled = this.compileBody(body, scope, ctx, [], true, true);
    const vars: [string, number][] = [];
    for (const [k, v] of scope.vars) if (!k.startsWith('__')) vars.push([k, v]);
    return { body: shapeBody(compiled), nslots: ctx.nslots, vars };
  }

  /** pre-pass so funcArity works before all rules are compiled */
  collectArities(mods: ModuleAST[]): void {
    for (const m of mods) for (const r of m.rules) if (r.kind === 'func') {
      const path = [...m.pkg, (r.head[0] as { name: string }).name];
      for (const h of r.head.slice(1)) if (h.t === 'scalar') path.push(String(h.v));
      this.pendingArity.set(path.join('.'), r.args!.length);
    }
  }
}

function shapeRule(r: Rule): void {
  r.body = shapeBody(r.body);
  r.dyn = r.dyn.map(shapeTerm);
  if (r.args) r.args = r.args.map(shapeTerm);
  if (r.key) r.key = shapeTerm(r.key);
  if (r.value) r.value = shapeTerm(r.value);
}

