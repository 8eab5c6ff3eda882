/**
 * CIDR builtins: `net.cidr_contains`, `net.cidr_intersects`, `net.cidr_is_valid`, `net.cidr_expand` (at
 * most 65,536 addresses), `net.cidr_contains_matches` and `net.cidr_merge`, over IPv4 and IPv6 with
 * addresses held as `bigint`. Parsing follows Go's net package (IPv4 octets with leading zeros refused,
 * embedded IPv4 tails such as `::ffff:1.2.3.4` accepted); IPv4 and IPv6 networks never contain each other.
 * A malformed address is an `eval_builtin_error`. DNS lookups (`net.lookup_ip_addr`) are not provided.
 */
import { RObject, RSet, typeName, type Value } from '../value.js';
import { BuiltinError, builtinErr, elems, str, type Reg } from './types.js';

interface Net { v6: boolean; addr: bigint; bits: number }

function parseIP(s: string): { v6: boolean; addr: bigint } | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(s)) {
    const p = s.split('.').map(Number); if (p.some((x) => x > 255)) return undefined;
    if (s.split('.').some((x) => x.length > 1 && x.startsWith('0'))) return undefined;
    return { v6: false, addr: BigInt(((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3]) };
  }
  if (s.includes(':')) {
    let t = s; let tail: bigint | undefined;
    const m4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(t);
    if (m4) { const v4 = parseIP(m4[2]); if (!v4) return undefined; tail = v4.addr; t = m4[1] + '0:0'; }
    const dbl = t.split('::'); if (dbl.length > 2) return undefined;
    const hs = (x: string) => (x === '' ? [] : x.split(':'));
    const left = hs(dbl[0]), right = dbl.length === 2 ? hs(dbl[1]) : [];
    if ([...left, ...right].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    const fill = 8 - left.length - right.length;
    if ((dbl.length === 1 && fill !== 0) || fill < 0) return undefined;
    const groups = [...left, ...Array(dbl.length === 2 ? fill : 0).fill('0'), ...right];
    let a = 0n; for (const g of groups) a = (a << 16n) | BigInt(parseInt(g, 16));
    if (tail !== undefined) a = (a & ~0xffffffffn) | tail;
    return { v6: true, addr: a };
  }
  return undefined;
}

function parseCIDR(s: string): Net | undefined {
  const i = s.indexOf('/'); if (i < 0) return undefined;
  const ip = parseIP(s.slice(0, i)); const bs = s.slice(i + 1);
  if (!ip || !/^\d+$/.test(bs)) return undefined;
  const bits = +bs; const max = ip.v6 ? 128 : 32; if (bits > max) return undefined;
  return { v6: ip.v6, addr: ip.addr & mask(ip.v6, bits), bits };
}
function mask(v6: boolean, bits: number): bigint { const w = v6 ? 128n : 32n; const all = (1n << w) - 1n; return all ^ ((1n << (w - BigInt(bits))) - 1n); }
function width(v6: boolean): number { return v6 ? 128 : 32; }

function cidrOrIP(name: string, s: string, op: number): Net {
  const c = parseCIDR(s); if (c) return c;
  const ip = parseIP(s); if (ip) return { v6: ip.v6, addr: ip.addr, bits: width(ip.v6) };
  throw builtinErr(name, `invalid CIDR address: ${s}`);
  void op;
}
function contains(a: Net, b: Net): boolean {
  if (a.v6 !== b.v6) return false;
  if (b.bits < a.bits) return false;
  return (b.addr & mask(a.v6, a.bits)) === a.addr;
}
function fmtIP(v6: boolean, a: bigint): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((s) => String((a >> s) & 255n)).join('.');
  const g: number[] = []; for (let i = 7; i >= 0; i--) g.push(Number((a >> BigInt(i * 16)) & 0xffffn));
  // longest zero run
  let bs = -1, bl = 0; for (let i = 0; i < 8;) { if (g[i] === 0) { let j = i; while (j < 8 && g[j] === 0) j++; if (j - i > bl && j - i >= 2) { bs = i; bl = j - i; } i = j; } else i++; }
  const h = g.map((x) => x.toString(16));
  if (bs < 0) return h.join(':');
  return h.slice(0, bs).join(':') + '::' + h.slice(bs + bl).join(':');
}

