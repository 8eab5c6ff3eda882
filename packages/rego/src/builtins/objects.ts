/**
 * Object and document builtins: `object.get` (a key or a path, with a default), `object.keys`,
 * `object.remove`, `object.filter`, `object.union` (recursive merge, the right side wins) and
 * `object.union_n`, `object.subset`, `json.filter` / `json.remove` (slash-separated or array paths),
 * `json.patch` (RFC 6902 operations; one that cannot apply makes the call undefined) and `walk` (every
 * [path, value] pair, a multi-valued builtin). Arguments are never modified: changed documents are copies.
 */
import { RObject, RSet, equal, fromJS, typeName, type Value } from '../value.js';
import { BuiltinError, arr, builtinErr, elems, obj, typeErr, type Reg } from './types.js';

function get(v: Value, k: Value): Value | undefined {
  if (v instanceof RObject) return v.get(k);
  if (Array.isArray(v)) return typeof k === 'number' && Number.isInteger(k) && k >= 0 && k < v.length ? v[k] : undefined;
  if (v instanceof RSet) return v.has(k) ? k : undefined;
  return undefined;
}

function unionObj(a: RObject, b: RObject): RObject {
  const o = a.clone();
  for (const [k, v] of b.entries()) {
    const ex = o.get(k);
    o.set(k, ex instanceof RObject && v instanceof RObject ? unionObj(ex, v) : v);
  }
  return o;
}

