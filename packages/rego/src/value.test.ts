import { LazyObject, RObject, RSet, canon, compare, equal, fromJS, fromJSLazy, keyOf, toJS, toJSONText, toRegoString } from './value';

describe('values', () => {
  it('compares numbers across number and bigint exactly', () => {
    expect(equal(1, 1.0)).toBe(true);
    expect(equal(9007199254740993n, 9007199254740992)).toBe(false);
    expect(compare(9007199254740993n, 9007199254740992)).toBe(1);
    expect(compare(2.5, 3n)).toBe(-1);
  });

  it('orders values like OPA: null < boolean < number < string < array < object < set', () => {
    const xs = [new RSet([1]), fromJS({ a: 1 }), [1], 'a', 1, true, null];
    expect(xs.sort(compare).map((x) => toRegoString(x))).toEqual(['null', 'true', '1', '"a"', '[1]', '{"a": 1}', '{1}']);
  });

  it('keys sets and objects by value', () => {
    const s = new RSet([[1, 2], [1, 2], fromJS({ b: 1, a: 2 }), fromJS({ a: 2, b: 1 }), '1', 1]);
    expect(s.size).toBe(4);
    const o = new RObject();
    o.set(1, 'num'); o.set('1', 'str'); o.set([1], 'arr');
    expect(o.get(1)).toBe('num');
    expect(o.get('1')).toBe('str');
    expect(o.get([1])).toBe('arr');
    expect(keyOf('\u0000x')).not.toBe(keyOf(null));
    expect(canon(new RSet([2, 1]))).toBe(canon(new RSet([1, 2])));
  });

  it('converts to plain JS: sets to sorted arrays, non-string keys to Map', () => {
    expect(toJS(new RSet(['b', 'a', 1]))).toEqual([1, 'a', 'b']);
    const o = new RObject(); o.set(2, 'x');
    expect(toJS(o)).toEqual(new Map([[2, 'x']]));
    expect(toJS(fromJS({ a: [1, { b: null }] }))).toEqual({ a: [1, { b: null }] });
  });

  it('prints JSON like Go (sorted keys, HTML escaped)', () => {
    expect(toJSONText(fromJS({ b: '<', a: [1, 2.5] }))).toBe('{"a":[1,2.5],"b":"\\u003c"}');
    expect(toJSONText(12345678901234567890n)).toBe('12345678901234567890');
  });
});

describe('lazy input objects', () => {
  it('converts members on demand and behaves like eager objects', () => {
    const src = { a: { b: [1, { c: 2 }] }, z: 'x', u: undefined };
    const lazy = fromJSLazy(src) as RObject;
    expect(lazy).toBeInstanceOf(LazyObject);
    expect(toJS(lazy.getStr('a')!)).toEqual({ b: [1, { c: 2 }] });
    expect(lazy.getStr('u')).toBeUndefined();
    expect(lazy.get(1)).toBeUndefined();
    expect(lazy.size).toBe(2);
    expect(equal(lazy, fromJS({ z: 'x', a: { b: [1, { c: 2 }] } }))).toBe(true);
    expect(toJS(lazy)).toEqual({ a: { b: [1, { c: 2 }] }, z: 'x' });
  });
});
