/**
 * Public API of @agw/rego: `compile(modules)` parses and compiles Rego v1 modules once into a
 * `PreparedPolicy` (`evaluate` a document path to plain JSON, `query` like `opa eval`, `inputPaths` /
 * `readsInput` for the input paths the rules can read); `parseValue` reads a Rego term given as text.
 * Parse and compile errors surface as one `RegoCompileError` listing them all (also for a bad query text
 * and for a policy nested too deeply for the stack); evaluation errors are `RegoError`s: conflicts at
 * once, builtin errors only with `strictBuiltinErrors` (the first, after the evaluation). The converted
 * `data` document is cached per object: callers pass one object per data version and never mutate it.
 */
import type { Expr, ModuleAST, Term } from './ast.js';
import { Compiler, type CompiledQuery } from './compiler.js';
import { RegoCompileError, RegoError, type RegoLocation } from './errors.js';
import { EvalCtx, Evaluator } from './evaluator.js';
import { parseModule, parseQuery, parseTerm } from './parser.js';
import { fromJS, fromJSLazy, toJS, type Value } from './value.js';
import { walkRules } from './walk.js';

export { RegoError, RegoCompileError } from './errors.js';
export type { RegoLocation } from './errors.js';
export { fromJS, toJS } from './value.js';
export type { Value } from './value.js';
export { runTests, formatResults } from './testing.js';
export type { TestResult, TestRun } from './testing.js';

export interface RegoModule { name: string; source: string }

export interface EvalOptions {
  input?: unknown;
  data?: unknown;
  /** fixed clock for time.now_ns() (nanoseconds since the epoch) */
  nowNs?: bigint;
  strictBuiltinErrors?: boolean;
  /** records coverage (policy tests): the body expressions evaluated and the rules that produced a value; evaluation then skips the cache shared across evaluations */
  coverage?: { exprs: Set<unknown>; rules: Set<unknown> };
}

export interface PreparedPolicy {
  /** packages of the compiled modules, e.g. ['agw.general'] */
  readonly packages: string[];
  /** Value of a rule/document path such as 'data.agw.general.decision' as plain JSON (sets -> arrays in OPA order, objects with non-string keys -> Map); undefined when the document is undefined. */
  evaluate(path: string, options?: EvalOptions): unknown;
  /** Full query like OPA's `opa eval`: result set, one object per solution mapping query vars to values. */
  query(query: string, options?: EvalOptions): Array<Record<string, unknown>>;
  /** Every input path the policy can read, as dotted strings with the `input.` prefix dropped; a dynamic ref `input[x]` or whole `input` yields the longest static prefix ('' for whole input). */
  inputPaths(): string[];
  /** true when any rule may read input.<prefix> (or a parent/child of it). */
  readsInput(prefix: string): boolean;
}

const dataCache = new WeakMap<object, Value>();
function convertData(d: unknown): Value {
  if (d === undefined || d === null) return fromJS({});
  if (typeof d === 'object') {
    const c = dataCache.get(d as object);
    if (c !== undefined) return c;
    const v = fromJS(d);
    dataCache.set(d as object, v);
    return v;
  }
  return fromJS(d);
}

function nowNs(): bigint {
  return BigInt(Date.now()) * 1000000n;
}

class Prepared implements PreparedPolicy {
  readonly packages: string[];
  private queryCache = new Map<string, CompiledQuery>();
  private pathCache = new Map<string, Term[]>();
  private _inputPaths?: string[];

  constructor(private compiler: Compiler) {
    this.packages = compiler.packages.map((p) => p.replace(/^data\./, ''));
  }

  private ctx(options: EvalOptions | undefined, inputValue?: Value): EvalCtx {
    const input = inputValue !== undefined ? inputValue : options?.input === undefined ? undefined : fromJSLazy(options.input);
    const c = new EvalCtx(this.compiler.root, input, convertData(options?.data), options?.nowNs ?? nowNs(), !!options?.strictBuiltinErrors);
    if (options?.coverage) c.cover = options.coverage;
    else if (options?.data !== null && typeof options?.data === 'object') c.useSharedCache();
    return c;
  }

  evaluate(path: string, options?: EvalOptions): unknown {
    const v = this.evaluateValue(path, options);
    return v === undefined ? undefined : toJS(v);
  }

  /** like evaluate, but returns the Rego value (RSet/RObject) without conversion */
  evaluateValue(path: string, options?: EvalOptions): Value | undefined {
    let terms = this.pathCache.get(path);
    if (!terms) {
      const segs = path.split('.');
      if (segs[0] === 'data') segs.shift();
      const loc = { file: 'path', row: 1, col: 1 };
      terms = segs.filter((s) => s !== '').map((s) => ({ t: 'scalar', v: s, loc }) as Term);
      this.pathCache.set(path, terms);
    }
    const ctx = this.ctx(options);
    const ev = new Evaluator(ctx);
    let out: Value | undefined;
    ev.resolveData(ctx.root, ctx.data, terms, 0, [], ctx, (v) => { out = v; return true; });
    if (ctx.errs.length) throw ctx.errs[0];
    return out;
  }

