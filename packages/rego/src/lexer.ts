/**
 * Tokenizer of Rego source: `lex(src, file)` returns identifiers (keywords included; the parser tells
 * them apart), strings (`"..."` with JSON escapes, raw `` `...` ``), numbers (integers beyond 2^53 as
 * `bigint`, leading zeros refused), string templates (`$"...{expr}..."`, each expression kept as text
 * with its position for the parser) and punctuation, each token with its position and whether a newline
 * or whitespace precedes it, then an `eof` token. `#` comments are skipped. A lexical error throws a
 * `RegoError` `rego_parse_error` with its location.
 */
import type { Loc } from './ast.js';
import { RegoError } from './errors.js';
import { normBig } from './value.js';

export interface Token {
  type: 'ident' | 'string' | 'number' | 'template' | 'punct' | 'eof';
  text: string;
  value?: string | number | bigint;
  parts?: { lit: boolean; text: string; row: number; col: number }[];
  row: number; col: number;
  nl: boolean; // newline before this token
  ws: boolean; // whitespace before this token
  dotAfter: boolean; // immediately followed by '.'
}

const PUNCT3 = [':=', '==', '!=', '<=', '>='];

export function lex(src: string, file: string, row0 = 1, col0 = 1): Token[] {
  const toks: Token[] = [];
  let i = 0, row = row0, col = col0;
  let nl = false, ws = false;
  const err = (msg: string, r = row, c = col): never => { throw new RegoError('rego_parse_error', msg, { file, row: r, col: c }); };
  const adv = (n: number) => { for (let j = 0; j < n; j++) { if (src[i] === '\n') { row++; col = 1; } else col++; i++; } };
  while (i < src.length) {
    const c = src[i];
    if (c === '\n') { nl = true; ws = true; adv(1); continue; }
    if (c === ' ' || c === '\t' || c === '\r') { ws = true; adv(1); continue; }
    if (c === '#') { while (i < src.length && src[i] !== '\n') adv(1); ws = true; continue; }
    const r = row, cl = col;
    const push = (t: Omit<Token, 'row' | 'col' | 'nl' | 'ws' | 'dotAfter'>) => { toks.push({ ...t, row: r, col: cl, nl, ws, dotAfter: false }); nl = false; ws = false; };
    if (/[A-Za-z_]/.test(c)) {
      let j = i; while (j < src.length && /[A-Za-z0-9_]/.test(src[j])) j++;
      const text = src.slice(i, j);
      adv(j - i);
      push({ type: 'ident', text });
      toks[toks.length - 1].dotAfter = src[i] === '.' ;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? '') && (toks.length === 0 || ws || !['ident', 'punct'].includes(toks[toks.length - 1].type) || !/[\])}]/.test(toks[toks.length - 1].text)))) {
      const m = /^(?:0|[1-9][0-9]*|(?=\.))(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i));
      let text = m && m[0] ? m[0] : '';
      if (!text) { const m2 = /^[0-9]+/.exec(src.slice(i))!; text = m2[0]; }
      if (/^0[0-9]/.test(text)) err('invalid number');
      adv(text.length);
      let value: number | bigint;
      if (/^[0-9]+$/.test(text)) value = normBig(BigInt(text)); else value = parseFloat(text);
      push({ type: 'number', text, value });
      continue;
    }
    if (c === '"') {
      let j = i + 1; let s = '';
      while (true) {
        if (j >= src.length || src[j] === '\n') err('non-terminated string');
        const ch = src[j];
        if (ch === '"') break;
        if (ch === '\\') {
          const e = src[j + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f' };
          if (e in map) { s += map[e]; j += 2; continue; }
          if (e === 'u') {
            const hex = src.slice(j + 2, j + 6); if (!/^[0-9a-fA-F]{4}$/.test(hex)) err('illegal escape sequence');
            let code = parseInt(hex, 16); j += 6;
            if (code >= 0xd800 && code < 0xdc00 && src[j] === '\\' && src[j + 1] === 'u') {
              const lo = parseInt(src.slice(j + 2, j + 6), 16);
              if (lo >= 0xdc00 && lo < 0xe000) { s += String.fromCharCode(code, lo); j += 6; continue; }
            }
            s += String.fromCharCode(code); continue;
          }
          err('illegal escape sequence');
        }
        s += ch; j++;
      }
      adv(j + 1 - i);
      push({ type: 'string', text: src.slice(r === row ? i : i, i), value: s });
      continue;
    }
    if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) err('non-terminated string');
      const s = src.slice(i + 1, j);
      adv(j + 1 - i);
      push({ type: 'string', text: s, value: s });
      continue;
    }
    if (c === '$' && (src[i + 1] === '"' || src[i + 1] === '`')) {
      const raw = src[i + 1] === '`';
      adv(2);
      const parts: { lit: boolean; text: string; row: number; col: number }[] = [];
      let lit = '';
      while (true) {
        if (i >= src.length || (!raw && src[i] === '\n')) err('non-terminated string');
        const ch = src[i];
        if ((!raw && ch === '"') || (raw && ch === '`')) { adv(1); break; }
        if (raw && ch === '\\' && src[i + 1] === '{') { lit += '{'; adv(2); continue; }
        if (!raw && ch === '\\') {
          const e = src[i + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', '{': '{' };
          if (e in map) { lit += map[e]; adv(2); continue; }
          if (e === 'u') { lit += String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16)); adv(6); continue; }
          err('illegal escape sequence');
        }
        if (ch === '{') {
          if (lit) parts.push({ lit: true, text: lit, row, col }); lit = '';
          adv(1);
          const sr = row, sc = col; let depth = 0; let j = i;
          while (j < src.length) {
            const d = src[j];
            if (d === '"') { j++; while (j < src.length && src[j] !== '"') { if (src[j] === '\\') j++; j++; } j++; continue; }
            if (d === '`') { j = src.indexOf('`', j + 1) + 1; if (j === 0) err('non-terminated string'); continue; }
            if (d === '{') depth++;
            else if (d === '}') { if (depth === 0) break; depth--; }
            j++;
          }
          if (j >= src.length) err('non-terminated template expression');
          parts.push({ lit: false, text: src.slice(i, j), row: sr, col: sc });
          adv(j + 1 - i);
          continue;
        }
        lit += ch; adv(1);
      }
      if (lit) parts.push({ lit: true, text: lit, row, col });
      push({ type: 'template', text: '', parts });
      continue;
    }
    const two = src.slice(i, i + 2);
    if (PUNCT3.includes(two)) { adv(2); push({ type: 'punct', text: two }); continue; }
    if ('{}[]().,;:=<>+-*/%&|!'.includes(c)) { adv(1); push({ type: 'punct', text: c }); continue; }
    err(`illegal token`);
  }
  toks.push({ type: 'eof', text: '', row, col, nl: true, ws: true, dotAfter: false });
  return toks;
}

export type { Loc };
