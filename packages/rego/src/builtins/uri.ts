/**
 * `uri.parse` and `uri.is_valid`: a port of the parts of Go's `net/url.Parse` that OPA relies on (scheme,
 * userinfo, host and port, path and its raw form, query, fragment; Go's percent-decoding and escaping
 * rules). `parseURL` (exported) returns an object of the non-empty components (`scheme`, `hostname`,
 * `port`, `path`, `raw_path`, `raw_query`, `fragment`; userinfo is checked but not returned); `uri.parse`
 * fails with an `eval_builtin_error` carrying Go's message, `uri.is_valid` is true only for a URL that
 * parses and has a scheme.
 */
import { RObject, type Value } from '../value.js';
import { builtinErr, str, type Reg } from './types.js';

/** A subset of Go's net/url.Parse, as used by OPA's uri.parse / uri.is_valid */
class URLError extends Error {}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

function shouldEscape(c: string, mode: 'path' | 'host' | 'userinfo'): boolean {
  if (isAlnum(c)) return false;
  if (mode === 'host') return !"!$&'()*+,;=:[]<>\"-._~".includes(c);
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    if (mode === 'path') return c === '?';
    if (mode === 'userinfo') return c === '@' || c === '/' || c === '?' || c === ':';
  }
  return true;
}

function unescape(s: string, mode: 'path' | 'host' | 'fragment' | 'query'): string {
  const bytes: number[] = [];
  const enc = Buffer.from(s, 'utf8');
  for (let i = 0; i < enc.length; i++) {
    const b = enc[i];
    const c = String.fromCharCode(b);
    if (c === '%') {
      const h1 = String.fromCharCode(enc[i + 1] ?? 0), h2 = String.fromCharCode(enc[i + 2] ?? 0);
      if (!isHex(h1) || !isHex(h2)) {
        const rest = enc.subarray(i, i + 3).toString('utf8');
        throw new URLError(`invalid URL escape ${JSON.stringify(rest)}`);
      }
      if (mode === 'host' && parseInt(h1, 16) < 8 && enc.subarray(i, i + 3).toString() !== '%25') throw new URLError(`invalid URL escape ${JSON.stringify('%' + h1 + h2)}`);
      bytes.push(parseInt(h1 + h2, 16)); i += 2; continue;
    }
    if (mode === 'host' && b < 0x80 && shouldEscape(c, 'host')) throw new URLError(`invalid character ${JSON.stringify(c)} in host name`);
    bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

function escapePath(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && !shouldEscape(c, 'path') ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function validUserinfo(s: string): boolean {
  for (const c of s) if (!(isAlnum(c) || "-._:~!$&'()*+,;=%@".includes(c))) return false;
  return true;
}

export function parseURL(raw: string): RObject {
  const out = new RObject();
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new URLError('net/url: invalid control character in URL');
  let rest = raw;
  let fragment = '';
  const h = rest.indexOf('#');
  if (h >= 0) { fragment = unescape(rest.slice(h + 1), 'fragment'); rest = rest.slice(0, h); }
  let scheme = '';
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (sm) { scheme = sm[1].toLowerCase(); rest = rest.slice(sm[0].length); }
  else if (rest.startsWith(':')) throw new URLError('missing protocol scheme');
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) { rawQuery = rest.slice(q + 1); rest = rest.slice(0, q); }
  let host = '', port = '', path = '', rawPath = '';
  if (!rest.startsWith('/') && scheme !== '') {
    // opaque
  } else {
    if (rest.startsWith('//') && !rest.startsWith('///') || (scheme !== '' && rest.startsWith('//'))) {
      let auth = rest.slice(2);
      const sl = auth.indexOf('/');
      if (sl >= 0) { rest = auth.slice(sl); auth = auth.slice(0, sl); } else rest = '';
      const at = auth.lastIndexOf('@');
      let hostPart = auth;
      if (at >= 0) {
        const ui = auth.slice(0, at);
        if (!validUserinfo(ui)) throw new URLError('net/url: invalid userinfo');
        hostPart = auth.slice(at + 1);
      }
      if (hostPart.startsWith('[')) {
        const e = hostPart.indexOf(']');
        if (e < 0) throw new URLError("missing ']' in host");
        const colonPort = hostPart.slice(e + 1);
        if (colonPort !== '' && !/^:[0-9]*$/.test(colonPort)) throw new URLError(`invalid port ${JSON.stringify(colonPort)} after host`);
        host = unescape(hostPart.slice(1, e), 'host');
        port = colonPort.slice(1);
      } else {
        const c = hostPart.lastIndexOf(':');
        let hn = hostPart;
        if (c >= 0) {
          const colonPort = hostPart.slice(c);
          if (!/^:[0-9]*$/.test(colonPort)) throw new URLError(`invalid port ${JSON.stringify(colonPort)} after host`);
          port = colonPort.slice(1); hn = hostPart.slice(0, c);
        }
        host = unescape(hn, 'host');
      }
    }
    if (rest !== '') {
      path = unescape(rest, 'path');
      rawPath = escapePath(path) === rest ? '' : rest;
    }
  }
  if (scheme) out.set('scheme', scheme);
  if (host) out.set('hostname', host);
  if (port) out.set('port', port);
  if (path) { out.set('path', path); out.set('raw_path', rawPath || path); }
  if (rawQuery) out.set('raw_query', rawQuery);
  if (fragment) out.set('fragment', fragment);
  return out;
}

export function register(reg: Reg): void {
  reg('uri.parse', 1, (a) => {
    const s = str('uri.parse', a, 0);
    try { return parseURL(s) as Value; } catch (e) {
      if (e instanceof URLError) throw builtinErr('uri.parse', `parse ${JSON.stringify(s)}: ${e.message}`);
      throw e;
    }
  });
  reg('uri.is_valid', 1, (a) => {
    const s = a[0];
    if (typeof s !== 'string' || s === '') return false;
    try { const u = parseURL(s); return u.getStr('scheme') !== undefined; } catch { return false; }
  });
}
