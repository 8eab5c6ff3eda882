import { compile, RegoError } from './index';

const general = `package agw.general
import rego.v1

default approve_destructive := true

rule_severity := {"anomaly_score_threshold_exceeded": "high", "restricted_field_modification_ssn": "medium"}

violations contains "anomaly_score_threshold_exceeded" if input.behavioral.anomaly_score > data.config.anomaly_threshold

violations contains v if {
  some f in data.config.restricted_fields
  input.params[f]
  v := sprintf("restricted_field_modification_%s", [f])
}

requires_human if lower(input.method) in {"delete", "destroy", "purge", "drop"}

severity := "high" if {
  some v in violations
  rule_severity[v] == "high"
} else := "medium" if count(violations) > 0
else := "none"

decision := {"violations": violations, "severity": severity, "requires_human": requires_human}
`;

const data = { config: { anomaly_threshold: 0.8, restricted_fields: ['ssn', 'iban'] } };

describe('compile / evaluate', () => {
  const p = compile([{ name: 'general.rego', source: general }]);

  it('lists packages', () => { expect(p.packages).toEqual(['agw.general']); });

  it('evaluates a decision document', () => {
    const d = p.evaluate('data.agw.general.decision', { input: { method: 'DELETE', params: { ssn: '1' }, behavioral: { anomaly_score: 0.9 } }, data });
    expect(d).toEqual({ violations: ['anomaly_score_threshold_exceeded', 'restricted_field_modification_ssn'], severity: 'high', requires_human: true });
  });

  it('is undefined when a rule does not apply', () => {
    expect(p.evaluate('data.agw.general.requires_human', { input: { method: 'get' }, data })).toBeUndefined();
    expect(p.evaluate('data.agw.general.decision', { input: { method: 'get' }, data })).toBeUndefined();
    expect(p.evaluate('data.agw.general.severity', { input: { method: 'get' }, data })).toBe('none');
  });

  it('answers queries with bindings', () => {
    expect(p.query('x := data.agw.general.severity; y := 1 + 2', { input: {}, data })).toEqual([{ x: 'none', y: 3 }]);
    expect(p.query('some x in [1, 2, 3]; x > 1')).toEqual([{ x: 2 }, { x: 3 }]);
  });

  it('reports the input paths a policy reads', () => {
    expect(p.inputPaths()).toEqual(['behavioral.anomaly_score', 'method', 'params']);
    expect(p.readsInput('behavioral')).toBe(true);
    expect(p.readsInput('input.behavioral.anomaly_score')).toBe(true);
    expect(p.readsInput('params.amount')).toBe(true);
    expect(p.readsInput('tool')).toBe(false);
  });

  it('reports dynamic input refs by their static prefix', () => {
    const q = compile([{ name: 'd.rego', source: 'package d\np if input.a[input.k] == 1\nq := input\n' }]);
    expect(q.inputPaths()).toEqual(['', 'a', 'k']);
    expect(q.readsInput('behavioral')).toBe(true);
  });

  it('reports the input paths read inside a negated block and in with values', () => {
    const q = compile([{ name: 'n.rego', source: 'package n\np if not { input.behavioral.anomaly_score > 0.8 }\nr if data.n.p with input.tool as input.method\n' }]);
    expect(q.inputPaths()).toEqual(['behavioral.anomaly_score', 'method']);
    expect(q.readsInput('behavioral')).toBe(true);
  });
});

