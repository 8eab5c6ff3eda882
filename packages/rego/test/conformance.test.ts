/**
 * Runs the OPA conformance cases copied into test/conformance-cases (Apache-2.0, see SOURCE.md there)
 * against the engine, judged like shared/conformance/opa/run-conformance.mjs. Cases listed in
 * known-failures.json are skipped; every other case must pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { evalQuerySync } from '../src/conformance-adapter';
import { RegoError } from '../src/errors';

const root = path.join(__dirname, 'conformance-cases');
const known = new Set<string>(JSON.parse(fs.readFileSync(path.join(root, 'known-failures.json'), 'utf8')));

type J = null | boolean | number | bigint | string | J[] | { [k: string]: J };

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p)); else if (/\.ya?ml$/.test(e.name)) out.push(p);
  }
  return out.sort();
}

const fix = (v: unknown): unknown => {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(fix);
  if (v !== null && typeof v === 'object') { const o = v as Record<string, unknown>; for (const k of Object.keys(o)) o[k] = fix(o[k]); }
  return v;
};
const yamlOpts = { version: '1.1' as const, intAsBigInt: true, customTags: (tags: YAML.Tags) => tags.filter((t) => (t as { tag?: string }).tag !== 'tag:yaml.org,2002:timestamp' && (t as { format?: string }).format !== 'TIME') };

const cmpStr = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
function numText(v: number | bigint): string { if (typeof v === 'bigint') return v.toString(); if (Number.isInteger(v)) return BigInt(v).toString(); return String(v); }
function canon(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number' || typeof v === 'bigint') return 'n' + numText(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  if (v instanceof Map) { const o: Record<string, unknown> = {}; for (const [k, x] of v) o[typeof k === 'string' ? k : goJSON(k)] = x; return canon(o); }
  const o = v as Record<string, unknown>;
  return '{' + Object.keys(o).sort(cmpStr).map((k) => JSON.stringify(k) + ':' + canon(o[k])).join(',') + '}';
}
function goJSON(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'bigint') return numText(v);
  if (typeof v === 'string') return JSON.stringify(v).replace(/[<>&]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  if (Array.isArray(v)) return '[' + v.map(goJSON).join(',') + ']';
  if (v instanceof Map) { const o: Record<string, unknown> = {}; for (const [k, x] of v) o[typeof k === 'string' ? k : goJSON(k)] = x; return goJSON(o); }
  if (typeof v === 'object') { const o = v as Record<string, unknown>; return '{' + Object.keys(o).sort(cmpStr).map((k) => goJSON(k) + ':' + goJSON(o[k])).join(',') + '}'; }
  return String(v);
}
function rank(v: unknown): number { if (v === null) return 0; if (typeof v === 'boolean') return 1; if (typeof v === 'number' || typeof v === 'bigint') return 2; if (typeof v === 'string') return 3; if (Array.isArray(v)) return 4; return 5; }
function jsonCompare(a: unknown, b: unknown): number {
  const ra = rank(a), rb = rank(b);
  if (ra !== rb) return ra - rb;
  const ca = canon(a), cb = canon(b);
  if (ra === 2) { const x = a as number, y = b as number; return x < y ? -1 : x > y ? 1 : 0; }
  if (ra === 3) return cmpStr(a as string, b as string);
  return ca < cb ? -1 : ca > cb ? 1 : 0;
}
function rowSet(rows: Record<string, unknown>[], sortBindings: boolean): Set<string> {
  const s = new Set<string>();
  for (const r of rows) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) { if (k.startsWith('__localq')) continue; o[k] = sortBindings && Array.isArray(v) ? [...v].sort(jsonCompare) : v; }
    s.add(canon(o));
  }
  return s;
}

interface Case { note: string; query: string; modules?: string[]; data?: J; input?: J; input_term?: string; want_result?: Record<string, J>[]; want_error?: string; want_error_code?: string; strict_error?: boolean; sort_bindings?: boolean }

const all: [string, Case][] = [];
for (const f of walk(path.join(root, 'v1'))) {
  const rel = path.relative(root, f).split(path.sep).join('/');
  const doc = fix(YAML.parse(fs.readFileSync(f, 'utf8'), yamlOpts)) as { cases: Case[] };
  for (const tc of doc.cases) all.push([`${rel}: ${tc.note}`, tc]);
}

/** what evaluation throws: a RegoError (code, location) or another Error */
type EvalError = Error & { code?: string; location?: { file: string; row: number } };

function run(tc: Case): string | null {
  let rows: Record<string, unknown>[] = [];
  let err: EvalError | null = null;
  try {
    let input: unknown = tc.input ?? undefined;
    if (tc.input_term != null) { try { input = fix(YAML.parse(tc.input_term, { schema: 'json', intAsBigInt: true })); JSON.parse(tc.input_term); } catch { input = undefined; } }
    rows = evalQuerySync({ modules: (tc.modules ?? []).map(String), query: String(tc.query), data: tc.data ?? undefined, input, inputTerm: tc.input_term ?? undefined, strictBuiltinErrors: !!tc.strict_error });
  } catch (e) { err = e as EvalError; rows = ((e as { results?: Record<string, unknown>[] }).results) ?? []; }
  const has = (k: keyof Case) => tc[k] !== undefined && tc[k] !== null;
  if (has('want_error')) {
    if (!err) return 'expected error';
    const texts = [err.message, `${err.code}: ${err.message}`];
    if (err.location) texts.push(`${err.location.file}:${err.location.row}: ${err.code}: ${err.message}`);
    if (!texts.some((t) => t.includes(String(tc.want_error)))) return `error text: ${err.message}`;
  }
  if (has('want_error_code')) { if (!err) return 'expected error code'; if (err.code !== tc.want_error_code) return `error code ${err.code}`; }
  if (err && !has('want_error') && !has('want_error_code')) return `unexpected error ${err instanceof RegoError ? err.code : ''}: ${err.message}`;
  if (has('want_result')) {
    const exp = rowSet(tc.want_result as Record<string, unknown>[], !!tc.sort_bindings);
    const act = rowSet(rows, !!tc.sort_bindings);
    if (exp.size !== act.size || [...exp].some((x) => !act.has(x))) return `result ${[...act].join(' | ')} != ${[...exp].join(' | ')}`;
  }
  return null;
}

describe('OPA conformance cases (copied subset)', () => {
  const todo = all.filter(([id]) => !known.has(id));
  it('has the copied cases', () => { expect(all.length).toBeGreaterThan(1600); });
  it.each(todo.map(([id, tc]) => [id, tc] as const))('%s', (_id, tc) => {
    expect(run(tc as Case)).toBeNull();
  });
});
