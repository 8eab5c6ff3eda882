import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { formatResults, runTests } from './index';

// OPA's documentation, "Policy Testing", Getting Started: example.rego and example_test.rego (PASS: 4/4)
const exampleRego = `package authz

allow if {
	input.path == ["users"]
	input.method == "POST"
}

allow if {
	input.path == ["users", input.user_id]
	input.method == "GET"
}
`;
const exampleTest = `package authz_test

import data.authz

test_post_allowed if {
	authz.allow with input as {"path": ["users"], "method": "POST"}
}

test_get_anonymous_denied if {
	not authz.allow with input as {"path": ["users"], "method": "GET"}
}

test_get_user_allowed if {
	authz.allow with input as {"path": ["users", "bob"], "method": "GET", "user_id": "bob"}
}

test_get_another_user_denied if {
	not authz.allow with input as {"path": ["users", "bob"], "method": "GET", "user_id": "alice"}
}
`;
// OPA's documentation, "Policy Testing", Test Results: one pass, one fail, one error
const resultsRego = `package example

# This test will pass.
test_ok := true

# This test will fail.
test_failure if {
	1 == 2
}

# This test will error.
test_error if {
	1 / 0
}
`;
// OPA's documentation, "Policy Testing", Data Mocking: data replaced with `with data.x as`
const mockRego = `package authz

allow if {
	some x in data.policies
	x.name == "test_policy"
	input.role in x.roles
}
`;
const mockTest = `package authz_test

import data.authz

policies := [{"name": "test_policy", "roles": ["admin"]}]

test_allow_with_data if {
	authz.allow with input as {"role": "admin"} with data.policies as policies
}

test_deny_other_role if {
	not authz.allow with input as {"role": "viewer"} with data.policies as policies
}

test_deny_without_policies if {
	not authz.allow with input as {"role": "admin"}
}
`;

describe('runTests (opa test)', () => {
  it('passes the four tests of the documentation example, in a module of their own', () => {
    const run = runTests([{ name: 'example.rego', source: exampleRego }, { name: 'example_test.rego', source: exampleTest }]);
    expect(run.compileError).toBeUndefined();
    expect(run.results.map((r) => [r.name, r.outcome])).toEqual([
      ['data.authz_test.test_post_allowed', 'pass'],
      ['data.authz_test.test_get_anonymous_denied', 'pass'],
      ['data.authz_test.test_get_user_allowed', 'pass'],
      ['data.authz_test.test_get_another_user_denied', 'pass'],
    ]);
    expect(formatResults(run)).toBe('PASS: 4/4\n');
  });

  it('tells pass, fail and error apart and prints them like opa test', () => {
    const run = runTests([{ name: 'policy.rego', source: resultsRego }]);
    expect(run.results.map((r) => [r.name, r.outcome, r.row])).toEqual([
      ['data.example.test_ok', 'pass', 4],
      ['data.example.test_failure', 'fail', 7],
      ['data.example.test_error', 'error', 12],
    ]);
    expect(run.results[2].error).toMatch(/^eval_builtin_error: div: divide by zero/);
    expect([run.passed, run.failed, run.errored]).toEqual([1, 1, 1]);
    const out = formatResults(run).replace(/\(\d+(\.\d+)?(µs|ms)\)/g, '(T)');
    expect(out).toBe([
      'policy.rego:',
      'data.example.test_failure: FAIL (T)',
      'data.example.test_error: ERROR (T)',
      '  eval_builtin_error: div: divide by zero',
      '',
      '-'.repeat(80),
      'PASS: 1/3',
      'FAIL: 1/3',
      'ERROR: 1/3',
      '',
    ].join('\n'));
  });

  it('overrides data and input with `with` (data mocking)', () => {
    const run = runTests([{ name: 'authz.rego', source: mockRego }, { name: 'authz_test.rego', source: mockTest }]);
    expect(run.results.map((r) => r.outcome)).toEqual(['pass', 'pass', 'pass']);
    // the same tests fail when the policy is wrong
    const wrong = runTests([{ name: 'authz.rego', source: mockRego.replace('input.role in x.roles', 'true') }, { name: 'authz_test.rego', source: mockTest }]);
    expect(wrong.results.map((r) => r.outcome)).toEqual(['pass', 'fail', 'pass']);
  });

  it('reports a compile error instead of tests', () => {
    const run = runTests([{ name: 'bad.rego', source: 'package x\ntest_a if {\n' }]);
    expect(run.compileError).toBeDefined();
    expect(run.results).toEqual([]);
    expect(formatResults(run)).toMatch(/^bad\.rego:\d+: rego_parse_error: /);
  });
});

