import { lex } from './lexer';
import { RegoError } from './errors';

describe('lexer', () => {
  it('tokenizes identifiers, numbers, strings and operators with positions', () => {
    const toks = lex('p := input.x >= 10\nq := `raw\\n` # comment\n', 'f.rego');
    expect(toks.map((t) => t.text)).toEqual(['p', ':=', 'input', '.', 'x', '>=', '10', 'q', ':=', 'raw\\n', '']);
    expect(toks[7]).toMatchObject({ row: 2, col: 1, nl: true });
    expect(toks[9].value).toBe('raw\\n');
  });

  it('keeps big integers exact and decodes escapes', () => {
    const toks = lex('123456789012345678901234567890 1.5e3 "a\\u00e9\\n"', 'f.rego');
    expect(toks[0].value).toBe(123456789012345678901234567890n);
    expect(toks[1].value).toBe(1500);
    expect(toks[2].value).toBe('aé\n');
  });

  it('marks keywords followed by a dot so they can be ref segments', () => {
    const toks = lex('if.foo', 'f.rego');
    expect(toks[0]).toMatchObject({ text: 'if', dotAfter: true });
  });

  it('splits string templates into literal and expression parts', () => {
    const [t] = lex('$"a {x} \\{y}"', 'f.rego');
    expect(t.type).toBe('template');
    expect(t.parts!.map((p) => [p.lit, p.text])).toEqual([[true, 'a '], [false, 'x'], [true, ' {y}']]);
  });

  it('reports illegal tokens with a location', () => {
    try { lex('p := 1\nq := ^', 'f.rego'); throw new Error('no error'); } catch (e) {
      expect(e).toBeInstanceOf(RegoError);
      expect(e).toMatchObject({ code: 'rego_parse_error', location: { file: 'f.rego', row: 2, col: 6 } });
    }
  });
});