describe('semantics', () => {
  it('uses options.nowNs for time.now_ns', () => {
    const p = compile([{ name: 't.rego', source: 'package t\nhour := h if { [h, _, _] := time.clock(time.now_ns()) }\nday := time.weekday(time.now_ns())\n' }]);
    const nowNs = BigInt(Date.UTC(2026, 0, 5, 14, 30)) * 1000000n; // Monday
    expect(p.evaluate('data.t.hour', { nowNs })).toBe(14);
    expect(p.evaluate('data.t.day', { nowNs })).toBe('Monday');
  });

  it('raises conflicts', () => {
    const p = compile([{ name: 'c.rego', source: 'package c\np := 1\np := 2\n' }]);
    expect(() => p.evaluate('data.c.p')).toThrow(expect.objectContaining({ code: 'eval_conflict_error' }));
  });

  it('keeps integers beyond 2^53 exact', () => {
    const p = compile([{ name: 'n.rego', source: 'package n\nx := 9007199254740993 + 2\ny := input.big * 10\n' }]);
    expect(p.evaluate('data.n.x')).toBe(9007199254740995n);
    expect(p.evaluate('data.n.y', { input: { big: 123456789012345678901234567890n } })).toBe(1234567890123456789012345678900n);
  });

  it('treats builtin errors as undefined unless strict', () => {
    const p = compile([{ name: 'b.rego', source: 'package b\nx := 1 / input.d\n' }]);
    expect(p.evaluate('data.b.x', { input: { d: 0 } })).toBeUndefined();
    expect(() => p.evaluate('data.b.x', { input: { d: 0 }, strictBuiltinErrors: true })).toThrow(RegoError);
  });

  it('supports sets and objects with non-string keys', () => {
    const p = compile([{ name: 's.rego', source: 'package s\no := {1: "a", [1]: "b"}\ns := {3, 1, 2}\n' }]);
    expect(p.evaluate('data.s.s')).toEqual([1, 2, 3]);
    const o = p.evaluate('data.s.o') as Map<unknown, unknown>;
    expect(o).toBeInstanceOf(Map);
    expect([...o.values()]).toEqual(['a', 'b']);
  });

  it('supports with, every, not and functions', () => {
    const p = compile([{ name: 'w.rego', source: `package w
double(x) := x * 2
all_small if every x in input.xs { x < 10 }
none_big if not any_big
any_big if { some x in input.xs; x > 100 }
r := y if { y := double(input.n) with input.n as 21 }
` }]);
    expect(p.evaluate('data.w.all_small', { input: { xs: [1, 2] } })).toBe(true);
    expect(p.evaluate('data.w.all_small', { input: { xs: [1, 20] } })).toBeUndefined();
    expect(p.evaluate('data.w.none_big', { input: { xs: [1] } })).toBe(true);
    expect(p.evaluate('data.w.r', { input: { n: 1 } })).toBe(42);
  });
});

describe('hostile policies', () => {
  const failure = (source: string) => {
    try {
      compile([{ name: 'policy.rego', source }]);
    } catch (e) {
      return e instanceof RegoError ? `${e.code}: ${e.message}` : `not a RegoError: ${String(e)}`;
    }
    return 'compiled';
  };

  // thousands of nested brackets or chained operators/rules exhaust a recursive parser or compiler: a
  // parse or compile error that says why, never a RangeError (a 500 at the edge before)
  it('refuses terms nested deeper than 256 levels and more than 256 chained operators, early', () => {
    expect(failure(`package p\nx := ${'['.repeat(20000)}${']'.repeat(20000)}`)).toMatch(/rego_parse_error: .*terms nested deeper than 256 levels/);
    expect(failure(`package p\nx := ${'-'.repeat(50000)}1`)).toMatch(/terms nested deeper than 256 levels/);
    expect(failure(`package p\nx := 1${' + 1'.repeat(50000)}`)).toMatch(/rego_parse_error: .*more than 256 chained operators/);
    expect(failure(`package p\nx := ${'['.repeat(200)}${']'.repeat(200)}\ny := 1${' + 1'.repeat(200)}`)).toBe('compiled');
  });

  // 20,000: a chain of 5,000 fits on the stack or not depending on how V8 has optimised the recursion check
  it('turns a stack overflow of the compiler (a chain of 20,000 rules) into a compile error', () => {
    expect(failure(`package p\n${Array.from({ length: 20000 }, (_, i) => `r${i} := r${i + 1}`).join('\n')}\nr20000 := 1`)).toMatch(/^rego_compile_error: .*nests too deeply/);
  });
});
