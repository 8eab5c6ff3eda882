import { compile, RegoCompileError } from './index';
import { parseModule, parseQuery } from './parser';

function compileErr(src: string, name = 'tenant/custom.rego'): RegoCompileError {
  try { compile([{ name, source: src }]); } catch (e) { if (e instanceof RegoCompileError) return e; throw e; }
  throw new Error('expected a compile error');
}

describe('parser', () => {
  it('parses rules, imports and else chains', () => {
    const m = parseModule('package a.b\nimport rego.v1\nimport data.x.y as z\n\np := 1 if { input.x > 1 } else := 2\nq contains v if some v in [1, 2]\nf(x) := x + 1\n', 'm.rego');
    expect(m.pkg).toEqual(['a', 'b']);
    expect(m.imports).toHaveLength(2);
    expect(m.rules.map((r) => r.kind)).toEqual(['single', 'multi', 'func']);
    expect(m.rules[0].elseRule).toBeDefined();
  });

  it('parses queries with several expressions', () => {
    expect(parseQuery('x := 1; y = x + 1\nz := [a | a := 1]')).toHaveLength(3);
  });

  it('reports a missing package with file, row and column', () => {
    const e = compileErr('p := 1\n');
    expect(e.code).toBe('rego_parse_error');
    expect(e.errors[0].location).toEqual({ file: 'tenant/custom.rego', row: 1, col: 1 });
    expect(e.message).toMatch(/^tenant\/custom\.rego:1:1: rego_parse_error: /);
  });

  it('reports an unterminated body at the opening brace', () => {
    const e = compileErr('package t\n\np if {\n  input.x == 1\n');
    expect(e.code).toBe('rego_parse_error');
    expect(e.errors[0].location).toMatchObject({ row: 3 });
  });

  it('reports an unexpected token where it is', () => {
    const e = compileErr('package t\n\np := 1 if {\n  input.x == == 1\n}\n');
    expect(e.errors[0].location).toEqual({ file: 'tenant/custom.rego', row: 4, col: 14 });
  });

  it('requires `if` before a rule body (Rego v1)', () => {
    const e = compileErr('package t\n\np {\n  true\n}\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_parse_error', location: { row: 3 } });
  });

  it('reports unterminated strings', () => {
    const e = compileErr('package t\n\np := "abc\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_parse_error', location: { row: 3, col: 6 } });
  });

  it('reports unknown functions as type errors with a location', () => {
    const e = compileErr('package t\n\np if {\n  nope(1)\n}\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_type_error', location: { row: 4, col: 3 } });
    expect(e.errors[0].message).toContain('undefined function nope');
  });

  it('reports unsafe variables', () => {
    const e = compileErr('package t\n\np if {\n  x > 1\n}\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_unsafe_var_error', location: { row: 4 } });
  });

  it('reports recursive rules at compile time', () => {
    const e = compileErr('package t\n\np if q\n\nq if p\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_recursion_error', location: { row: 3, col: 1 } });
    expect(e.errors[0].message).toBe('rule data.t.p is recursive: data.t.p -> data.t.q -> data.t.p');
  });

  it('reports vars assigned twice or after use', () => {
    expect(compileErr('package t\np if {\n  x := 1\n  x := 2\n}\n').errors[0]).toMatchObject({ code: 'rego_compile_error', message: 'var x assigned above', location: { row: 4 } });
    expect(compileErr('package t\np if {\n  y := x\n  x := 1\n}\n').errors[0]).toMatchObject({ message: 'var x referenced above' });
  });

  it('reports conflicting rule kinds', () => {
    const e = compileErr('package t\n\np := 1\n\np contains 2\n');
    expect(e.errors[0]).toMatchObject({ code: 'rego_type_error' });
  });

  it('collects errors from several modules', () => {
    try {
      compile([{ name: 'a.rego', source: 'package a\np := \n' }, { name: 'b.rego', source: 'package b\nq := [\n' }]);
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(RegoCompileError);
      const ce = e as RegoCompileError;
      expect(ce.errors.map((x) => x.location?.file)).toEqual(['a.rego', 'b.rego']);
      expect(ce.message).toContain('2 errors occurred');
    }
  });

  it('accepts keywords as ref segments and string templates', () => {
    const p = compile([{ name: 'k.rego', source: 'package t\nif.foo := 1\nmsg := $"n={if.foo} x={input.x}"\n' }]);
    expect(p.evaluate('data.t.msg', { input: { x: 'y' } })).toBe('n=1 x=y');
  });
});
