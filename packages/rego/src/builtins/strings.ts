/**
 * String builtins: `concat`, `contains`, `sprintf` (Go's fmt verbs, exported as `sprintf`), `format_int`,
 * `indexof(_n)`, `substring`, `split`, `replace`, `trim*`, `strings.*` and `units.parse(_bytes)`; the
 * `regex.*` family on JavaScript `RegExp`, with Go RE2 syntax translated by `goRe` (named groups, `\A`,
 * `\z`, a leading `(?i)`, POSIX classes) and compiled patterns cached; `glob.match` and `glob.quote_meta`.
 * Indexes and lengths count code points, as in OPA. An invalid pattern is an `eval_builtin_error`.
 */
import { RObject, RSet, isInt, normBig, numText, toRegoString, typeName, type Value } from '../value.js';
import { BuiltinError, arr, builtinErr, elems, int, num, obj, str, typeErr, type Reg } from './types.js';

const cps = (s: string): string[] => [...s];

function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"'; else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n'; else if (ch === '\t') out += '\\t'; else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

function fmtFloat(x: number, prec: number | undefined, verb: string): string {
  if (verb === 'e') return x.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
  if (verb === 'g' || verb === 'G') { if (prec === undefined) return String(x); return String(Number(x.toPrecision(prec))); }
  return x.toFixed(prec ?? 6);
}

function vText(v: Value): string {
  if (typeof v === 'string') return v;
  return toRegoString(v);
}

