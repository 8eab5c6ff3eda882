import { paramsJsonOf } from './decision-recorder';

describe('paramsJsonOf', () => {
  it('is JSON.stringify of the params, made once per params object', () => {
    const p = { q: 'weather', n: 3, nested: { a: [1, 'b'] } };
    const s = paramsJsonOf(p);
    expect(s).toBe(JSON.stringify(p));
    expect(paramsJsonOf(p)).toBe(s);
    expect(paramsJsonOf({ ...p, n: 4 })).toBe(JSON.stringify({ ...p, n: 4 }));
  });
});
