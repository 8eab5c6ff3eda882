/**
 * YAML builtins on a small YAML subset: `yaml.unmarshal` / `yaml.is_valid` read block mappings and
 * sequences, flow collections, plain and quoted scalars and comments (`parseYAML`); `yaml.marshal` emits
 * block style with sorted keys (`toYAML`). Anchors, aliases, tags, block scalars (`|`, `>`) and multiple
 * documents are not supported. A parse error is an `eval_builtin_error` (`yaml: ...`).
 */
import { RObject, RSet, numText, normBig, type Value } from '../value.js';
import { builtinErr, str, type Reg } from './types.js';

class YAMLError extends Error {}

function scalar(raw: string): Value {
  const s = raw.trim();
  if (s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
  if (/^(true|True|TRUE)$/.test(s)) return true;
  if (/^(false|False|FALSE)$/.test(s)) return false;
  if (/^[-+]?(0|[1-9][0-9]*)$/.test(s)) return normBig(BigInt(s));
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return parseFloat(s);
  if (s.startsWith('"')) { try { return JSON.parse(s) as string; } catch { throw new YAMLError('found unknown escape character'); } }
  if (s.startsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
  return s;
}

class Flow {
  i = 0;
  constructor(private s: string, private line: number) {}
  ws() { while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++; }
  value(): Value {
    this.ws();
    const c = this.s[this.i];
    if (c === '[') {
      this.i++; const out: Value[] = [];
      for (;;) {
        this.ws();
        if (this.i >= this.s.length) throw new YAMLError(`line ${this.line}: did not find expected ',' or ']'`);
        if (this.s[this.i] === ']') { this.i++; return out; }
        out.push(this.value()); this.ws();
        if (this.s[this.i] === ',') { this.i++; continue; }
        if (this.s[this.i] === ']') { this.i++; return out; }
        throw new YAMLError(`line ${this.line}: did not find expected ',' or ']'`);
      }
    }
    if (c === '{') {
      this.i++; const o = new RObject();
      for (;;) {
        this.ws();
        if (this.i >= this.s.length) throw new YAMLError(`line ${this.line}: did not find expected ',' or '}'`);
        if (this.s[this.i] === '}') { this.i++; return o; }
        const k = this.value(); this.ws();
        if (this.s[this.i] !== ':') throw new YAMLError(`line ${this.line}: did not find expected ':'`);
        this.i++;
        o.set(k, this.value()); this.ws();
        if (this.s[this.i] === ',') { this.i++; continue; }
        if (this.s[this.i] === '}') { this.i++; return o; }
        throw new YAMLError(`line ${this.line}: did not find expected ',' or '}'`);
      }
    }
    if (c === '"' || c === "'") {
      let j = this.i + 1;
      while (j < this.s.length && this.s[j] !== c) { if (c === '"' && this.s[j] === '\\') j++; j++; }
      if (j >= this.s.length) throw new YAMLError(`line ${this.line}: found unexpected end of stream`);
      const v = scalar(this.s.slice(this.i, j + 1)); this.i = j + 1; return v;
    }
    let j = this.i;
    while (j < this.s.length && !',]}'.includes(this.s[j]) && !(this.s[j] === ':' && /\s/.test(this.s[j + 1] ?? ' '))) j++;
    const v = scalar(this.s.slice(this.i, j)); this.i = j; return v;
  }
}

interface Line { indent: number; text: string; no: number }

function parseBlock(lines: Line[], start: number, indent: number): [Value, number] {
  const first = lines[start];
  if (first.text.startsWith('- ') || first.text === '-') {
    const out: Value[] = [];
    let i = start;
    while (i < lines.length && lines[i].indent === indent && (lines[i].text.startsWith('- ') || lines[i].text === '-')) {
      const rest = lines[i].text === '-' ? '' : lines[i].text.slice(2);
      if (rest.trim() === '') {
        if (i + 1 < lines.length && lines[i + 1].indent > indent) { const [v, n] = parseBlock(lines, i + 1, lines[i + 1].indent); out.push(v); i = n; }
        else { out.push(null); i++; }
        continue;
      }
      // inline item: re-enter as a nested block at the item's column
      const sub: Line = { indent: indent + 2, text: rest.trimStart(), no: lines[i].no };
      const copy = [sub, ...lines.slice(i + 1)];
      const [v, n] = parseBlock(copy, 0, sub.indent);
      out.push(v); i = i + n;
    }
    return [out, i];
  }
  if (/^[^'"[{][^:]*:(\s|$)/.test(first.text) || /^["'].*["']\s*:(\s|$)/.test(first.text)) {
    const o = new RObject();
    let i = start;
    while (i < lines.length && lines[i].indent === indent) {
      const m = /^((?:"[^"]*"|'[^']*'|[^:])+?)\s*:(?:\s+(.*))?$/.exec(lines[i].text);
      if (!m) throw new YAMLError(`line ${lines[i].no}: could not find expected ':'`);
      const key = scalar(m[1]);
      const rest = (m[2] ?? '').trim();
      if (rest === '') {
        if (i + 1 < lines.length && (lines[i + 1].indent > indent || (lines[i + 1].indent === indent && lines[i + 1].text.startsWith('- ')))) {
          const [v, n] = parseBlock(lines, i + 1, lines[i + 1].indent); o.set(key, v); i = n;
        } else { o.set(key, null); i++; }
      } else {
        o.set(key, rest.startsWith('[') || rest.startsWith('{') ? flow(rest, lines[i].no) : scalar(rest)); i++;
      }
    }
    if (i < lines.length && lines[i].indent > indent) throw new YAMLError(`line ${lines[i].no}: mapping values are not allowed in this context`);
    return [o, i];
  }
  const t = first.text;
  if (t.startsWith('[') || t.startsWith('{')) {
    let text = t; let i = start + 1;
    while (i < lines.length && lines[i].indent > indent) { text += ' ' + lines[i].text; i++; }
    return [flow(text, first.no), i];
  }
  return [scalar(t), start + 1];
}

function flow(text: string, line: number): Value {
  const f = new Flow(text, line);
  const v = f.value(); f.ws();
  if (f.i < text.length) throw new YAMLError(`line ${line}: did not find expected <document start>`);
  return v;
}

export function parseYAML(src: string): Value {
  const lines: Line[] = [];
  src.split(/\r?\n/).forEach((raw, idx) => {
    let t = raw.replace(/\s+#.*$/, '');
    if (/^\s*#/.test(t) || t.trim() === '' || t.trim() === '---') return;
    if (/\t/.test(t.match(/^\s*/)![0])) throw new YAMLError(`line ${idx + 1}: found character that cannot start any token`);
    const indent = t.length - t.trimStart().length;
    t = t.trim();
    lines.push({ indent, text: t, no: idx + 1 });
  });
  if (!lines.length) return null;
  const [v, n] = parseBlock(lines, 0, lines[0].indent);
  if (n < lines.length) throw new YAMLError(`line ${lines[n].no}: did not find expected key`);
  return v;
}

function yScalar(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number' || typeof v === 'bigint') return numText(v);
  const s = v as string;
  if (s === '' || /^[\s\-?:,[\]{}#&*!|>'"%@`]|: | #|\s$|\n/.test(s) || typeof scalar(s) !== 'string') return JSON.stringify(s);
  return s;
}

export function toYAML(v: Value, indent = ''): string {
  if (Array.isArray(v) || v instanceof RSet) {
    const xs = v instanceof RSet ? v.sorted() : v;
    if (!xs.length) return '[]\n';
    return xs.map((x) => {
      if ((Array.isArray(x) || x instanceof RSet || x instanceof RObject) && !isEmpty(x)) {
        const inner = toYAML(x, indent + '  ');
        return indent + '- ' + inner.slice(indent.length + 2);
      }
      return indent + '- ' + inline(x) + '\n';
    }).join('');
  }
  if (v instanceof RObject) {
    if (!v.size) return '{}\n';
    return v.sortedEntries().map(([k, x]) => {
      const key = typeof k === 'string' ? yScalar(k) : yScalar(k);
      if ((Array.isArray(x) || x instanceof RSet) && !isEmpty(x)) return indent + key + ':\n' + toYAML(x, indent);
      if (x instanceof RObject && x.size) return indent + key + ':\n' + toYAML(x, indent + '  ');
      return indent + key + ': ' + inline(x) + '\n';
    }).join('');
  }
  return yScalar(v) + '\n';
}
function isEmpty(x: Value): boolean { return Array.isArray(x) ? x.length === 0 : x instanceof RSet || x instanceof RObject ? x.size === 0 : false; }
function inline(x: Value): string { return isEmpty(x) ? (x instanceof RObject ? '{}' : '[]') : yScalar(x); }

export function register(reg: Reg): void {
  reg('yaml.unmarshal', 1, (a) => {
    const s = str('yaml.unmarshal', a, 0);
    try { return parseYAML(s); } catch (e) { if (e instanceof YAMLError) throw builtinErr('yaml.unmarshal', `yaml: ${e.message}`); throw e; }
  });
  reg('yaml.marshal', 1, (a) => toYAML(a[0]));
  reg('yaml.is_valid', 1, (a) => {
    if (typeof a[0] !== 'string') return false;
    try { parseYAML(a[0]); return true; } catch { return false; }
  });
}