export function sprintf(format: string, args: Value[]): string {
  let out = ''; let ai = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%') { out += c; continue; }
    i++;
    if (format[i] === '%') { out += '%'; continue; }
    let flags = '';
    while ('+-# 0'.includes(format[i]) && i < format.length) flags += format[i++];
    let width = ''; while (/[0-9]/.test(format[i] ?? '')) width += format[i++];
    let prec: number | undefined;
    if (format[i] === '.') { i++; let p = ''; while (/[0-9]/.test(format[i] ?? '')) p += format[i++]; prec = p ? parseInt(p, 10) : 0; }
    const verb = format[i];
    if (verb === undefined) { out += '%!(NOVERB)'; break; }
    if (ai >= args.length) { out += `%!${verb}(MISSING)`; continue; }
    const v = args[ai++];
    let s: string;
    switch (verb) {
      case 'v': s = vText(v); break;
      case 's': s = typeof v === 'string' ? v : vText(v); if (prec !== undefined) s = cps(s).slice(0, prec).join(''); break;
      case 'q': s = typeof v === 'string' ? goQuote(v) : vText(v); break;
      case 'd':
        if (typeof v === 'number' && Number.isInteger(v) || typeof v === 'bigint') { s = numText(v); if (flags.includes('+') && !s.startsWith('-')) s = '+' + s; }
        else if (typeof v === 'number') s = `%!d(float64=${v})`;
        else s = `%!d(${typeName(v)}=${vText(v)})`;
        break;
      case 'f': case 'F': case 'e': case 'g': case 'G':
        if (typeof v === 'number' || typeof v === 'bigint') { s = fmtFloat(Number(v), prec, verb.toLowerCase() === 'f' ? 'f' : verb); if (flags.includes('+') && !s.startsWith('-')) s = '+' + s; }
        else s = `%!${verb}(${typeName(v)}=${vText(v)})`;
        break;
      case 'x': case 'X': {
        if (typeof v === 'number' && Number.isInteger(v) || typeof v === 'bigint') s = (typeof v === 'bigint' ? v : BigInt(v)).toString(16);
        else if (typeof v === 'string') s = Buffer.from(v, 'utf8').toString('hex');
        else s = vText(v);
        if (verb === 'X') s = s.toUpperCase();
        break;
      }
      case 'o': s = typeof v === 'number' || typeof v === 'bigint' ? (typeof v === 'bigint' ? v : BigInt(Math.trunc(v))).toString(8) : vText(v); break;
      case 'b': s = typeof v === 'number' || typeof v === 'bigint' ? (typeof v === 'bigint' ? v : BigInt(Math.trunc(v))).toString(2) : vText(v); break;
      case 't': s = typeof v === 'boolean' ? String(v) : `%!t(${typeName(v)}=${vText(v)})`; break;
      case 'c': s = typeof v === 'number' ? String.fromCodePoint(v) : vText(v); break;
      case 'T': s = typeName(v); break;
      default: s = `%!${verb}(${vText(v)})`;
    }
    if (width) {
      const w = parseInt(width, 10);
      const len = cps(s).length;
      if (len < w) {
        if (flags.includes('-')) s = s + ' '.repeat(w - len);
        else if (flags.includes('0') && /[dfeFgGxXob]/.test(verb)) { const neg = s.startsWith('-') || s.startsWith('+'); s = neg ? s[0] + '0'.repeat(w - len) + s.slice(1) : '0'.repeat(w - len) + s; }
        else s = ' '.repeat(w - len) + s;
      }
    }
    out += s;
  }
  if (ai < args.length) out += '%!(EXTRA ' + args.slice(ai).map((v) => `${goType(v)}=${vText(v)}`).join(', ') + ')';
  return out;
}
function goType(v: Value): string { return typeof v === 'string' ? 'string' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float64') : typeName(v); }

function strColl(name: string, a: Value[], i: number): string[] {
  const v = a[i];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) || v instanceof RSet) {
    const xs = elems(v);
    for (const x of xs) if (typeof x !== 'string') throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be array of strings but got array containing ${typeName(x)}`);
    return xs as string[];
  }
  throw new BuiltinError('eval_type_error', `${name}: operand ${i + 1} must be one of {string, set, array} but got ${typeName(v)}`);
}

const isSpace = (c: string) => /\s/u.test(c) || c === '\u0085' || c === '\u00a0';

function trimChars(s: string, cut: string, left: boolean, right: boolean): string {
  const set = new Set(cps(cut));
  const cs = cps(s);
  let b = 0, e = cs.length;
  if (left) while (b < e && set.has(cs[b])) b++;
  if (right) while (e > b && set.has(cs[e - 1])) e--;
  return cs.slice(b, e).join('');
}

export function register(reg: Reg): void {
  reg('concat', 2, (a) => {
    const sep = str('concat', a, 0); const v = a[1];
    if (!Array.isArray(v) && !(v instanceof RSet)) throw new BuiltinError('eval_type_error', `concat: operand 2 must be one of {array, set} but got ${typeName(v)}`);
    const xs = v instanceof RSet ? v.sorted() : v;
    for (const x of xs) if (typeof x !== 'string') throw new BuiltinError('eval_type_error', `concat: operand 2 must be array of strings but got array containing ${typeName(x)}`);
    return (xs as string[]).join(sep);
  });
  reg('contains', 2, (a) => str('contains', a, 0).includes(str('contains', a, 1)));
  reg('startswith', 2, (a) => str('startswith', a, 0).startsWith(str('startswith', a, 1)));
  reg('endswith', 2, (a) => str('endswith', a, 0).endsWith(str('endswith', a, 1)));
  reg('lower', 1, (a) => str('lower', a, 0).toLowerCase());
  reg('upper', 1, (a) => str('upper', a, 0).toUpperCase());
  reg('strings.reverse', 1, (a) => { const v = a[0]; if (typeof v !== 'string') throw typeErr('reverse', 0, 'string', v); return cps(v).reverse().join(''); });
  reg('format_int', 2, (a) => {
    const n = num('format_int', a, 0); const base = num('format_int', a, 1);
    if (![2, 8, 10, 16].includes(Number(base))) throw new BuiltinError('eval_type_error', 'format_int: operand 2 must be one of {2, 8, 10, 16}');
    let b: bigint;
    if (typeof n === 'bigint') b = n; else b = BigInt(Math.trunc(n)) ;
    if (typeof n === 'number' && !Number.isInteger(n)) b = BigInt(n < 0 ? Math.ceil(n) : Math.floor(n));
    return b.toString(Number(base));
  });
  reg('indexof', 2, (a) => {
    const s = str('indexof', a, 0), sub = str('indexof', a, 1);
    const i = s.indexOf(sub); if (i < 0) return -1;
    return cps(s.slice(0, i)).length;
  });
  reg('indexof_n', 2, (a) => {
    const s = str('indexof_n', a, 0), sub = str('indexof_n', a, 1);
    const out: Value[] = []; let i = s.indexOf(sub);
    while (i >= 0) { out.push(cps(s.slice(0, i)).length); i = s.indexOf(sub, i + 1); }
    return out;
  });
  reg('replace', 3, (a) => str('replace', a, 0).split(str('replace', a, 1)).join(str('replace', a, 2)));
  reg('strings.replace_n', 2, (a) => {
    const pats = obj('strings.replace_n', a, 0); const s = str('strings.replace_n', a, 1);
    const pairs: [string, string][] = [];
    for (const [k, v] of pats.sortedEntries()) {
      if (typeof k !== 'string') throw new BuiltinError('eval_type_error', 'strings.replace_n: operand 1 non-string key found in pattern object');
      if (typeof v !== 'string') throw new BuiltinError('eval_type_error', 'strings.replace_n: operand 1 non-string value found in pattern object');
      pairs.push([k, v]);
    }
    // Go strings.NewReplacer: at each position, first matching old string in argument order
    let out = ''; let i = 0;
    outer: while (i < s.length) {
      for (const [o, n] of pairs) { if (o !== '' && s.startsWith(o, i)) { out += n; i += o.length; continue outer; } }
      out += s[i]; i++;
    }
    return out;
  });
  reg('split', 2, (a) => { const s = str('split', a, 0), d = str('split', a, 1); return d === '' ? cps(s) : s.split(d); });
  reg('strings.split_n', 3, (a) => {
    const s = str('strings.split_n', a, 0), d = str('strings.split_n', a, 1); const n = int('strings.split_n', a, 2);
    if (n === 0) return [];
    const parts = d === '' ? cps(s) : s.split(d);
    if (n < 0) return parts.slice(Math.max(0, parts.length + n));
    return parts.slice(0, n);
  });
  reg('sprintf', 2, (a) => sprintf(str('sprintf', a, 0), arr('sprintf', a, 1)));
  reg('substring', 3, (a) => {
    const s = str('substring', a, 0); const st = int('substring', a, 1), ln = int('substring', a, 2);
    if (st < 0) throw builtinErr('substring', 'negative offset');
    const cs = cps(s);
    if (st >= cs.length) return '';
    if (ln < 0) return cs.slice(st).join('');
    return cs.slice(st, st + ln).join('');
  });
  reg('trim', 2, (a) => trimChars(str('trim', a, 0), str('trim', a, 1), true, true));
  reg('trim_left', 2, (a) => trimChars(str('trim_left', a, 0), str('trim_left', a, 1), true, false));
  reg('trim_right', 2, (a) => trimChars(str('trim_right', a, 0), str('trim_right', a, 1), false, true));
  reg('trim_prefix', 2, (a) => { const s = str('trim_prefix', a, 0), p = str('trim_prefix', a, 1); return s.startsWith(p) ? s.slice(p.length) : s; });
  reg('trim_suffix', 2, (a) => { const s = str('trim_suffix', a, 0), p = str('trim_suffix', a, 1); return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s; });
  reg('trim_space', 1, (a) => { const cs = cps(str('trim_space', a, 0)); let b = 0, e = cs.length; while (b < e && isSpace(cs[b])) b++; while (e > b && isSpace(cs[e - 1])) e--; return cs.slice(b, e).join(''); });
  reg('strings.any_prefix_match', 2, (a) => { const xs = strColl('strings.any_prefix_match', a, 0), ps = strColl('strings.any_prefix_match', a, 1); return xs.some((x) => ps.some((p) => x.startsWith(p))); });
  reg('strings.any_suffix_match', 2, (a) => { const xs = strColl('strings.any_suffix_match', a, 0), ps = strColl('strings.any_suffix_match', a, 1); return xs.some((x) => ps.some((p) => x.endsWith(p))); });
  reg('strings.count', 2, (a) => {
    const s = str('strings.count', a, 0), sub = str('strings.count', a, 1);
    if (sub === '') return cps(s).length + 1;
    let n = 0, i = s.indexOf(sub); while (i >= 0) { n++; i = s.indexOf(sub, i + sub.length); } return n;
  });

  // regex
  const reCaches: Record<string, Map<string, RegExp>> = { u: new Map(), gu: new Map() };
  const compileRe = (name: string, pat: string, flags = 'u'): RegExp => {
    const reCache = reCaches[flags];
    let r = reCache.get(pat);
    if (!r) {
      try { r = new RegExp(goRe(pat), flags); } catch { throw builtinErr(name, `error parsing regexp: invalid pattern: \`${pat}\``); }
      if (reCache.size > 1000) reCache.clear();
      reCache.set(pat, r);
    }
    if (r.global) r.lastIndex = 0;
    return r;
  };
  reg('regex.match', 2, (a) => compileRe('regex.match', str('regex.match', a, 0)).test(str('regex.match', a, 1)));
  reg('re_match', 2, (a) => compileRe('re_match', str('re_match', a, 0)).test(str('re_match', a, 1)));
  reg('regex.is_valid', 1, (a) => { const v = a[0]; if (typeof v !== 'string') return false; try { new RegExp(goRe(v), 'u'); return true; } catch { return false; } });
  reg('regex.find_n', 3, (a) => {
    const re = compileRe('regex.find_n', str('regex.find_n', a, 0), 'gu'); const s = str('regex.find_n', a, 1); const n = int('regex.find_n', a, 2);
    const out: Value[] = []; for (const m of s.matchAll(re)) { if (n >= 0 && out.length >= n) break; out.push(m[0]); } return out;
  });
  reg('regex.find_all_string_submatch_n', 3, (a) => {
    const re = compileRe('regex.find_all_string_submatch_n', str('regex.find_all_string_submatch_n', a, 0), 'gu'); const s = str('regex.find_all_string_submatch_n', a, 1); const n = int('regex.find_all_string_submatch_n', a, 2);
    const out: Value[] = []; for (const m of s.matchAll(re)) { if (n >= 0 && out.length >= n) break; out.push([...m].map((x) => x ?? '')); } return out;
  });
  reg('regex.replace', 3, (a) => {
    const s = str('regex.replace', a, 0); const re = compileRe('regex.replace', str('regex.replace', a, 1), 'gu'); const rep = str('regex.replace', a, 2);
    const jsRep = rep.replace(/\$\$/g, '\u0000').replace(/\$\{?([0-9]+)\}?/g, (_m, d) => `$${d}`).replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, n) => `$<${n}>`).replace(/\u0000/g, '$$$$');
    return s.replace(re, jsRep);
  });
  reg('regex.split', 2, (a) => { const re = compileRe('regex.split', str('regex.split', a, 0), 'gu'); return str('regex.split', a, 1).split(re); });
  reg('regex.template_match', 4, (a) => {
    const tpl = str('regex.template_match', a, 0), s = str('regex.template_match', a, 1), ds = str('regex.template_match', a, 2), de = str('regex.template_match', a, 3);
    let pat = ''; let i = 0;
    while (i < tpl.length) {
      const b = tpl.indexOf(ds, i);
      if (b < 0) { pat += escapeRe(tpl.slice(i)); break; }
      const e = tpl.indexOf(de, b + ds.length);
      if (e < 0) throw builtinErr('regex.template_match', 'unbalanced delimiters');
      pat += escapeRe(tpl.slice(i, b)) + '(?:' + goRe(tpl.slice(b + ds.length, e)) + ')';
      i = e + de.length;
    }
    return new RegExp('^' + pat + '$', 'u').test(s);
  });

  // glob
  const globCache = new Map<string, RegExp>();
  reg('glob.match', 3, (a) => {
    const pat = str('glob.match', a, 0); const dv = a[1]; const s = str('glob.match', a, 2);
    let delims: string[];
    if (dv === null) delims = [];
    else if (Array.isArray(dv)) { delims = []; for (const d of dv) { if (typeof d !== 'string') throw typeErr('glob.match', 1, 'array of strings', d); delims.push(d); } if (delims.length === 0) delims = ['.']; }
    else throw new BuiltinError('eval_type_error', `glob.match: operand 2 must be one of {array, null} but got ${typeName(dv)}`);
    const key = pat + '\u0000' + delims.join('\u0001');
    let re = globCache.get(key);
    if (!re) { re = globToRe(pat, delims); globCache.set(key, re); }
    return re.test(s);
  });
  reg('glob.quote_meta', 1, (a) => str('glob.quote_meta', a, 0).replace(/[*?\\[\]{}]/g, (c) => '\\' + c));

  // units
  reg('units.parse', 1, (a) => parseUnits(str('units.parse', a, 0), false));
  reg('units.parse_bytes', 1, (a) => parseUnits(str('units.parse_bytes', a, 0), true));
  void isInt; void normBig; void RObject;
}

