/**
 * Encoding builtins: `json.marshal` / `json.marshal_with_options` (sorted keys; pretty printing with a
 * prefix and an indent), `json.unmarshal` / `json.is_valid` through `parseJSON` (exported; integers beyond
 * 2^53 stay exact as `bigint`), `base64.*`, `base64url.*`, `hex.*` and `urlquery.*`, with Go's escaping
 * and error messages. Invalid input to a decoder is an `eval_builtin_error`; the `*.is_valid` builtins
 * return false instead.
 */
import { RObject, RSet, normBig, toJSONText, typeName, type Value } from '../value.js';
import { BuiltinError, builtinErr, obj, str, typeErr, type Reg } from './types.js';

/** parse JSON text into a Value keeping big integers exact */
export function parseJSON(text: string): Value {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const fail = (): never => { throw new SyntaxError('invalid JSON'); };
  const val = (): Value => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const o = new RObject(); ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) { ws(); if (text[i] !== '"') fail(); const k = val() as string; ws(); if (text[i] !== ':') fail(); i++; o.set(k, val()); ws(); if (text[i] === ',') { i++; continue; } if (text[i] === '}') { i++; return o; } fail(); }
    }
    if (c === '[') {
      i++; const a: Value[] = []; ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) { a.push(val()); ws(); if (text[i] === ',') { i++; continue; } if (text[i] === ']') { i++; return a; } fail(); }
    }
    if (c === '"') {
      let j = i + 1; while (j < text.length && text[j] !== '"') { if (text[j] === '\\') j++; j++; }
      if (j >= text.length) fail();
      const s = JSON.parse(text.slice(i, j + 1)); i = j + 1; return s;
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (m && m[0]) { i += m[0].length; if (!m[2] && !m[3]) return normBig(BigInt(m[0])); return parseFloat(m[0]); }
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    return fail();
  };
  const v = val(); ws(); if (i !== text.length) fail();
  return v;
}

function jsonable(name: string, v: Value): void {
  if (v instanceof RObject) { for (const [k, x] of v.entries()) { void k; jsonable(name, x); } }
  else if (Array.isArray(v)) v.forEach((x) => jsonable(name, x));
  else if (v instanceof RSet) for (const x of v.values()) jsonable(name, x);
}

function indentJSON(v: Value, prefix: string, indent: string, level: number): string {
  const pad = (n: number) => prefix + indent.repeat(n);
  if (Array.isArray(v) || v instanceof RSet) {
    const xs = v instanceof RSet ? v.sorted() : v;
    if (!xs.length) return '[]';
    return '[\n' + xs.map((x) => pad(level + 1) + indentJSON(x, prefix, indent, level + 1)).join(',\n') + '\n' + pad(level) + ']';
  }
  if (v instanceof RObject) {
    const es = v.sortedEntries();
    if (!es.length) return '{}';
    return '{\n' + es.map(([k, x]) => pad(level + 1) + toJSONText(typeof k === 'string' ? k : toJSONText(k)) + ': ' + indentJSON(x, prefix, indent, level + 1)).join(',\n') + '\n' + pad(level) + '}';
  }
  return toJSONText(v);
}

const b64re = /^[A-Za-z0-9+/]*={0,2}$/;
const b64urlre = /^[A-Za-z0-9_-]*={0,2}$/;

function urlEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%7E/g, '~');
}
function urlDecode(name: string, s: string): string {
  try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch { throw builtinErr(name, `invalid URL escape`); }
}

