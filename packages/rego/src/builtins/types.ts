/**
 * The contract between the evaluator and the builtins: `BuiltinDef` (name, arity with -1 for any,
 * `fn(args, ctx)`, and `multi` for a builtin whose array result is enumerated as several values),
 * `BuiltinCtx` (clock, strict mode, a cache per evaluation), `Reg`, through which each builtin module
 * registers, and operand helpers (`str`, `num`, `int`, `arr`, `set`, `obj`, ...) that throw OPA's operand
 * type errors. A builtin fails by throwing a `BuiltinError` (`typeErr`: `eval_type_error`, `builtinErr`:
 * `eval_builtin_error`): the call becomes undefined, the error is kept only in strict mode, and one marked
 * `always` is raised at once. Returning `undefined` makes the call undefined without an error.
 */
import { RObject, RSet, typeName, type Value } from '../value.js';

export interface BuiltinCtx { nowNs: bigint; strict: boolean; builtinCache: Map<string, unknown> }

export interface BuiltinDef {
  name: string;
  arity: number;
  fn: (args: Value[], ctx: BuiltinCtx) => Value | Value[] | undefined;
  multi?: boolean;
}

export class BuiltinError extends Error {
  constructor(public code: string, message: string, public always = false) { super(message); }
}

export function typeErr(name: string, i: number, want: string, got: Value): BuiltinError {
  return new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be ${want} but got ${typeName(got)}`);
}
export function builtinErr(name: string, msg: string): BuiltinError {
  return new BuiltinError('eval_builtin_error', `${name}: ${msg}`);
}

export function str(name: string, a: Value[], i: number): string {
  const v = a[i]; if (typeof v !== 'string') throw typeErr(name, i, 'string', v); return v;
}
export function num(name: string, a: Value[], i: number): number | bigint {
  const v = a[i]; if (typeof v !== 'number' && typeof v !== 'bigint') throw typeErr(name, i, 'number', v); return v;
}
export function int(name: string, a: Value[], i: number): number {
  const v = num(name, a, i);
  if (typeof v === 'bigint') return Number(v);
  if (!Number.isInteger(v)) throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be integer number but got floating-point number`);
  return v;
}
export function bigint(name: string, a: Value[], i: number): bigint {
  const v = num(name, a, i);
  if (typeof v === 'bigint') return v;
  if (!Number.isInteger(v)) throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be integer number but got floating-point number`);
  return BigInt(v);
}
export function arr(name: string, a: Value[], i: number): Value[] {
  const v = a[i]; if (!Array.isArray(v)) throw typeErr(name, i, 'array', v); return v;
}
export function set(name: string, a: Value[], i: number): RSet {
  const v = a[i]; if (!(v instanceof RSet)) throw typeErr(name, i, 'set', v); return v;
}
export function obj(name: string, a: Value[], i: number): RObject {
  const v = a[i]; if (!(v instanceof RObject)) throw typeErr(name, i, 'object', v); return v;
}
export function bool(name: string, a: Value[], i: number): boolean {
  const v = a[i]; if (typeof v !== 'boolean') throw typeErr(name, i, 'boolean', v); return v;
}
export function oneOf(name: string, a: Value[], i: number, types: string[]): void {
  const t = typeName(a[i]);
  if (!types.includes(t)) throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be one of {${types.join(', ')}} but got ${t}`);
}
/** collection elements (array or set) */
export function elems(v: Value): Value[] { return Array.isArray(v) ? v : v instanceof RSet ? [...v.values()] : []; }

export type Reg = (name: string, arity: number, fn: BuiltinDef['fn'], multi?: boolean) => void;
