/**
 * Policy tests like `opa test`: every rule whose name starts with `test_` (in any of the given modules, so
 * tests may live in modules of their own beside the policy) is evaluated once; it passes when its value is
 * defined and not `false`, fails when it is undefined or `false`, and errors when its evaluation raises a
 * `RegoError` (builtin errors are strict, as in `opa test`). Tests use `with input as …` / `with data.x as …`
 * to set their inputs. A module set that does not compile yields one error result per module set
 * (`compileError`), no tests. `formatResults` prints opa test's default summary.
 */
import type { ModuleAST } from './ast.js';
import { RegoCompileError, RegoError } from './errors.js';
import { compile, type RegoModule } from './index.js';
import { parseModule } from './parser.js';

export interface TestResult {
  /** data path of the test rule, e.g. data.agw.custom.test_denies_delete */
  name: string;
  package: string;
  file: string;
  row: number;
  outcome: 'pass' | 'fail' | 'error';
  /** for an error: the Rego error's message (code: message) */
  error?: string;
  durationMs: number;
}

export interface TestRun {
  results: TestResult[];
  passed: number;
  failed: number;
  errored: number;
  /** set when the modules do not parse or compile; results is then empty */
  compileError?: RegoCompileError;
  /** lines of the policy's rules (heads and body expressions; not test_* rules, not *_test.rego files) the tests hit */
  coverage?: Coverage;
}

export interface Coverage {
  /** covered lines / coverable lines * 100, 100 when nothing is coverable */
  percent: number;
  covered: number;
  coverable: number;
  files: Array<{ file: string; percent: number; notCovered: Array<{ start: number; end: number }> }>;
}

export function runTests(modules: RegoModule[], options: { data?: unknown; nowNs?: bigint } = {}): TestRun {
  const run: TestRun = { results: [], passed: 0, failed: 0, errored: 0 };
  let policy: ReturnType<typeof compile>;
  const asts: ModuleAST[] = [];
  try {
    policy = compile(modules);
    for (const m of modules) asts.push(parseModule(m.source, m.name));
  } catch (e) {
    if (e instanceof RegoCompileError) { run.compileError = e; return run; }
    throw e;
  }
  const seen = new Set<string>();
  const cover = { exprs: new Set<unknown>(), rules: new Set<unknown>() };
  for (const ast of asts) {
    for (const r of ast.rules) {
      const head = r.head[0] as { t: string; name?: string };
      if (r.kind === 'func' || r.head.length !== 1 || head.t !== 'var' || !head.name?.startsWith('test_')) continue;
      const path = `data.${ast.pkg.join('.')}.${head.name}`;
      if (seen.has(path)) continue; // a test written as several rules of one name runs once, like opa
      seen.add(path);
      const started = process.hrtime.bigint();
      const res: TestResult = { name: path, package: ast.pkg.join('.'), file: ast.file, row: r.loc.row, outcome: 'pass', durationMs: 0 };
      try {
        const v = policy.evaluate(path, { data: options.data ?? {}, nowNs: options.nowNs, strictBuiltinErrors: true, coverage: cover });
        res.outcome = v === undefined || v === false ? 'fail' : 'pass';
      } catch (e) {
        if (!(e instanceof RegoError)) throw e;
        res.outcome = 'error';
        res.error = `${e.code}: ${e.message}`;
      }
      res.durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      run.results.push(res);
      if (res.outcome === 'pass') run.passed++; else if (res.outcome === 'fail') run.failed++; else run.errored++;
    }
  }
  run.coverage = coverageOf(policy, cover);
  return run;
}

function coverageOf(policy: ReturnType<typeof compile>, cover: { exprs: Set<unknown>; rules: Set<unknown> }): Coverage {
  const lines = new Map<string, Map<number, boolean>>(); // file -> row -> covered
  const mark = (file: string, row: number, hit: boolean) => {
    let m = lines.get(file);
    if (!m) { m = new Map(); lines.set(file, m); }
    m.set(row, (m.get(row) ?? false) || hit);
  };
  for (const r of policy.compiledRules()) {
    if (r.file.endsWith('_test.rego') || (r.path[r.path.length - 1] ?? '').startsWith('test_')) continue;
    for (let cur = r as typeof r | undefined; cur; cur = cur.elseRule as typeof r | undefined) {
      mark(cur.file, cur.loc.row, cover.rules.has(cur));
      for (const e of cur.body) if (e.loc.file === cur.file) mark(e.loc.file, e.loc.row, cover.exprs.has(e));
    }
  }
  let covered = 0, coverable = 0;
  const files: Coverage['files'] = [];
  for (const [file, m] of [...lines].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const rows = [...m.keys()].sort((a, b) => a - b);
    const hit = rows.filter((r) => m.get(r)).length;
    covered += hit; coverable += rows.length;
    const notCovered: Array<{ start: number; end: number }> = [];
    for (const r of rows) {
      if (m.get(r)) continue;
      const last = notCovered[notCovered.length - 1];
      if (last && last.end === r - 1) last.end = r; else notCovered.push({ start: r, end: r });
    }
    files.push({ file, percent: pct(hit, rows.length), notCovered });
  }
  return { percent: pct(covered, coverable), covered, coverable, files };
}

const pct = (a: number, b: number) => (b === 0 ? 100 : Math.round((a / b) * 10000) / 100);

/** opa test's default (non-verbose) output: failing and erroring tests with their file, then the counts */
export function formatResults(run: TestRun, verbose = false, coverage = false): string {
  const lines: string[] = [];
  if (run.compileError) {
    for (const e of run.compileError.errors) lines.push(`${e.location ? `${e.location.file}:${e.location.row}: ` : ''}${e.code}: ${e.message}`);
    return lines.join('\n') + '\n';
  }
  const total = run.results.length;
  const shown = verbose ? run.results : run.results.filter((r) => r.outcome !== 'pass');
  const byFile = new Map<string, TestResult[]>();
  for (const r of shown) { const l = byFile.get(r.file) ?? []; l.push(r); byFile.set(r.file, l); }
  for (const [file, rs] of byFile) {
    lines.push(`${file}:`);
    for (const r of rs) {
      const dur = r.durationMs < 1 ? `${Math.round(r.durationMs * 1000)}µs` : `${r.durationMs.toFixed(1)}ms`;
      lines.push(`${r.name}: ${r.outcome.toUpperCase()} (${dur})${r.error ? `\n  ${r.error}` : ''}`);
    }
    lines.push('');
  }
  if (shown.length) lines.push('-'.repeat(80));
  if (total === 0) lines.push('no test cases found');
  if (run.passed) lines.push(`PASS: ${run.passed}/${total}`);
  if (run.failed) lines.push(`FAIL: ${run.failed}/${total}`);
  if (run.errored) lines.push(`ERROR: ${run.errored}/${total}`);
  if (coverage && run.coverage) {
    lines.push(`COVERAGE: ${run.coverage.percent}% (${run.coverage.covered}/${run.coverage.coverable} lines)`);
    for (const f of run.coverage.files) {
      if (f.notCovered.length) lines.push(`  ${f.file}: ${f.percent}%, not covered: ${f.notCovered.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(', ')}`);
    }
  }
  return lines.join('\n') + '\n';
}