function escapeRe(s: string): string { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

/** translate Go RE2 syntax to JS */
export function goRe(p: string): string {
  let out = p;
  out = out.replace(/\(\?P</g, '(?<');
  out = out.replace(/\\z/g, '$');
  out = out.replace(/\\A/g, '^');
  // inline flags (?i) at start
  if (/^\(\?i\)/.test(out)) { out = out.slice(4); out = out.replace(/[a-zA-Z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`); }
  out = out.replace(/\[\[:(alpha|digit|alnum|space|upper|lower|punct|xdigit|word):\]\]/g, (_m, n) => ({ alpha: '[A-Za-z]', digit: '[0-9]', alnum: '[A-Za-z0-9]', space: '\\s', upper: '[A-Z]', lower: '[a-z]', punct: '[!-/:-@[-`{-~]', xdigit: '[0-9A-Fa-f]', word: '\\w' } as Record<string, string>)[n]);
  out = out.replace(/\[:(alpha|digit|alnum|space|upper|lower|punct|xdigit|word):\]/g, (_m, n) => ({ alpha: 'A-Za-z', digit: '0-9', alnum: 'A-Za-z0-9', space: '\\s', upper: 'A-Z', lower: 'a-z', punct: '!-/:-@[-`{-~', xdigit: '0-9A-Fa-f', word: '\\w' } as Record<string, string>)[n]);
  return out;
}

function globToRe(pat: string, delims: string[]): RegExp {
  const notDelim = delims.length ? '[^' + delims.map((d) => escapeRe(d)).join('') + ']' : '[\\s\\S]';
  let re = ''; let i = 0;
  const parse = (stopAtComma: boolean, stopAtBrace: boolean): string => {
    let r = '';
    while (i < pat.length) {
      const c = pat[i];
      if (stopAtBrace && c === '}') return r;
      if (stopAtComma && c === ',') return r;
      if (c === '\\') { i++; r += escapeRe(pat[i] ?? ''); i++; continue; }
      if (c === '*') {
        if (pat[i + 1] === '*') { r += '[\\s\\S]*'; i += 2; continue; }
        r += notDelim + '*'; i++; continue;
      }
      if (c === '?') { r += notDelim; i++; continue; }
      if (c === '[') {
        const e = pat.indexOf(']', i + 1);
        if (e < 0) throw builtinErr('glob.match', 'unexpected end of input');
        let cls = pat.slice(i + 1, e);
        const neg = cls.startsWith('!');
        if (neg) cls = cls.slice(1);
        r += '[' + (neg ? '^' : '') + cls.replace(/\\/g, '\\\\').replace(/]/g, '\\]') + ']'; i = e + 1; continue;
      }
      if (c === '{') {
        i++; const alts: string[] = [];
        for (;;) { alts.push(parse(true, true)); if (pat[i] === ',') { i++; continue; } if (pat[i] === '}') { i++; break; } throw builtinErr('glob.match', 'unexpected end of input'); }
        r += '(?:' + alts.join('|') + ')'; continue;
      }
      r += escapeRe(c); i++;
    }
    return r;
  };
  re = parse(false, false);
  return new RegExp('^' + re + '$', 'u');
}

const UNITS: Record<string, number | bigint> = {};
function parseUnits(s0: string, bytes: boolean): Value {
  const name = bytes ? 'units.parse_bytes' : 'units.parse';
  if (/\s/.test(s0)) throw builtinErr(name, 'spaces not allowed in resource strings');
  let s = s0.replace(/"/g, '');
  const m = /^([+-]?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?)(.*)$/.exec(s)!;
  let numStr = m[1]; const unitRaw = m[2];
  if (/^[.0-9]/.test(unitRaw)) throw builtinErr(name, bytes ? 'could not parse byte amount to a number' : 'could not parse amount to a number');
  let neg = false;
  if (numStr.startsWith('-') || numStr.startsWith('+')) { neg = numStr[0] === '-'; numStr = numStr.slice(1); }
  if (numStr === '' || numStr === '.') throw builtinErr(name, bytes ? 'no byte amount provided' : 'no amount provided');
  if (/[eE]/.test(numStr)) {
    const ex = parseInt(numStr.split(/[eE]/)[1], 10);
    if (Math.abs(ex) > 1000) throw builtinErr(name, 'exponent too large');
  }
  const unit = bytes || unitRaw.length > 1 ? unitRaw.toLowerCase() : unitRaw;
  let mult: bigint | number | undefined;
  let div = 1n;
  if (bytes) {
    const t: Record<string, bigint> = { '': 1n, b: 1n, k: 1000n, kb: 1000n, ki: 1024n, kib: 1024n, m: 10n ** 6n, mb: 10n ** 6n, mi: 1024n ** 2n, mib: 1024n ** 2n, g: 10n ** 9n, gb: 10n ** 9n, gi: 1024n ** 3n, gib: 1024n ** 3n, t: 10n ** 12n, tb: 10n ** 12n, ti: 1024n ** 4n, tib: 1024n ** 4n, p: 10n ** 15n, pb: 10n ** 15n, pi: 1024n ** 5n, pib: 1024n ** 5n, e: 10n ** 18n, eb: 10n ** 18n, ei: 1024n ** 6n, eib: 1024n ** 6n };
    mult = t[unit];
  } else {
    const t: Record<string, bigint> = { '': 1n, k: 1000n, K: 1000n, Ki: 1024n, ki: 1024n, M: 10n ** 6n, Mi: 1024n ** 2n, mi: 1024n ** 2n, G: 10n ** 9n, g: 10n ** 9n, Gi: 1024n ** 3n, gi: 1024n ** 3n, T: 10n ** 12n, t: 10n ** 12n, Ti: 1024n ** 4n, ti: 1024n ** 4n, P: 10n ** 15n, p: 10n ** 15n, Pi: 1024n ** 5n, pi: 1024n ** 5n, E: 10n ** 18n, e: 10n ** 18n, Ei: 1024n ** 6n, ei: 1024n ** 6n };
    if (unit === 'm') { mult = 1n; div = 1000n; } else mult = t[unit];
  }
  if (mult === undefined) throw builtinErr(name, `unit ${JSON.stringify(unitRaw).slice(1, -1)} not recognized`);
  void UNITS;
  // exact decimal arithmetic
  let mant = numStr, exp = 0;
  const em = /^(.*)[eE]([+-]?[0-9]+)$/.exec(mant); if (em) { mant = em[1]; exp = parseInt(em[2], 10); }
  if (mant.startsWith('.')) mant = '0' + mant;
  if (mant.endsWith('.')) mant = mant.slice(0, -1);
  let [ip, fp = ''] = mant.split('.');
  if (!/^[0-9]+$/.test(ip) || !/^[0-9]*$/.test(fp)) throw builtinErr(name, bytes ? 'could not parse byte amount to a number' : 'could not parse amount to a number');
  let digits = BigInt(ip + fp); let scale = fp.length - exp; // value = digits * 10^-scale
  let numer = digits * (mult as bigint) * (neg ? -1n : 1n); let denom = div;
  if (scale > 0) denom *= 10n ** BigInt(scale); else if (scale < 0) numer *= 10n ** BigInt(-scale);
  if (bytes) {
    if (numer % denom === 0n) return normBig(numer / denom);
    return Math.round(Number(numer) / Number(denom));
  }
  if (numer % denom === 0n) return normBig(numer / denom);
  return Number(numer) / Number(denom);
}
void numText;
