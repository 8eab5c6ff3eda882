/** Rego values: null | boolean | number (floats and safe ints) | bigint (ints beyond 2^53) | string | Value[] | RSet | RObject */
export type Value = null | boolean | number | bigint | string | Value[] | RSet | RObject;

const MAXS = BigInt(Number.MAX_SAFE_INTEGER);
const MINS = BigInt(Number.MIN_SAFE_INTEGER);

export function normBig(b: bigint): number | bigint {
  return b <= MAXS && b >= MINS ? Number(b) : b;
}

export function isNumber(v: Value): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}

export function isInt(v: Value): boolean {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

export function numText(v: number | bigint): string {
  if (typeof v === 'bigint') return v.toString();
  if (Number.isInteger(v)) return Math.abs(v) < 1e21 ? String(v) : BigInt(v).toString();
  return String(v);
}

/** canonical key of a value (equal for equal values) */
export function keyOf(v: Value): string {
  if (typeof v === 'string') return v.length > 0 && v.charCodeAt(0) <= 1 ? '\u0001' + v : v;
  return '\u0000' + canon(v);
}

export function canon(v: Value): string {
  if (v === null) return 'n';
  switch (typeof v) {
    case 'boolean': return v ? 't' : 'f';
    case 'number': return 'd' + numText(v);
    case 'bigint': return 'd' + v.toString();
    case 'string': return JSON.stringify(v);
  }
  if (Array.isArray(v)) { let s = '['; for (let i = 0; i < v.length; i++) { if (i) s += ','; s += canon(v[i]); } return s + ']'; }
  if (v instanceof RSet) return v.canon();
  return (v as RObject).canon();
}

export class RSet {
  m = new Map<string, Value>();
  private _c: string | undefined;
  constructor(items?: Iterable<Value>) { if (items) for (const x of items) this.add(x); }
  add(v: Value): void { const k = keyOf(v); if (!this.m.has(k)) { this.m.set(k, v); this._c = undefined; } }
  has(v: Value): boolean { return this.m.has(keyOf(v)); }
  get size(): number { return this.m.size; }
  values(): IterableIterator<Value> { return this.m.values(); }
  [Symbol.iterator](): IterableIterator<Value> { return this.m.values(); }
  canon(): string {
    if (this._c === undefined) { const parts: string[] = []; for (const v of this.m.values()) parts.push(canon(v)); parts.sort(); this._c = '{' + parts.join(',') + '}'; }
    return this._c;
  }
  sorted(): Value[] { return [...this.m.values()].sort(compare); }
}

export class RObject {
  protected _m = new Map<string, [Value, Value]>();
  private _c: string | undefined;
  /** entries keyed by keyOf(key) */
  get m(): Map<string, [Value, Value]> { return this._m; }
  set(k: Value, v: Value): void { this.m.set(keyOf(k), [k, v]); this._c = undefined; }
  get(k: Value): Value | undefined { const e = this.m.get(keyOf(k)); return e === undefined ? undefined : e[1]; }
  getStr(k: string): Value | undefined { const e = this.m.get(k.length > 0 && k.charCodeAt(0) <= 1 ? '\u0001' + k : k); return e === undefined ? undefined : e[1]; }
  has(k: Value): boolean { return this.m.has(keyOf(k)); }
  delete(k: Value): void { this.m.delete(keyOf(k)); this._c = undefined; }
  get size(): number { return this.m.size; }
  entries(): IterableIterator<[Value, Value]> { return this.m.values(); }
  keys(): Value[] { const r: Value[] = []; for (const e of this.m.values()) r.push(e[0]); return r; }
  canon(): string {
    if (this._c === undefined) { const parts: string[] = []; for (const [k, v] of this.m.values()) parts.push(canon(k) + ':' + canon(v)); parts.sort(); this._c = '<' + parts.join(',') + '>'; }
    return this._c;
  }
  sortedEntries(): [Value, Value][] { return [...this.m.values()].sort((a, b) => compare(a[0], b[0])); }
  clone(): RObject { const o = new RObject(); for (const [k, e] of this.m) o._m.set(k, e); return o; }
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * An object converted from plain JS on demand: members are converted when first read, everything
 * else (iteration, size, equality, printing) converts the whole object first.
 */
export class LazyObject extends RObject {
  private src: Record<string, unknown> | null;
  constructor(src: Record<string, unknown>) { super(); this.src = src; }
  private force(): void {
    const s = this.src;
    if (s === null) return;
    this.src = null;
    const m = this._m;
    for (const k of Object.keys(s)) {
      const raw = s[k];
      if (raw === undefined) continue;
      const key = k.length > 0 && k.charCodeAt(0) <= 1 ? '\u0001' + k : k;
      if (!m.has(key)) m.set(key, [k, fromJSLazy(raw)]);
    }
  }
  override get m(): Map<string, [Value, Value]> { if (this.src !== null) this.force(); return this._m; }
  override getStr(k: string): Value | undefined {
    const key = k.length > 0 && k.charCodeAt(0) <= 1 ? '\u0001' + k : k;
    const e = this._m.get(key);
    if (e !== undefined) return e[1];
    const s = this.src;
    if (s === null || !hasOwn.call(s, k)) return undefined;
    const raw = s[k];
    if (raw === undefined) return undefined;
    const v = fromJSLazy(raw);
    this._m.set(key, [k, v]);
    return v;
  }
  override get(k: Value): Value | undefined {
    if (typeof k === 'string') return this.getStr(k);
    if (this.src !== null) return undefined; // plain JS objects only have string keys
    return super.get(k);
  }
  override has(k: Value): boolean { return this.get(k) !== undefined; }
  override set(k: Value, v: Value): void { this.force(); super.set(k, v); }
  override delete(k: Value): void { this.force(); super.delete(k); }
}

/** like fromJS, but plain objects are converted lazily */
export function fromJSLazy(x: unknown): Value {
  if (x === null || x === undefined) return null;
  switch (typeof x) {
    case 'boolean': case 'string': case 'number': return x;
    case 'bigint': return normBig(x);
  }
  if (Array.isArray(x)) { const out: Value[] = new Array(x.length); for (let i = 0; i < x.length; i++) out[i] = fromJSLazy(x[i]); return out; }
  const proto = Object.getPrototypeOf(x);
  if (proto === Object.prototype || proto === null) return new LazyObject(x as Record<string, unknown>);
  return fromJS(x);
}

export function equal(a: Value, b: Value): boolean {
  if (a === b) return true;
  const ta = typeof a, tb = typeof b;
  if ((ta === 'number' || ta === 'bigint') && (tb === 'number' || tb === 'bigint')) return compareNum(a as number, b as number) === 0;
  if (ta !== 'object' || tb !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof RObject) {
    if (!(b instanceof RObject) || a.size !== b.size) return false;
    for (const [k, e] of a.m) { const o = b.m.get(k); if (o === undefined || !equal(e[1], o[1])) return false; }
    return true;
  }
  if (a instanceof RSet) {
    if (!(b instanceof RSet) || a.size !== b.size) return false;
    for (const k of a.m.keys()) if (!b.m.has(k)) return false;
    return true;
  }
  return false;
}

export function compareNum(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint') return -compareNum(b, a);
  // a number, b bigint
  const n = a as number, bb = b as bigint;
  if (!Number.isFinite(n)) return n > 0 ? 1 : -1;
  const fl = BigInt(Math.floor(n));
  if (fl < bb) return -1;
  if (fl > bb) return 1;
  return Number.isInteger(n) ? 0 : 1;
}

function rank(v: Value): number {
  if (v === null) return 0;
  switch (typeof v) {
    case 'boolean': return 1;
    case 'number': case 'bigint': return 2;
    case 'string': return 3;
  }
  if (Array.isArray(v)) return 4;
  if (v instanceof RObject) return 5;
  return 6;
}

function cmpStr(a: string, b: string): number {
  if (a === b) return 0;
  // bytewise UTF-8 order: equals code point order
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!, y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}
export { cmpStr as compareStrings };

export function compare(a: Value, b: Value): number {
  const ra = rank(a), rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: return 0;
    case 1: return a === b ? 0 : a ? 1 : -1;
    case 2: return compareNum(a as number, b as number);
    case 3: return cmpStr(a as string, b as string);
    case 4: {
      const x = a as Value[], y = b as Value[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) { const c = compare(x[i], y[i]); if (c) return c; }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
    case 5: {
      const x = (a as RObject).sortedEntries(), y = (b as RObject).sortedEntries();
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        let c = compare(x[i][0], y[i][0]); if (c) return c;
        c = compare(x[i][1], y[i][1]); if (c) return c;
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
    default: {
      const x = (a as RSet).sorted(), y = (b as RSet).sorted();
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) { const c = compare(x[i], y[i]); if (c) return c; }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
  }
}

export function typeName(v: Value | undefined): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return 'boolean';
    case 'number': case 'bigint': return 'number';
    case 'string': return 'string';
    case 'undefined': return 'undefined';
  }
  if (Array.isArray(v)) return 'array';
  if (v instanceof RSet) return 'set';
  return 'object';
}

/** Convert plain JS (JSON-like) into a Rego value */
export function fromJS(x: unknown): Value {
  if (x === null || x === undefined) return null;
  switch (typeof x) {
    case 'boolean': case 'string': return x;
    case 'number': return x;
    case 'bigint': return normBig(x);
  }
  if (Array.isArray(x)) return x.map(fromJS);
  if (x instanceof RSet || x instanceof RObject) return x;
  if (x instanceof Set) return new RSet([...x].map(fromJS));
  if (x instanceof Map) { const o = new RObject(); for (const [k, v] of x) o.set(fromJS(k), fromJS(v)); return o; }
  const o = new RObject();
  const src = x as Record<string, unknown>;
  if (typeof (src as { toJSON?: unknown }).toJSON === 'function' && !(Object.getPrototypeOf(src) === Object.prototype)) return fromJS((src as { toJSON: () => unknown }).toJSON());
  for (const k of Object.keys(src)) if (src[k] !== undefined) o.set(k, fromJS(src[k]));
  return o;
}

/** Convert a Rego value into plain JS: sets -> sorted arrays, objects -> plain objects (Map when a key is not a string) */
export function toJS(v: Value): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toJS);
  if (v instanceof RSet) return v.sorted().map(toJS);
  let allStr = true;
  for (const [k] of v.m.values()) if (typeof k !== 'string') { allStr = false; break; }
  if (allStr) { const o: Record<string, unknown> = {}; for (const [k, x] of v.m.values()) o[k as string] = toJS(x); return o; }
  const m = new Map<unknown, unknown>();
  for (const [k, x] of v.sortedEntries()) m.set(toJS(k), toJS(x));
  return m;
}