export function register(reg: Reg): void {
  reg('json.marshal', 1, (a) => toJSONText(a[0]));
  reg('json.marshal_with_options', 2, (a) => {
    const o = obj('json.marshal_with_options', a, 1);
    let prefix = '', indent = '\t', pretty = false;
    for (const [k, v] of o.entries()) {
      if (k === 'pretty') { if (typeof v !== 'boolean') throw builtinErr('json.marshal_with_options', '"pretty" option must be a boolean'); pretty = v; }
      else if (k === 'prefix') { if (typeof v !== 'string') throw builtinErr('json.marshal_with_options', '"prefix" option must be a string'); prefix = v; pretty = pretty || o.getStr('pretty') === undefined; }
      else if (k === 'indent') { if (typeof v !== 'string') throw builtinErr('json.marshal_with_options', '"indent" option must be a string'); indent = v; pretty = pretty || o.getStr('pretty') === undefined; }
      else throw new BuiltinError('eval_type_error', `json.marshal_with_options: object contained unknown key ${typeof k === 'string' ? JSON.stringify(k) : String(k)}`);
    }
    if (o.getStr('pretty') === false) pretty = false;
    if (!pretty) return toJSONText(a[0]);
    return prefix + indentJSON(a[0], prefix, indent, 0);
  });
  reg('json.unmarshal', 1, (a) => { const s = str('json.unmarshal', a, 0); try { return parseJSON(s); } catch { throw builtinErr('json.unmarshal', 'invalid JSON'); } });
  reg('json.is_valid', 1, (a) => { const s = a[0]; if (typeof s !== 'string') return false; try { parseJSON(s); return true; } catch { return false; } });
  reg('base64.encode', 1, (a) => Buffer.from(str('base64.encode', a, 0), 'utf8').toString('base64'));
  reg('base64.decode', 1, (a) => {
    const s = str('base64.decode', a, 0);
    if (!b64re.test(s) || s.length % 4 === 1) throw builtinErr('base64.decode', `illegal base64 data at input byte ${Math.max(0, s.search(/[^A-Za-z0-9+/=]/))}`);
    return Buffer.from(s, 'base64').toString('utf8');
  });
  reg('base64.is_valid', 1, (a) => { const s = str('base64.is_valid', a, 0); return b64re.test(s) && s.length % 4 === 0; });
  reg('base64url.encode', 1, (a) => { const b = Buffer.from(str('base64url.encode', a, 0), 'utf8').toString('base64'); return b.replace(/\+/g, '-').replace(/\//g, '_'); });
  reg('base64url.encode_no_pad', 1, (a) => Buffer.from(str('base64url.encode_no_pad', a, 0), 'utf8').toString('base64url'));
  reg('base64url.decode', 1, (a) => {
    const s = str('base64url.decode', a, 0);
    if (!b64urlre.test(s)) throw builtinErr('base64url.decode', 'illegal base64 data at input byte 0');
    return Buffer.from(s, 'base64url').toString('utf8');
  });
  reg('hex.encode', 1, (a) => Buffer.from(str('hex.encode', a, 0), 'utf8').toString('hex'));
  reg('hex.decode', 1, (a) => {
    const s = str('hex.decode', a, 0);
    const bad = s.search(/[^0-9a-fA-F]/);
    if (bad >= 0) throw builtinErr('hex.decode', `encoding/hex: invalid byte: U+${s.codePointAt(bad)!.toString(16).toUpperCase().padStart(4, '0')} ${JSON.stringify(String.fromCodePoint(s.codePointAt(bad)!)).replace(/"/g, "'")}`);
    if (s.length % 2) throw builtinErr('hex.decode', 'encoding/hex: odd length hex string');
    return Buffer.from(s, 'hex').toString('utf8');
  });
  reg('urlquery.encode', 1, (a) => urlEncode(str('urlquery.encode', a, 0)));
  reg('urlquery.decode', 1, (a) => urlDecode('urlquery.decode', str('urlquery.decode', a, 0)));
  reg('urlquery.encode_object', 1, (a) => {
    const o = obj('urlquery.encode_object', a, 0);
    const parts: string[] = [];
    for (const [k, v] of o.sortedEntries()) {
      if (typeof k !== 'string') throw typeErr('urlquery.encode_object', 0, 'object[string]', k);
      if (typeof v === 'string') parts.push(urlEncode(k) + '=' + urlEncode(v));
      else if (Array.isArray(v) || v instanceof RSet) { for (const x of (v instanceof RSet ? v.sorted() : v)) { if (typeof x !== 'string') throw new BuiltinError('eval_type_error', 'urlquery.encode_object: operand 1 must be object[string, one of {string, array[string], set[string]}]'); parts.push(urlEncode(k) + '=' + urlEncode(x)); } }
      else throw new BuiltinError('eval_type_error', `urlquery.encode_object: operand 1 must be object[string, one of {string, array[string], set[string]}] but got ${typeName(v)}`);
    }
    return parts.join('&');
  });
  reg('urlquery.decode_object', 1, (a) => {
    const s = str('urlquery.decode_object', a, 0);
    const o = new RObject();
    for (const part of s.split(/[&]/)) {
      if (!part) continue;
      const eq = part.indexOf('=');
      const k = urlDecode('urlquery.decode_object', eq < 0 ? part : part.slice(0, eq));
      const v = eq < 0 ? '' : urlDecode('urlquery.decode_object', part.slice(eq + 1));
      const ex = o.getStr(k);
      if (Array.isArray(ex)) ex.push(v); else o.set(k, [v]);
    }
    return o;
  });
  void jsonable;
}