function keysOf(name: string, v: Value, i: number): Value[] {
  if (v instanceof RObject) return v.keys();
  if (v instanceof RSet) return [...v.values()];
  if (Array.isArray(v)) return v;
  throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be one of {object, set, array} but got ${typeName(v)}`);
}

/** parse json.filter/json.remove paths into segment arrays */
function parsePaths(name: string, v: Value): Value[][] {
  if (!(v instanceof RSet) && !Array.isArray(v)) throw new BuiltinError('eval_type_error', `${name}: operand 2 must be one of {set, array} but got ${typeName(v)}`);
  const out: Value[][] = [];
  for (const p of elems(v)) {
    if (typeof p === 'string') { out.push(p.replace(/^\//, '').split('/').filter((_, i, a) => !(a.length === 1 && a[0] === '')).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))); }
    else if (Array.isArray(p)) out.push(p);
    else throw new BuiltinError('eval_type_error', `${name}: operand 2 must be one of {set, array} containing string paths or array of path segments but got ${typeName(p)}`);
  }
  return out;
}

interface PathTree { [k: string]: { key: Value; sub: Map<string, unknown> } }
function buildTree(paths: Value[][]): Map<string, { key: Value; sub: Map<string, unknown>; leaf: boolean }> {
  const root = new Map<string, { key: Value; sub: Map<string, unknown>; leaf: boolean }>();
  for (const p of paths) {
    let cur = root;
    for (let i = 0; i < p.length; i++) {
      const k = JSON.stringify(typeof p[i] === 'number' ? String(p[i]) : p[i]);
      let n = cur.get(k);
      if (!n) { n = { key: p[i], sub: new Map(), leaf: false }; cur.set(k, n); }
      if (i === p.length - 1) n.leaf = true;
      cur = n.sub as typeof root;
    }
  }
  return root;
}

type PathNodes = ReturnType<typeof buildTree>;
type PathNode = PathNodes extends Map<string, infer N> ? N : never;

/**
 * A copy of `v` (object, array or set) whose members are what `member` makes of each (undefined: left
 * out), given the path node of the member's key (undefined: no path goes through it).
 */
function rebuild(v: Value, tree: PathNodes, member: (x: Value, n: PathNode | undefined) => Value | undefined): Value {
  const at = (k: Value, x: Value) => member(x, tree.get(JSON.stringify(typeof k === 'number' ? String(k) : k)));
  if (v instanceof RObject) {
    const o = new RObject();
    for (const [k, x] of v.entries()) { const y = at(k, x); if (y !== undefined) o.set(k, y); }
    return o;
  }
  if (Array.isArray(v)) return v.map((x, i) => at(i, x)).filter((y): y is Value => y !== undefined);
  if (v instanceof RSet) {
    const s = new RSet();
    for (const x of v.values()) { const y = at(x, x); if (y !== undefined) s.add(y); }
    return s;
  }
  return v;
}

/** json.filter: only the members on a path, whole below its end. */
function filterBy(v: Value, tree: PathNodes): Value {
  return rebuild(v, tree, (x, n) => (!n ? undefined : n.leaf || n.sub.size === 0 ? x : filterBy(x, n.sub as PathNodes)));
}

/** json.remove: every member but those at the end of a path. */
function removeBy(v: Value, tree: PathNodes): Value {
  return rebuild(v, tree, (x, n) => (n?.leaf ? undefined : n ? removeBy(x, n.sub as PathNodes) : x));
}

function subset(sup: Value, sub: Value): boolean {
  if (sup instanceof RObject && sub instanceof RObject) {
    for (const [k, v] of sub.entries()) { const x = sup.get(k); if (x === undefined) return false; if (x instanceof RObject && v instanceof RObject || x instanceof RSet && v instanceof RSet || Array.isArray(x) && Array.isArray(v)) { if (!subset(x, v)) return false; } else if (!equal(x, v)) return false; }
    return true;
  }
  if (sup instanceof RSet && sub instanceof RSet) { for (const v of sub.values()) if (!sup.has(v)) return false; return true; }
  if (Array.isArray(sup) && Array.isArray(sub)) {
    if (sub.length === 0) return true;
    for (let i = 0; i + sub.length <= sup.length; i++) { let ok = true; for (let j = 0; j < sub.length; j++) if (!equal(sup[i + j], sub[j])) { ok = false; break; } if (ok) return true; }
    return false;
  }
  if (Array.isArray(sup) && sub instanceof RSet) { for (const v of sub.values()) if (!sup.some((x) => equal(x, v))) return false; return true; }
  return false;
}

// JSON patch
function ptr(path: Value): Value[] {
  if (Array.isArray(path)) return path;
  if (typeof path === 'string') { if (path === '') return []; return path.replace(/^\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')); }
  throw new Error('bad path');
}
function patchAt(doc: Value, path: Value[], op: (parent: Value, key: Value) => Value | undefined): Value | undefined {
  if (path.length === 0) return op(null, null);
  const [k, ...rest] = path;
  if (rest.length === 0) return op(doc, k);
  if (doc instanceof RObject) { const x = doc.get(k); if (x === undefined) return undefined; const nx = patchAt(x, rest, op); if (nx === undefined) return undefined; const o = doc.clone(); o.set(k, nx); return o; }
  if (Array.isArray(doc)) { const i = idx(k); if (i < 0 || i >= doc.length) return undefined; const nx = patchAt(doc[i], rest, op); if (nx === undefined) return undefined; const a = doc.slice(); a[i] = nx; return a; }
  if (doc instanceof RSet) { if (!doc.has(k)) return undefined; const nx = patchAt(k, rest, op); if (nx === undefined) return undefined; const s = new RSet(); for (const x of doc.values()) if (!equal(x, k)) s.add(x); s.add(nx); return s; }
  return undefined;
}
function idx(k: Value): number { if (typeof k === 'number') return Number.isInteger(k) ? k : -1; if (typeof k === 'string' && /^(0|[1-9][0-9]*)$/.test(k)) return Number(k); return -1; }
function getPath(doc: Value, path: Value[]): Value | undefined { let cur: Value | undefined = doc; for (const k of path) { if (cur === undefined) return undefined; cur = cur instanceof RObject ? cur.get(k) : Array.isArray(cur) ? (idx(k) >= 0 ? cur[idx(k)] : undefined) : cur instanceof RSet ? (cur.has(k) ? k : undefined) : undefined; } return cur; }
function addOp(doc: Value, path: Value[], v: Value): Value | undefined {
  if (path.length === 0) return v;
  return patchAt(doc, path, (p, k) => {
    if (p instanceof RObject) { const o = p.clone(); o.set(k, v); return o; }
    if (Array.isArray(p)) { if (k === '-') return [...p, v]; const i = idx(k); if (i < 0 || i > p.length) return undefined; const a = p.slice(); a.splice(i, 0, v); return a; }
    if (p instanceof RSet) { if (!equal(k, v)) return undefined; const s = new RSet(p.values()); s.add(v); return s; }
    return undefined;
  });
}
function removeOp(doc: Value, path: Value[]): Value | undefined {
  if (path.length === 0) return undefined;
  return patchAt(doc, path, (p, k) => {
    if (p instanceof RObject) { if (!p.has(k)) return undefined; const o = p.clone(); o.delete(k); return o; }
    if (Array.isArray(p)) { const i = idx(k); if (i < 0 || i >= p.length) return undefined; const a = p.slice(); a.splice(i, 1); return a; }
    if (p instanceof RSet) { if (!p.has(k)) return undefined; const s = new RSet(); for (const x of p.values()) if (!equal(x, k)) s.add(x); return s; }
    return undefined;
  });
}

export function register(reg: Reg): void {
  reg('object.get', 3, (a) => {
    const o = a[0];
    if (!(o instanceof RObject)) throw typeErr('object.get', 0, 'object', o);
    const k = a[1];
    if (Array.isArray(k)) { let cur: Value | undefined = o; for (const s of k) { cur = cur === undefined ? undefined : get(cur, s); if (cur === undefined) return a[2]; } return cur; }
    const v = o.get(k); return v === undefined ? a[2] : v;
  });
  reg('object.keys', 1, (a) => new RSet(obj('object.keys', a, 0).keys()));
  reg('object.remove', 2, (a) => {
    const o = obj('object.remove', a, 0); const ks = keysOf('object.remove', a[1], 1);
    const r = o.clone(); for (const k of ks) r.delete(k); return r;
  });
  reg('object.filter', 2, (a) => {
    const o = obj('object.filter', a, 0); const ks = keysOf('object.filter', a[1], 1);
    const r = new RObject(); for (const k of ks) { const v = o.get(k); if (v !== undefined) r.set(k, v); } return r;
  });
  reg('object.union', 2, (a) => unionObj(obj('object.union', a, 0), obj('object.union', a, 1)));
  reg('object.union_n', 1, (a) => {
    const xs = arr('object.union_n', a, 0); let r = new RObject();
    for (const x of xs) { if (!(x instanceof RObject)) throw new BuiltinError('eval_type_error', `object.union_n: operand 1 must be array of objects but got array containing ${typeName(x)}`); r = unionObj(r, x); }
    return r;
  });
  reg('object.subset', 2, (a) => {
    const [sup, sub] = a;
    const ok = (v: Value) => v instanceof RObject || v instanceof RSet || Array.isArray(v);
    if (!ok(sup)) throw new BuiltinError('eval_type_error', `object.subset: operand 1 must be one of {object, set, array} but got ${typeName(sup)}`);
    if (!ok(sub)) throw new BuiltinError('eval_type_error', `object.subset: operand 2 must be one of {object, set, array} but got ${typeName(sub)}`);
    if (sup instanceof RObject !== sub instanceof RObject) throw builtinErr('object.subset', 'both arguments must be objects');
    return subset(sup, sub);
  });
  reg('json.filter', 2, (a) => filterBy(obj('json.filter', a, 0), buildTree(parsePaths('json.filter', a[1]))));
  reg('json.remove', 2, (a) => removeBy(obj('json.remove', a, 0), buildTree(parsePaths('json.remove', a[1]))));
  reg('json.patch', 2, (a) => {
    let doc: Value | undefined = a[0];
    const ops = a[1];
    if (!Array.isArray(ops)) throw typeErr('json.patch', 1, 'array', ops);
    for (const op of ops) {
      if (!(op instanceof RObject)) throw builtinErr('json.patch', 'operation must be object');
      const kind = op.getStr('op'); const rawPath = op.getStr('path');
      if (typeof rawPath !== 'string' && !Array.isArray(rawPath)) return undefined;
      const path = ptr(rawPath);
      if ((kind === 'move' || kind === 'copy') && typeof op.getStr('from') !== 'string' && !Array.isArray(op.getStr('from'))) return undefined;
      if ((kind === 'add' || kind === 'replace' || kind === 'test') && op.getStr('value') === undefined) return undefined;
      if (doc === undefined) return undefined;
      switch (kind) {
        case 'add': doc = addOp(doc, path, op.getStr('value') ?? null); break;
        case 'remove': doc = removeOp(doc, path); break;
        case 'replace': { if (getPath(doc, path) === undefined) return undefined; const d2 = removeOp(doc, path); doc = path.length === 0 ? op.getStr('value') ?? null : d2 === undefined ? undefined : addOp(d2, path, op.getStr('value') ?? null); break; }
        case 'move': { const from = ptr(op.getStr('from') ?? ''); const v = getPath(doc, from); if (v === undefined) return undefined; const d2 = removeOp(doc, from); doc = d2 === undefined ? undefined : addOp(d2, path, v); break; }
        case 'copy': { const from = ptr(op.getStr('from') ?? ''); const v = getPath(doc, from); if (v === undefined) return undefined; doc = addOp(doc, path, v); break; }
        case 'test': { const v = getPath(doc, path); if (v === undefined || !equal(v, op.getStr('value') ?? null)) return undefined; break; }
        default: throw builtinErr('json.patch', `invalid op ${String(kind)}`);
      }
    }
    return doc;
  });
  reg('walk', 1, (a) => {
    const out: Value[] = [];
    const rec = (v: Value, path: Value[]) => {
      out.push([path.slice(), v]);
      if (v instanceof RObject) for (const [k, x] of v.sortedEntries()) rec(x, [...path, k]);
      else if (Array.isArray(v)) v.forEach((x, i) => rec(x, [...path, i]));
      else if (v instanceof RSet) for (const x of v.sorted()) rec(x, [...path, x]);
    };
    rec(a[0], []);
    return out;
  }, true);
  void fromJS;
}
