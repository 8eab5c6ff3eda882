/**
 * Hashing, identity and miscellaneous builtins: `crypto.md5/sha1/sha256/sha512` and `crypto.hmac.*` (hex
 * digests of the UTF-8 text; `crypto.hmac.equal` compares in constant time), `uuid.rfc4122` (a random UUID,
 * the same for the same key within one evaluation), `semver.is_valid` / `semver.compare` (SemVer 2.0.0, no
 * `v` prefix), `io.jwt.decode` (header, payload and hex signature, without verification) and
 * `graph.reachable`. `io.jwt.verify_*` and `crypto.x509.*` are deliberately not provided.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { RObject, RSet, typeName, type Value } from '../value.js';
import { BuiltinError, builtinErr, elems, obj, str, type Reg } from './types.js';
import { parseJSON } from './encoding.js';

function b64urlDecode(name: string, s: string): string {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) throw builtinErr(name, 'illegal base64 data');
  return Buffer.from(s, 'base64url').toString('utf8');
}

const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

function semverCompare(a: string, b: string): number {
  const ma = SEMVER.exec(a)!, mb = SEMVER.exec(b)!;
  for (let i = 1; i <= 3; i++) { const x = BigInt(ma[i]), y = BigInt(mb[i]); if (x !== y) return x < y ? -1 : 1; }
  const pa = ma[4], pb = mb[4];
  if (pa === undefined && pb === undefined) return 0;
  if (pa === undefined) return 1;
  if (pb === undefined) return -1;
  const xa = pa.split('.'), xb = pb.split('.');
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    if (i >= xa.length) return -1;
    if (i >= xb.length) return 1;
    const na = /^\d+$/.test(xa[i]), nb = /^\d+$/.test(xb[i]);
    if (na && nb) { const x = BigInt(xa[i]), y = BigInt(xb[i]); if (x !== y) return x < y ? -1 : 1; continue; }
    if (na !== nb) return na ? -1 : 1;
    if (xa[i] !== xb[i]) return xa[i] < xb[i] ? -1 : 1;
  }
  return 0;
}

export function register(reg: Reg): void {
  for (const alg of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
    reg(`crypto.${alg}`, 1, (a) => createHash(alg).update(str(`crypto.${alg}`, a, 0), 'utf8').digest('hex'));
    reg(`crypto.hmac.${alg}`, 2, (a) => createHmac(alg, str(`crypto.hmac.${alg}`, a, 1)).update(str(`crypto.hmac.${alg}`, a, 0), 'utf8').digest('hex'));
  }
  reg('crypto.hmac.equal', 2, (a) => {
    const x = Buffer.from(str('crypto.hmac.equal', a, 0)), y = Buffer.from(str('crypto.hmac.equal', a, 1));
    return x.length === y.length && timingSafeEqual(x, y);
  });
  reg('uuid.rfc4122', 1, (a, ctx) => {
    const k = 'uuid\u0000' + str('uuid.rfc4122', a, 0);
    let v = ctx.builtinCache.get(k) as string | undefined;
    if (v === undefined) { v = randomUUID(); ctx.builtinCache.set(k, v); }
    return v;
  });
  reg('semver.is_valid', 1, (a) => typeof a[0] === 'string' && SEMVER.test(a[0]) && !a[0].startsWith('v'));
  reg('semver.compare', 2, (a) => {
    const x = str('semver.compare', a, 0), y = str('semver.compare', a, 1);
    if (!SEMVER.test(x) || x.startsWith('v')) throw builtinErr('semver.compare', `operand 1: string ${JSON.stringify(x)} is not a valid SemVer`);
    if (!SEMVER.test(y) || y.startsWith('v')) throw builtinErr('semver.compare', `operand 2: string ${JSON.stringify(y)} is not a valid SemVer`);
    return semverCompare(x, y);
  });
  reg('io.jwt.decode', 1, (a) => {
    const t = str('io.jwt.decode', a, 0);
    const parts = t.split('.');
    if (parts.length !== 3) throw builtinErr('io.jwt.decode', 'encoded JWT had no period separators');
    let header: Value, payload: Value;
    try { header = parseJSON(b64urlDecode('io.jwt.decode', parts[0])); payload = parseJSON(b64urlDecode('io.jwt.decode', parts[1])); } catch (e) {
      if (e instanceof BuiltinError) throw e;
      throw builtinErr('io.jwt.decode', 'JWT header or payload is not valid JSON');
    }
    if (!(header instanceof RObject) || !(payload instanceof RObject)) throw builtinErr('io.jwt.decode', 'JWT header or payload is not an object');
    const sig = Buffer.from(parts[2], 'base64url').toString('hex');
    return [header, payload, sig];
  });
  reg('graph.reachable', 2, (a) => {
    const g = obj('graph.reachable', a, 0); const init = a[1];
    if (!Array.isArray(init) && !(init instanceof RSet)) throw new BuiltinError('eval_type_error', `graph.reachable: operand 2 must be one of {array, set} but got ${typeName(init)}`);
    const out = new RSet(); const queue = [...elems(init)];
    while (queue.length) {
      const n = queue.shift()!;
      if (out.has(n)) continue;
      const edges = g.get(n);
      if (edges === undefined) continue;
      out.add(n);
      for (const m of elems(edges)) if (!out.has(m)) queue.push(m);
    }
    return out;
  });
}