// a small policy whose coverage was counted by hand: coverable lines 3 (default), 5-6 (first allow),
// 9-11 (second allow), 14-15 (deny); the one test makes the first allow true (5, 6 covered) and evaluates
// line 10 (false: 9 and 11 stay uncovered); the default is not used, deny is never evaluated: 3/8 = 37.5%
const covPolicy = `package p

default allow := false

allow if {
	input.user == "admin"
}

allow if {
	input.method == "GET"
	input.path == "/public"
}

deny contains "delete" if {
	input.method == "DELETE"
}
`;
const covTest = `package p_test

import data.p

test_admin if {
	p.allow with input as {"user": "admin"}
}
`;

describe('coverage', () => {
  it('counts the lines of a small policy as by hand', () => {
    const run = runTests([{ name: 'p.rego', source: covPolicy }, { name: 'p_test.rego', source: covTest }]);
    expect(run.coverage).toEqual({ percent: 37.5, covered: 3, coverable: 8, files: [{ file: 'p.rego', percent: 37.5, notCovered: [{ start: 3, end: 3 }, { start: 9, end: 9 }, { start: 11, end: 11 }, { start: 14, end: 15 }] }] });
    expect(formatResults(run, false, true)).toBe('PASS: 1/1\nCOVERAGE: 37.5% (3/8 lines)\n  p.rego: 37.5%, not covered: 3, 9, 11, 14-15\n');
  });

  it('reaches 100% when every rule is exercised', () => {
    const more = covTest + `
test_public if {
	p.allow with input as {"method": "GET", "path": "/public"}
}

test_default if {
	not p.allow with input as {"method": "GET", "path": "/x"}
}

test_delete if {
	"delete" in p.deny with input as {"method": "DELETE"}
}
`;
    const run = runTests([{ name: 'p.rego', source: covPolicy }, { name: 'p_test.rego', source: more }]);
    expect(run.results.map((r) => r.outcome)).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(run.coverage).toMatchObject({ percent: 100, covered: 8, coverable: 8 });
  });
});

describe('agw-policy test (CLI, as a process)', () => {
  const bin = join(__dirname, '..', 'bin', 'agw-policy.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'agw-policy-'));
  writeFileSync(join(dir, 'example.rego'), exampleRego);
  mkdirSync(join(dir, 'tests'));
  writeFileSync(join(dir, 'tests', 'example_test.rego'), exampleTest);

  it('exits 0 and prints PASS when every test passes', () => {
    const out = execFileSync(process.execPath, [bin, 'test', dir], { encoding: 'utf8' });
    expect(out).toBe('PASS: 4/4\n');
  });

  it('exits 1 with the failing test named when one fails', () => {
    const bad = mkdtempSync(join(tmpdir(), 'agw-policy-'));
    writeFileSync(join(bad, 'policy.rego'), resultsRego);
    const r = spawnSync(process.execPath, [bin, 'test', bad], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/data\.example\.test_failure: FAIL/);
    expect(r.stdout).toMatch(/FAIL: 1\/3\n/);
  });

  it('prints the coverage with --coverage', () => {
    const d = mkdtempSync(join(tmpdir(), 'agw-policy-'));
    writeFileSync(join(d, 'p.rego'), covPolicy);
    writeFileSync(join(d, 'p_test.rego'), covTest);
    const out = execFileSync(process.execPath, [bin, 'test', '--coverage', d], { encoding: 'utf8' });
    expect(out).toBe(`PASS: 1/1\nCOVERAGE: 37.5% (3/8 lines)\n  ${relative(process.cwd(), join(d, 'p.rego'))}: 37.5%, not covered: 3, 9, 11, 14-15\n`);
  });

  it('exits 2 on a usage error or a policy that does not compile', () => {
    expect(spawnSync(process.execPath, [bin, 'lint', dir]).status).toBe(2);
    const bad = mkdtempSync(join(tmpdir(), 'agw-policy-'));
    writeFileSync(join(bad, 'p.rego'), 'package x\nallow if {\n');
    const r = spawnSync(process.execPath, [bin, 'test', bad], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/rego_parse_error/);
  });
});
