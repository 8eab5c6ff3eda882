import { RObject, RSet, fromJS, toJS, type Value } from '../value';
import { BUILTINS } from './index';
import { BuiltinError } from './types';

const ctx = { nowNs: 0n, strict: true, builtinCache: new Map<string, unknown>() };
const call = (name: string, ...args: unknown[]): unknown => {
  const bi = BUILTINS.get(name);
  if (!bi) throw new Error(`no builtin ${name}`);
  const r = bi.fn(args.map((a) => fromJS(a)), ctx) as Value | undefined;
  return r === undefined ? undefined : toJS(r);
};

describe('builtins', () => {
  it('sprintf follows Go verbs', () => {
    expect(call('sprintf', 'restricted_field_modification_%s', ['ssn'])).toBe('restricted_field_modification_ssn');
    expect(call('sprintf', '%d items, %.2f EUR, %v, %q', [3, 12.5, { a: [1] }, 'x'])).toBe('3 items, 12.50 EUR, {"a": [1]}, "x"');
    expect(call('sprintf', '%05d|%-4s|%x', [42, 'ab', 255])).toBe('00042|ab  |ff');
  });

  it('format_int, trim, split, replace, indexof', () => {
    expect(call('format_int', 255, 16)).toBe('ff');
    expect(call('trim', '..a..', '.')).toBe('a');
    expect(call('trim_prefix', 'svc_email', 'svc_')).toBe('email');
    expect(call('split', 'a.b', '.')).toEqual(['a', 'b']);
    expect(call('replace', 'a-b-c', '-', '+')).toBe('a+b+c');
    expect(call('indexof', 'héllo', 'l')).toBe(2);
  });

  it('units and numbers', () => {
    expect(call('units.parse_bytes', '1.5KiB')).toBe(1536);
    expect(call('units.parse', '250m')).toBe(0.25);
    expect(call('numbers.range', 1, 3)).toEqual([1, 2, 3]);
    expect(call('plus', 9007199254740992n, 1)).toBe(9007199254740993n);
    expect(call('div', 7, 2)).toBe(3.5);
    expect(() => call('div', 1, 0)).toThrow(BuiltinError);
  });

  it('time', () => {
    const ns = call('time.parse_rfc3339_ns', '2026-01-05T14:30:00+01:00') as number;
    expect(BigInt(ns)).toBe(BigInt(Date.UTC(2026, 0, 5, 13, 30)) * 1000000n);
    expect(call('time.weekday', ns)).toBe('Monday');
    expect(call('time.clock', [ns, 'Europe/Berlin'])).toEqual([14, 30, 0]);
    expect(call('time.date', call('time.add_date', ns, 0, 1, 0))).toEqual([2026, 2, 5]);
  });

  it('net.cidr_*', () => {
    expect(call('net.cidr_contains', '10.0.0.0/8', '10.1.2.3')).toBe(true);
    expect(call('net.cidr_contains', '10.0.0.0/8', '11.1.2.3')).toBe(false);
    expect(call('net.cidr_intersects', '10.0.0.0/8', '10.2.0.0/16')).toBe(true);
    expect(call('net.cidr_merge', ['192.0.128.0/24', '192.0.129.0/24'])).toEqual(['192.0.128.0/23']);
    expect(call('net.cidr_contains', 'fd00::/8', 'fd00::1')).toBe(true);
  });

  it('objects and encoding', () => {
    expect(call('object.get', { a: { b: 1 } }, ['a', 'b'], 0)).toBe(1);
    expect(call('object.union', { a: { b: 1 } }, { a: { c: 2 } })).toEqual({ a: { b: 1, c: 2 } });
    expect(call('object.remove', { a: 1, b: 2 }, ['a'])).toEqual({ b: 2 });
    expect(call('json.marshal', { b: [1], a: 'x' })).toBe('{"a":"x","b":[1]}');
    expect(call('json.unmarshal', '{"n": 12345678901234567890}')).toEqual({ n: 12345678901234567890n });
    expect(call('base64.encode', 'hi')).toBe('aGk=');
    expect(call('urlquery.encode_object', { q: 'a b', x: ['1', '2'] })).toBe('q=a+b&x=1&x=2');
  });

  it('regex and glob', () => {
    expect(call('regex.match', '^(delete|drop)([_.:-].*)?$', 'delete_all')).toBe(true);
    expect(call('regex.find_all_string_submatch_n', '@([a-z.]+)', 'a@x.com, b@y.org', -1)).toEqual([['@x.com', 'x.com'], ['@y.org', 'y.org']]);
    expect(call('glob.match', '*.example.com', ['.'], 'api.example.com')).toBe(true);
    expect(call('glob.match', '*.example.com', ['.'], 'a.b.example.com')).toBe(false);
    expect(call('glob.match', '**.example.com', ['.'], 'a.b.example.com')).toBe(true);
  });

  it('crypto, semver, jwt decode, graph', () => {
    expect(call('crypto.sha256', 'abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(call('crypto.hmac.sha256', 'msg', 'key')).toBe('2d93cbc1be167bcb1637a4a23cbff01a7878f0c50ee833954ea5221bb1b8c628');
    expect(call('semver.compare', '1.2.3', '1.10.0')).toBe(-1);
    expect(call('semver.compare', '1.0.0-alpha', '1.0.0')).toBe(-1);
    expect(call('semver.is_valid', 'v1.0.0')).toBe(false);
    expect(call('io.jwt.decode', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toEqual([{ alg: 'HS256' }, { sub: 'x' }, '736967']);
    expect(call('graph.reachable', { a: ['b'], b: ['c'], c: [] }, ['a'])).toEqual(['a', 'b', 'c']);
  });

  it('yaml subset', () => {
    expect(call('yaml.unmarshal', 'k: v\nlist:\n  - 1\n  - name: x\n    age: 3\nflow: [a, {b: 2}]\n')).toEqual({ k: 'v', list: [1, { name: 'x', age: 3 }], flow: ['a', { b: 2 }] });
    expect(call('yaml.marshal', [{ foo: [1, 2] }])).toBe('- foo:\n  - 1\n  - 2\n');
    expect(call('yaml.is_valid', 'a: {')).toBe(false);
    expect(() => call('yaml.unmarshal', '[1,2,3')).toThrow('yaml: line 1: did not find');
  });

  it('regex.globs_match intersects simple patterns', () => {
    expect(call('regex.globs_match', 'a.a.[0-9]+z', '.b.b2359825792*594823z')).toBe(true);
    expect(call('regex.globs_match', '[a-z]+', '[0-9]*')).toBe(false);
    expect(() => call('regex.globs_match', 'pqrs]', '[a-b]+')).toThrow("set-close ']' with no preceding '['");
  });

  it('type errors name the operand', () => {
    expect(() => call('object.keys', 'x')).toThrow('object.keys: operand 1 must be object but got string');
    expect(() => call('count', 1)).toThrow('count: operand 1 must be one of {array, object, set, string} but got number');
  });

  it('walk enumerates paths', () => {
    const bi = BUILTINS.get('walk')!;
    const r = bi.fn([fromJS({ a: [1] })], ctx) as Value[];
    expect(r.map((x) => toJS(x))).toEqual([[[], { a: [1] }], [['a'], [1]], [['a', 0], 1]]);
    void RObject; void RSet;
  });
});
