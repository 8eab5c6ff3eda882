import { paramsJsonOf } from './decision-recorder';

describe('paramsJsonOf', () => {
  it('is the Json message of the params (JSON.stringify), made once per params object', () => {
    const p = { q: 'weather', n: 3, nested: { a: [1, 'b'] } };
    const s = paramsJsonOf(p);
    expect(s).toEqual({ text: JSON.stringify(p) });
    expect(paramsJsonOf(p)).toBe(s);
    expect(paramsJsonOf({ ...p, n: 4 })).toEqual({ text: JSON.stringify({ ...p, n: 4 }) });
  });
});