  query(q: string, options?: EvalOptions, inputValue?: Value): Array<Record<string, unknown>> {
    let cq = this.queryCache.get(q);
    if (!cq) {
      let body: Expr[];
      try { body = parseQuery(q, 'query'); } catch (e) { if (e instanceof RegoError) throw new RegoCompileError([{ code: e.code, message: e.message, location: e.location }]); throw e; }
      const c = this.compiler;
      const before = c.errors.length;
      cq = c.compileQuery(body);
      if (c.errors.length > before) { const errs = c.errors.splice(before); throw new RegoCompileError(errs.map((e) => ({ code: e.code, message: e.message, location: e.location }))); }
      this.queryCache.set(q, cq);
    }
    const ctx = this.ctx(options, inputValue);
    const ev = new Evaluator(ctx);
    const frame: (Value | undefined)[] = new Array(cq.nslots);
    const rows: Array<Record<string, unknown>> = [];
    const vars = cq.vars;
    ev.evalBody(cq.body, 0, frame, ctx, () => {
      const row: Record<string, unknown> = {};
      for (const [name, slot] of vars) { const v = frame[slot]; if (v !== undefined) row[name] = toJS(v); }
      rows.push(row);
      return false;
    });
    if (ctx.errs.length) { const e = ctx.errs[0]; e.results = rows; throw e; }
    return rows;
  }

  /** every compiled rule (else chains not flattened), with its location and body: for coverage reports */
  compiledRules(): ReadonlyArray<{ file: string; loc: { row: number }; body: ReadonlyArray<{ loc: { file: string; row: number } }>; elseRule?: unknown; path: string[]; kind: string }> {
    return this.compiler.rules;
  }

  inputPaths(): string[] {
    if (!this._inputPaths) {
      const out = new Set<string>();
      walkRules(this.compiler.rules, {
        term: (t) => {
          if (t.t !== 'ref' || t.root !== 'input') return;
          const segs: string[] = [];
          for (const p of t.path) { if (p.t === 'scalar' && (typeof p.v === 'string' || typeof p.v === 'number')) segs.push(String(p.v)); else break; }
          out.add(segs.join('.'));
        },
      });
      this._inputPaths = [...out].sort();
    }
    return this._inputPaths.slice();
  }

  readsInput(prefix: string): boolean {
    const p = prefix.replace(/^input\.?/, '');
    for (const x of this.inputPaths()) {
      if (x === '' || p === '' || x === p || x.startsWith(p + '.') || p.startsWith(x + '.')) return true;
    }
    return false;
  }
}

/** Parse and compile a set of Rego modules into a prepared policy. Throws RegoCompileError. */
export function compile(modules: RegoModule[]): PreparedPolicy & { compiledRules: Prepared['compiledRules']; evaluateValue(path: string, options?: EvalOptions): Value | undefined; query(q: string, options?: EvalOptions, inputValue?: Value): Array<Record<string, unknown>> } {
  try {
    return compileModules(modules);
  } catch (e) {
    // The parser and the compiler recurse over the syntax tree: a hostile policy (thousands of nested
    // brackets, a chain of thousands of rules or operators) exhausts the stack. That is the policy's
    // fault, so it is a compile error like any other, never an internal error.
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw new RegoCompileError([{ code: 'rego_compile_error', message: 'the policy nests too deeply (brackets, operators or rule references thousands of levels deep): simplify it', location: modules[0] ? { file: modules[0].name, row: 1, col: 1 } : undefined }]);
    }
    throw e;
  }
}

function compileModules(modules: RegoModule[]): ReturnType<typeof compile> {
  const errors: Array<{ code: string; message: string; location?: RegoLocation }> = [];
  const asts: ModuleAST[] = [];
  for (const m of modules) {
    try { asts.push(parseModule(m.source, m.name)); } catch (e) {
      if (e instanceof RegoError) errors.push({ code: e.code, message: e.message, location: e.location }); else throw e;
    }
  }
  if (errors.length) throw new RegoCompileError(errors);
  const c = new Compiler();
  c.collectArities(asts);
  c.compileModules(asts);
  if (c.errors.length) throw new RegoCompileError(c.errors.map((e) => ({ code: e.code, message: e.message, location: e.location })));
  return new Prepared(c);
}

/** Parse a Rego term (e.g. an input given as Rego text with sets) into a value */
export function parseValue(text: string): Value {
  const t = parseTerm(text, 'input');
  const c = new Compiler();
  const q = c.compileQuery([{ k: 'term', term: t, loc: t.loc }]);
  const ctx = new EvalCtx(c.root, undefined, fromJS({}), 0n, true);
  const ev = new Evaluator(ctx);
  let out: Value | undefined;
  const e = q.body[0];
  if (e.k === 'term') ev.evalTerm(e.term, new Array(q.nslots), ctx, (v) => { out = v; return true; });
  if (out === undefined) throw new RegoError('rego_parse_error', 'invalid term');
  return out;
}
