import { compile, RegoError } from './index';

const ev = (src: string, path: string, opts: Record<string, unknown> = {}) => compile([{ name: 'e.rego', source: src }]).evaluate(path, opts);

describe('evaluator semantics', () => {
  it('distinguishes undefined from false', () => {
    const src = 'package t\ndefault d := false\nd if input.x\nu if input.x\n';
    expect(ev(src, 'data.t.d', { input: {} })).toBe(false);
    expect(ev(src, 'data.t.u', { input: {} })).toBeUndefined();
    expect(ev(src, 'data.t.u', { input: { x: false } })).toBeUndefined();
    expect(ev(src, 'data.t.u', { input: { x: 0 } })).toBe(true);
  });

  it('evaluates else chains in order', () => {
    const src = 'package t\ntier := "P1" if input.s == "critical"\nelse := "P2" if input.s == "high"\nelse := "P3"\n';
    expect(ev(src, 'data.t.tier', { input: { s: 'high' } })).toBe('P2');
    expect(ev(src, 'data.t.tier', { input: { s: 'low' } })).toBe('P3');
  });

  it('builds partial sets and objects incrementally', () => {
    const src = 'package t\ns contains x if some x in input.xs\ns contains "fixed"\no[k] := v if some k, v in input.m\n';
    expect(ev(src, 'data.t.s', { input: { xs: ['b', 'a'] } })).toEqual(['a', 'b', 'fixed']);
    expect(ev(src, 'data.t.o', { input: { m: { a: 1 } } })).toEqual({ a: 1 });
    expect(ev(src, 'data.t.s', { input: {} })).toEqual(['fixed']);
  });

  it('reports conflicting partial object keys and function outputs', () => {
    expect(() => ev('package t\no[k] := v if { some k, v in {"a": 1}; true }\no["a"] := 2\n', 'data.t.o')).toThrow(expect.objectContaining({ code: 'eval_conflict_error' }));
    expect(() => ev('package t\nf(x) := 1\nf(x) := 2\np := f(1)\n', 'data.t.p')).toThrow('functions must not produce multiple outputs for same inputs');
  });

  it('supports ref heads and nested documents', () => {
    const src = 'package t\na.b.c := 1\na.b[k] := 2 if some k in ["x"]\n';
    expect(ev(src, 'data.t.a')).toEqual({ b: { c: 1, x: 2 } });
    expect(ev(src, 'data.t')).toEqual({ a: { b: { c: 1, x: 2 } } });
  });

  it('supports every, some-in with keys and comprehensions', () => {
    const src = `package t
all_pos if every x in input.xs { x > 0 }
pairs := [[k, v] | some k, v in input.m]
total := sum([x | some x in input.xs])
byk := {k: count(v) | some k, v in input.m}
`;
    const input = { xs: [1, 2], m: { a: 'xy', b: 'z' } };
    expect(ev(src, 'data.t.all_pos', { input })).toBe(true);
    expect(ev(src, 'data.t.pairs', { input })).toEqual([['a', 'xy'], ['b', 'z']]);
    expect(ev(src, 'data.t.total', { input })).toBe(3);
    expect(ev(src, 'data.t.byk', { input })).toEqual({ a: 2, b: 1 });
    expect(ev(src, 'data.t.all_pos', { input: { xs: [] } })).toBe(true);
  });

  it('replaces input, data and functions with `with`', () => {
    const src = `package t
limit := data.config.limit
over if input.n > limit
mocked := x if { x := count([1, 2, 3]) with count as 42 }
p if over with input.n as 10 with data.config.limit as 5
`;
    expect(ev(src, 'data.t.p', { data: { config: { limit: 100 } } })).toBe(true);
    expect(ev(src, 'data.t.mocked')).toBe(42);
  });

  it('caches data-only rules per data object without mixing configs', () => {
    const p = compile([{ name: 'c.rego', source: 'package t\nlimit := data.config.limit * 2\nover if input.n > limit\n' }]);
    const a = { config: { limit: 1 } }, b = { config: { limit: 100 } };
    expect(p.evaluate('data.t.over', { input: { n: 5 }, data: a })).toBe(true);
    expect(p.evaluate('data.t.over', { input: { n: 5 }, data: b })).toBeUndefined();
    expect(p.evaluate('data.t.over', { input: { n: 5 }, data: a })).toBe(true);
  });

  it('raises eval errors with locations in strict mode', () => {
    const p = compile([{ name: 's.rego', source: 'package t\n\np := x if {\n  x := to_number("abc")\n}\n' }]);
    expect(p.evaluate('data.t.p')).toBeUndefined();
    try { p.evaluate('data.t.p', { strictBuiltinErrors: true }); throw new Error('no error'); } catch (e) {
      expect(e).toBeInstanceOf(RegoError);
      expect(e).toMatchObject({ code: 'eval_builtin_error', location: { file: 's.rego', row: 4 } });
    }
  });
});
