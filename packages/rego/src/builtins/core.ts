/**
 * Core builtins: comparison and membership (`equal`, `lt`, ..., `internal.member_2/3` behind `in`),
 * arithmetic with exact integers (`add`, `sub`, `mul` are exported; integers past 2^53 become `bigint`),
 * `numbers.range(_step)`, set operators (`|`, `&`, `-`), aggregates, arrays, type tests and casts,
 * `to_number` and `bits.*`. Also the stand-ins: `print` and `trace` succeed and do nothing, `opa.runtime`
 * is an empty object, and `http.send` / `io.jwt.decode_verify` always fail as builtin errors so that
 * tests can replace them with `with`.
 */
import { RObject, RSet, compare, compareNum, equal, isInt, keyOf, normBig, numText, typeName, type Value } from '../value.js';
import { BuiltinError, arr, builtinErr, elems, int, num, obj, oneOf, set, str, typeErr, type Reg } from './types.js';

const toBig = (v: number | bigint): bigint => (typeof v === 'bigint' ? v : BigInt(v));

export function add(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r) || !Number.isInteger(a) || !Number.isInteger(b)) return r;
  }
  if (isInt(a) && isInt(b)) return normBig(toBig(a) + toBig(b));
  return Number(a) + Number(b);
}
export function sub(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof b === 'bigint') return add(a, -b);
  return add(a, -b);
}
export function mul(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b;
    if (Number.isSafeInteger(r) || !Number.isInteger(a) || !Number.isInteger(b)) return r === 0 ? 0 : r;
  }
  if (isInt(a) && isInt(b)) return normBig(toBig(a) * toBig(b));
  return Number(a) * Number(b);
}

function numOrSet(name: string, args: Value[]): 'num' | 'set' {
  const [a, b] = args;
  if ((typeof a === 'number' || typeof a === 'bigint')) {
    if (typeof b === 'number' || typeof b === 'bigint') return 'num';
    throw typeErr(name, 1, 'number', b);
  }
  if (a instanceof RSet) { if (b instanceof RSet) return 'set'; throw typeErr(name, 1, 'set', b); }
  throw new BuiltinError('eval_type_error', `${name}: operand 1 must be one of {number, set} but got ${typeName(a)}`);
}

