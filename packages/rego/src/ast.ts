/**
 * The syntax tree shared by the parser, the compiler and the evaluator (there is no separate IR): `Term`
 * (scalars, vars, refs, collections, comprehensions, calls, string templates, terms with `with`), `Expr`
 * (one body literal, possibly negated and with `with` modifiers), `RuleAST`, `ImportAST`, `ModuleAST`, and
 * `Loc` (file, row, col) on every node. The optional fields (`slot`, `root`, `dataPath`, `name`, `target`)
 * are filled in by the compiler.
 */
import type { Value } from './value.js';

export interface Loc { file: string; row: number; col: number }

export type Term =
  | { t: 'scalar'; v: Value; loc: Loc }
  | { t: 'var'; name: string; loc: Loc; slot?: number; wildcard?: boolean }
  | { t: 'ref'; head: Term; path: Term[]; loc: Loc; root?: 'data' | 'input'; dataPath?: string[] }
  | { t: 'array'; items: Term[]; loc: Loc }
  | { t: 'object'; entries: [Term, Term][]; loc: Loc }
  | { t: 'set'; items: Term[]; loc: Loc }
  | { t: 'arraycomp'; head: Term; body: Expr[]; loc: Loc }
  | { t: 'setcomp'; head: Term; body: Expr[]; loc: Loc }
  | { t: 'objcomp'; key: Term; value: Term; body: Expr[]; loc: Loc }
  | { t: 'call'; fn: Term; args: Term[]; loc: Loc; name?: string; op?: string; target?: unknown }
  | { t: 'template'; parts: (string | Term)[]; loc: Loc }
  | { t: 'withterm'; term: Term; withs: With[]; loc: Loc };

export interface With { target: Term; value: Term; loc: Loc }

export type Expr = (
  | { k: 'term'; term: Term }
  | { k: 'unify'; a: Term; b: Term }
  | { k: 'assign'; a: Term; b: Term }
  | { k: 'some'; vars: Term[] }
  | { k: 'somein'; key?: Term; val: Term; coll: Term }
  | { k: 'every'; key?: Term; val: Term; coll: Term; body: Expr[] }
  | { k: 'block'; body: Expr[] }
) & { negated?: boolean; withs?: With[]; loc: Loc };

export interface RuleAST {
  isDefault: boolean;
  head: Term[]; // first: var term (name), rest: path terms
  kind: 'single' | 'multi' | 'func';
  args?: Term[];
  key?: Term; // contains term
  value?: Term;
  assign: boolean;
  body: Expr[];
  elseRule?: RuleAST;
  loc: Loc;
  bodyLess?: boolean;
}

export interface ImportAST { path: Term; alias?: string; loc: Loc }
export interface ModuleAST { file: string; pkg: string[]; pkgLoc: Loc; imports: ImportAST[]; rules: RuleAST[] }