/** Rego text of a value (as OPA prints terms, e.g. in sprintf %v) */
export function toRegoString(v: Value): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return String(v);
    case 'number': case 'bigint': return numText(v);
    case 'string': return JSON.stringify(v);
  }
  if (Array.isArray(v)) return '[' + v.map(toRegoString).join(', ') + ']';
  if (v instanceof RSet) return v.size === 0 ? 'set()' : '{' + v.sorted().map(toRegoString).join(', ') + '}';
  return '{' + v.sortedEntries().map(([k, x]) => toRegoString(k) + ': ' + toRegoString(x)).join(', ') + '}';
}

/** JSON text as Go's encoding/json would produce with sorted keys (objects with non-string keys fail) */
export function toJSONText(v: Value, escapeHTML = true): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return String(v);
    case 'number': case 'bigint': return numText(v);
    case 'string': { const s = JSON.stringify(v); return escapeHTML ? s.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : s.replace(/[\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16)); }
  }
  if (Array.isArray(v)) return '[' + v.map((x) => toJSONText(x, escapeHTML)).join(',') + ']';
  if (v instanceof RSet) return '[' + v.sorted().map((x) => toJSONText(x, escapeHTML)).join(',') + ']';
  const ents = v.sortedEntries().map(([k, x]) => [typeof k === 'string' ? k : toJSONText(k, escapeHTML), x] as [string, Value]);
  ents.sort((a, b) => cmpStr(a[0], b[0]));
  return '{' + ents.map(([k, x]) => toJSONText(k, escapeHTML) + ':' + toJSONText(x, escapeHTML)).join(',') + '}';
}

export function obj(entries: [Value, Value][]): RObject { const o = new RObject(); for (const [k, v] of entries) o.set(k, v); return o; }
