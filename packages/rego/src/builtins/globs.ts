/**
 * `regex.globs_match`: whether two simple patterns can match a common string. Patterns are made of
 * literals, `.`, character sets (`[a-z]`, `[^...]`), escapes and the quantifiers `*`, `+`, `?`; any other
 * character (groups, alternation, anchors) is taken literally. `globsMatch` (exported) searches the pairs
 * of positions in both token lists; a malformed pattern is an `eval_builtin_error`.
 */
import { builtinErr, str, type Reg } from './types.js';

interface CharSet { any: boolean; neg: boolean; ranges: [number, number][] }
interface Tok { set: CharSet; q: '' | '*' | '?' }

function invalid(pat: string, pos: number, what: string): Error {
  return builtinErr('regex.globs_match', `input:${pat}, pos:${pos}, ${what}: the input provided is invalid`);
}

function tokenize(pat: string): Tok[] {
  const cps = [...pat];
  const out: Tok[] = [];
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    let set: CharSet;
    if (c === '\\') {
      if (i + 1 >= cps.length) throw invalid(pat, i + 1, 'escape at end of input');
      const ch = cps[++i].codePointAt(0)!; set = { any: false, neg: false, ranges: [[ch, ch]] };
    } else if (c === '.') set = { any: true, neg: false, ranges: [] };
    else if (c === '[') {
      const ranges: [number, number][] = []; let neg = false; let j = i + 1;
      if (cps[j] === '^') { neg = true; j++; }
      let closed = false;
      while (j < cps.length) {
        let ch = cps[j];
        if (ch === ']') { closed = true; break; }
        if (ch === '\\') { j++; ch = cps[j] ?? ''; }
        const lo = ch.codePointAt(0)!;
        if (cps[j + 1] === '-' && cps[j + 2] !== undefined && cps[j + 2] !== ']') {
          let hiCh = cps[j + 2]; let skip = 2;
          if (hiCh === '\\') { hiCh = cps[j + 3] ?? ''; skip = 3; }
          ranges.push([lo, hiCh.codePointAt(0)!]); j += skip + 1;
        } else { ranges.push([lo, lo]); j++; }
      }
      if (!closed) throw invalid(pat, i + 1, "set-open '[' with no closing ']'");
      set = { any: false, neg, ranges }; i = j;
    } else if (c === ']') throw invalid(pat, i + 1, "set-close ']' with no preceding '['");
    else if (c === '*' || c === '+' || c === '?') {
      const prev = out[out.length - 1];
      if (!prev || prev.q !== '') throw invalid(pat, i + 1, `quantifier '${c}' with nothing to repeat`);
      if (c === '+') out.push({ set: prev.set, q: '*' }); else prev.q = c;
      continue;
    } else { const ch = c.codePointAt(0)!; set = { any: false, neg: false, ranges: [[ch, ch]] }; }
    out.push({ set, q: '' });
  }
  return out;
}

function has(s: CharSet, c: number): boolean {
  if (s.any) return true;
  const inR = s.ranges.some(([lo, hi]) => c >= lo && c <= hi);
  return s.neg ? !inR : inR;
}

function intersects(a: CharSet, b: CharSet): boolean {
  if (a.any && b.any) return true;
  const cands: number[] = [0x61, 0x30, 0x20, 0x41, 0x10ffff];
  for (const s of [a, b]) for (const [lo, hi] of s.ranges) { for (let c = lo; c <= hi && c < lo + 512; c++) cands.push(c); cands.push(lo - 1, hi + 1); }
  return cands.some((c) => c >= 0 && has(a, c) && has(b, c));
}

export function globsMatch(p1: string, p2: string): boolean {
  const a = tokenize(p1), b = tokenize(p2);
  const seen = new Set<number>();
  const stack: [number, number][] = [[0, 0]];
  const W = b.length + 1;
  while (stack.length) {
    const [i, j] = stack.pop()!;
    const key = i * W + j;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === a.length && j === b.length) return true;
    if (i < a.length && a[i].q !== '') stack.push([i + 1, j]);
    if (j < b.length && b[j].q !== '') stack.push([i, j + 1]);
    if (i < a.length && j < b.length && intersects(a[i].set, b[j].set)) {
      stack.push([a[i].q === '*' ? i : i + 1, b[j].q === '*' ? j : j + 1]);
      if (a[i].q === '*' && b[j].q !== '*') stack.push([i, j + 1]);
    }
  }
  return false;
}

export function register(reg: Reg): void {
  reg('regex.globs_match', 2, (a) => globsMatch(str('regex.globs_match', a, 0), str('regex.globs_match', a, 1)));
}