export function register(reg: Reg): void {
  reg('net.cidr_contains', 2, (a) => {
    const c = parseCIDR(str('net.cidr_contains', a, 0)); if (!c) throw builtinErr('net.cidr_contains', `invalid CIDR address: ${a[0] as string}`);
    const x = cidrOrIP('net.cidr_contains', str('net.cidr_contains', a, 1), 2);
    return contains(c, x);
  });
  reg('net.cidr_intersects', 2, (a) => {
    const x = parseCIDR(str('net.cidr_intersects', a, 0)), y = parseCIDR(str('net.cidr_intersects', a, 1));
    if (!x) throw builtinErr('net.cidr_intersects', `invalid CIDR address: ${a[0] as string}`);
    if (!y) throw builtinErr('net.cidr_intersects', `invalid CIDR address: ${a[1] as string}`);
    return contains(x, y) || contains(y, x);
  });
  reg('net.cidr_is_valid', 1, (a) => typeof a[0] === 'string' && parseCIDR(a[0]) !== undefined);
  reg('net.cidr_expand', 1, (a) => {
    const s = str('net.cidr_expand', a, 0); const c = parseCIDR(s); if (!c) throw builtinErr('net.cidr_expand', `invalid CIDR address: ${s}`);
    const n = 1n << BigInt(width(c.v6) - c.bits); if (n > 65536n) throw builtinErr('net.cidr_expand', 'too many addresses');
    const out = new RSet(); for (let i = 0n; i < n; i++) out.add(fmtIP(c.v6, c.addr + i)); return out;
  });
  reg('net.cidr_contains_matches', 2, (a) => {
    const name = 'net.cidr_contains_matches';
    const norm = (v: Value, op: number): [Value, string][] => {
      if (typeof v === 'string') return [[v, v]];
      const items: [Value, Value][] = [];
      if (Array.isArray(v)) v.forEach((x, i) => items.push([i, x]));
      else if (v instanceof RSet) for (const x of v.values()) items.push([x, x]);
      else if (v instanceof RObject) for (const [k, x] of v.entries()) items.push([k, x]);
      else throw new BuiltinError('eval_type_error', `${name}: operand ${op} must be one of {string, array, set, object} but got ${typeName(v)}`);
      return items.map(([k, x]) => {
        if (typeof x === 'string') return [k, x] as [Value, string];
        if (Array.isArray(x) && x.length > 0 && typeof x[0] === 'string') return [k, x[0]] as [Value, string];
        throw builtinErr(name, `operand ${op}: element must be string or non-empty array`);
      });
    };
    const cs = norm(a[0], 1), xs = norm(a[1], 2);
    const out = new RSet();
    for (const [ck, c] of cs) { const cn = cidrOrIP(name, c, 1); for (const [xk, x] of xs) if (contains(cn, cidrOrIP(name, x, 2))) out.add([ck, xk]); }
    return out;
  });
  reg('net.cidr_merge', 1, (a) => {
    const v = a[0];
    if (!Array.isArray(v) && !(v instanceof RSet)) throw new BuiltinError('eval_type_error', `net.cidr_merge: operand 1 must be one of {array, set} but got ${typeName(v)}`);
    const nets: Net[] = [];
    for (const x of elems(v)) {
      if (typeof x !== 'string') throw new BuiltinError('eval_type_error', `net.cidr_merge: operand 1 must be array of strings but got ${typeName(x)}`);
      let n = parseCIDR(x);
      if (!n) { const ip = parseIP(x); if (ip) { if (ip.v6) throw builtinErr('net.cidr_merge', 'IPv6 invalid: needs prefix length'); const o = Number(ip.addr >> 24n); const bits = o < 128 ? 8 : o < 192 ? 16 : o < 224 ? 24 : 32; n = { v6: ip.v6, addr: ip.addr & mask(false, bits), bits }; } else throw builtinErr('net.cidr_merge', `IPv4 invalid: ${x}`); }
      nets.push(n);
    }
    const out = new RSet();
    for (const v6 of [false, true]) {
      let ns = nets.filter((n) => n.v6 === v6).sort((x, y) => (x.addr < y.addr ? -1 : x.addr > y.addr ? 1 : x.bits - y.bits));
      // remove contained
      const kept: Net[] = [];
      for (const n of ns) { if (kept.length && contains(kept[kept.length - 1], n)) continue; kept.push(n); }
      ns = kept;
      // merge siblings repeatedly
      let changed = true;
      while (changed) {
        changed = false;
        const r: Net[] = [];
        for (const n of ns) {
          const last = r[r.length - 1];
          if (last && last.bits === n.bits && last.bits > 0) {
            const parentBits = n.bits - 1; const pm = mask(v6, parentBits);
            if ((last.addr & pm) === (n.addr & pm) && last.addr !== n.addr) { r[r.length - 1] = { v6, addr: last.addr & pm, bits: parentBits }; changed = true; continue; }
          }
          if (last && contains(last, n)) continue;
          r.push(n);
        }
        ns = r;
      }
      for (const n of ns) out.add(fmtIP(v6, n.addr) + '/' + n.bits);
    }
    return out;
  });
}