export function register(reg: Reg): void {
  // comparison
  reg('equal', 2, ([a, b]) => equal(a, b));
  reg('neq', 2, ([a, b]) => !equal(a, b));
  reg('lt', 2, ([a, b]) => compare(a, b) < 0);
  reg('lte', 2, ([a, b]) => compare(a, b) <= 0);
  reg('gt', 2, ([a, b]) => compare(a, b) > 0);
  reg('gte', 2, ([a, b]) => compare(a, b) >= 0);
  reg('internal.member_2', 2, ([x, c]) => {
    if (Array.isArray(c)) { for (const e of c) if (equal(e, x)) return true; return false; }
    if (c instanceof RSet) return c.has(x);
    if (c instanceof RObject) { for (const [, v] of c.entries()) if (equal(v, x)) return true; return false; }
    return false;
  });
  reg('internal.member_3', 3, ([k, x, c]) => {
    if (Array.isArray(c)) { return typeof k === 'number' && Number.isInteger(k) && k >= 0 && k < c.length && equal(c[k], x); }
    if (c instanceof RSet) return c.has(x) && equal(k, x);
    if (c instanceof RObject) { const v = c.get(k); return v !== undefined && equal(v, x); }
    return false;
  });

  // arithmetic
  reg('plus', 2, (a) => add(num('plus', a, 0), num('plus', a, 1)));
  reg('minus', 2, (a) => {
    if (numOrSet('minus', a) === 'num') return sub(a[0] as number, a[1] as number);
    const s = new RSet(); const b = a[1] as RSet; for (const x of (a[0] as RSet).values()) if (!b.has(x)) s.add(x); return s;
  });
  reg('mul', 2, (a) => mul(num('mul', a, 0), num('mul', a, 1)));
  reg('div', 2, (a) => {
    const x = num('div', a, 0), y = num('div', a, 1);
    if (Number(y) === 0 && (typeof y === 'number' || y === 0n)) throw builtinErr('div', 'divide by zero');
    if (isInt(x) && isInt(y)) { const bx = toBig(x), by = toBig(y); if (bx % by === 0n) return normBig(bx / by); }
    return Number(x) / Number(y);
  });
  reg('rem', 2, (a) => {
    const x = num('rem', a, 0), y = num('rem', a, 1);
    if (!isInt(x) || !isInt(y)) throw builtinErr('rem', 'modulo on floating-point number');
    if (toBig(y) === 0n) throw builtinErr('rem', 'modulo by zero');
    return normBig(toBig(x) % toBig(y));
  });
  reg('abs', 1, (a) => { const x = num('abs', a, 0); return typeof x === 'bigint' ? (x < 0n ? -x : x) : Math.abs(x); });
  reg('round', 1, (a) => { const x = num('round', a, 0); if (typeof x === 'bigint') return x; const r = Math.sign(x) * Math.round(Math.abs(x)); return r === 0 ? 0 : r; });
  reg('ceil', 1, (a) => { const x = num('ceil', a, 0); if (typeof x === 'bigint') return x; const r = Math.ceil(x); return r === 0 ? 0 : r; });
  reg('floor', 1, (a) => { const x = num('floor', a, 0); return typeof x === 'bigint' ? x : Math.floor(x); });
  const range = (name: string, a: Value[], stepV?: Value) => {
    const x = num(name, a, 0), y = num(name, a, 1);
    if (!isInt(x)) throw new BuiltinError('eval_type_error', `${name}: operand 1 must be integer number but got floating-point number`);
    if (!isInt(y)) throw new BuiltinError('eval_type_error', `${name}: operand 2 must be integer number but got floating-point number`);
    let step = 1n;
    if (stepV !== undefined) {
      const s = num(name, a, 2);
      if (!isInt(s)) throw builtinErr(name, 'operand 3 must be integer number but got floating-point number');
      step = toBig(s);
      if (step <= 0n) throw builtinErr(name, 'step must be a positive integer');
    }
    const bx = toBig(x), by = toBig(y);
    const out: Value[] = [];
    if (bx <= by) for (let i = bx; i <= by; i += step) out.push(normBig(i));
    else for (let i = bx; i >= by; i -= step) out.push(normBig(i));
    return out;
  };
  reg('numbers.range', 2, (a) => range('numbers.range', a));
  reg('numbers.range_step', 3, (a) => range('numbers.range_step', a, a[2]));

  // sets
  reg('or', 2, (a) => { const x = set('or', a, 0), y = set('or', a, 1); const s = new RSet(x.values()); for (const v of y.values()) s.add(v); return s; });
  reg('and', 2, (a) => { const x = set('and', a, 0), y = set('and', a, 1); const s = new RSet(); for (const v of x.values()) if (y.has(v)) s.add(v); return s; });
  reg('intersection', 1, (a) => {
    const xs = set('intersection', a, 0); let r: RSet | undefined;
    for (const s of xs.values()) { if (!(s instanceof RSet)) throw new BuiltinError('eval_type_error', 'intersection: operand 1 must be set of sets but got set containing ' + typeName(s)); if (!r) r = new RSet(s.values()); else { const n = new RSet(); for (const v of r.values()) if (s.has(v)) n.add(v); r = n; } }
    return r ?? new RSet();
  });
  reg('union', 1, (a) => {
    const xs = set('union', a, 0); const r = new RSet();
    for (const s of xs.values()) { if (!(s instanceof RSet)) throw new BuiltinError('eval_type_error', 'union: operand 1 must be set of sets but got set containing ' + typeName(s)); for (const v of s.values()) r.add(v); }
    return r;
  });

  // aggregates
  reg('count', 1, (a) => {
    const v = a[0];
    if (typeof v === 'string') return [...v].length;
    if (Array.isArray(v)) return v.length;
    if (v instanceof RSet || v instanceof RObject) return v.size;
    throw new BuiltinError('eval_type_error', `count: operand 1 must be one of {array, object, set, string} but got ${typeName(v)}`);
  });
  const numColl = (name: string, a: Value[]): (number | bigint)[] => {
    const v = a[0];
    if (!Array.isArray(v) && !(v instanceof RSet)) throw new BuiltinError('eval_type_error', `${name}: operand 1 must be one of {array, set} but got ${typeName(v)}`);
    const xs = elems(v);
    for (const x of xs) if (typeof x !== 'number' && typeof x !== 'bigint') throw new BuiltinError('eval_type_error', `${name}: operand 1 must be array of numbers but got ${Array.isArray(v) ? 'array' : 'set'} containing ${typeName(x)}`);
    return xs as (number | bigint)[];
  };
  reg('sum', 1, (a) => { let s: number | bigint = 0; for (const x of numColl('sum', a)) s = add(s, x); return s; });
  reg('product', 1, (a) => { let s: number | bigint = 1; for (const x of numColl('product', a)) s = mul(s, x); return s; });
  const coll = (name: string, a: Value[]) => { const v = a[0]; if (!Array.isArray(v) && !(v instanceof RSet)) throw new BuiltinError('eval_type_error', `${name}: operand 1 must be one of {array, set} but got ${typeName(v)}`); return elems(v); };
  reg('max', 1, (a) => { const xs = coll('max', a); if (!xs.length) return undefined; let m = xs[0]; for (const x of xs) if (compare(x, m) > 0) m = x; return m; });
  reg('min', 1, (a) => { const xs = coll('min', a); if (!xs.length) return undefined; let m = xs[0]; for (const x of xs) if (compare(x, m) < 0) m = x; return m; });
  reg('sort', 1, (a) => coll('sort', a).slice().sort(compare));
  reg('all', 1, (a) => coll('all', a).every((x) => x === true));
  reg('any', 1, (a) => coll('any', a).some((x) => x === true));

  // arrays
  reg('array.concat', 2, (a) => [...arr('array.concat', a, 0), ...arr('array.concat', a, 1)]);
  reg('array.slice', 3, (a) => {
    const xs = arr('array.slice', a, 0); let s = int('array.slice', a, 1), e = int('array.slice', a, 2);
    if (s < 0) s = 0; if (e > xs.length) e = xs.length; if (s >= e) return [];
    return xs.slice(s, e);
  });
  reg('array.reverse', 1, (a) => arr('array.reverse', a, 0).slice().reverse());
  reg('array.flatten', 1, (a) => { const out: Value[] = []; for (const x of arr('array.flatten', a, 0)) if (Array.isArray(x)) out.push(...x); else out.push(x); return out; });

  // types
  reg('is_number', 1, ([v]) => (typeof v === 'number' || typeof v === 'bigint' ? true : false));
  reg('is_string', 1, ([v]) => typeof v === 'string');
  reg('is_boolean', 1, ([v]) => typeof v === 'boolean');
  reg('is_array', 1, ([v]) => Array.isArray(v));
  reg('is_set', 1, ([v]) => v instanceof RSet);
  reg('is_object', 1, ([v]) => v instanceof RObject);
  reg('is_null', 1, ([v]) => v === null);
  reg('type_name', 1, ([v]) => typeName(v));
  reg('to_number', 1, (a) => {
    const v = a[0];
    if (v === null) return 0;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v === 'number' || typeof v === 'bigint') return v;
    if (typeof v === 'string') {
      const t = v;
      if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
        if (/^[+-]?\d+$/.test(t)) return normBig(BigInt(t));
        return parseFloat(t);
      }
      if (/^[+-]?(nan|inf|infinity)$/i.test(t)) throw new BuiltinError('eval_type_error', `to_number: operand 1 must be a finite number but got ${JSON.stringify(t)}`);
      if (/^[+-]?(0x[0-9a-fA-F]+)$/.test(t)) throw builtinErr('to_number', `strconv.ParseFloat: parsing ${JSON.stringify(t)}: invalid syntax`);
      throw new BuiltinError('eval_builtin_error', `to_number: strconv.ParseFloat: parsing ${JSON.stringify(t)}: invalid syntax`);
    }
    throw new BuiltinError('eval_type_error', `to_number: operand 1 must be one of {null, boolean, number, string} but got ${typeName(v)}`);
  });
  reg('cast_array', 1, ([v]) => { if (Array.isArray(v)) return v; if (v instanceof RSet) return v.sorted(); throw typeErr('cast_array', 0, 'array', v); });
  reg('cast_set', 1, ([v]) => { if (Array.isArray(v)) return new RSet(v); if (v instanceof RSet) return v; throw typeErr('cast_set', 0, 'set', v); });
  reg('cast_string', 1, ([v]) => { if (typeof v === 'string') return v; throw typeErr('cast_string', 0, 'string', v); });
  reg('cast_boolean', 1, ([v]) => { if (typeof v === 'boolean') return v; throw typeErr('cast_boolean', 0, 'boolean', v); });
  reg('cast_null', 1, ([v]) => { if (v === null) return v; throw typeErr('cast_null', 0, 'null', v); });
  reg('cast_object', 1, ([v]) => { if (v instanceof RObject) return v; throw typeErr('cast_object', 0, 'object', v); });

  // bits
  const bi = (name: string, a: Value[], i: number): bigint => {
    const v = num(name, a, i);
    if (!isInt(v)) throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be integer number but got floating-point number`);
    return toBig(v);
  };
  reg('bits.and', 2, (a) => normBig(bi('bits.and', a, 0) & bi('bits.and', a, 1)));
  reg('bits.or', 2, (a) => normBig(bi('bits.or', a, 0) | bi('bits.or', a, 1)));
  reg('bits.xor', 2, (a) => normBig(bi('bits.xor', a, 0) ^ bi('bits.xor', a, 1)));
  reg('bits.negate', 1, (a) => normBig(~bi('bits.negate', a, 0)));
  reg('bits.lsh', 2, (a) => { const x = bi('bits.lsh', a, 0), s = bi('bits.lsh', a, 1); if (s < 0n) throw new BuiltinError('eval_type_error', 'bits.lsh: operand 2 must be an unsigned integer number but got a negative integer'); return normBig(x << s); });
  reg('bits.rsh', 2, (a) => { const x = bi('bits.rsh', a, 0), s = bi('bits.rsh', a, 1); if (s < 0n) throw new BuiltinError('eval_type_error', 'bits.rsh: operand 2 must be an unsigned integer number but got a negative integer'); return normBig(x >> s); });

  // misc
  reg('print', -1, () => true);
  reg('io.jwt.decode_verify', 2, () => { throw new BuiltinError('eval_builtin_error', 'io.jwt.decode_verify: not supported by this evaluator'); });
  reg('http.send', 1, () => { throw new BuiltinError('eval_builtin_error', 'http.send: not supported by this evaluator'); });
  reg('trace', 1, () => true);
  reg('opa.runtime', 0, () => new RObject());
  reg('rand.intn', 2, (a) => { str('rand.intn', a, 0); const n = int('rand.intn', a, 1); return n === 0 ? 0 : Math.floor(Math.random() * Math.abs(n)); });
  void oneOf; void obj; void keyOf; void numText; void compareNum;
}
