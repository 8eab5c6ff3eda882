import { MAX_JSON_DEPTH, checkJson } from './input-guard';

const nested = (n: number) => {
  let v: unknown = 'leaf';
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};

describe('input guard', () => {
  it('finds a NUL or a lone surrogate in any value or key, with its loc', () => {
    expect(checkJson({ tool: 'x\u0000y' })).toEqual([['body', 'tool'], expect.stringContaining('NUL'), 'string_invalid']);
    expect(checkJson({ params: { list: ['ok', 'bad\uD800'] } })?.[0]).toEqual(['body', 'params', 'list', 1]);
    expect(checkJson({ params: { ['k\u0000']: 1 } })?.[0]).toEqual(['body', 'params', 'k\u0000']);
    expect(checkJson({ ok: 'emoji 😀 and accents é' })).toBeUndefined();
  });

  it('limits nesting without recursion, even at 100,000 levels', () => {
    expect(checkJson(nested(MAX_JSON_DEPTH - 1))).toBeUndefined();
    expect(checkJson(nested(MAX_JSON_DEPTH + 1))?.[2]).toBe('too_deep');
    expect(checkJson(nested(100_000))?.[2]).toBe('too_deep');
  });

  it('refuses __proto__ keys', () => {
    expect(checkJson(JSON.parse('{"params":{"__proto__":{"admin":true}}}'))).toEqual([['body', 'params', '__proto__'], 'the key __proto__ is not allowed', 'key_invalid']);
    expect(checkJson({ constructor: 'fine as a plain key' })).toBeUndefined();
  });

  it('checks query values the same way', () => {
    expect(checkJson({ event: 'a\u0000' }, ['query'])?.[0]).toEqual(['query', 'event']);
  });
});
