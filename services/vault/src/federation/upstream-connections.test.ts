import { nestsDeeperThan } from './upstream-connections';

describe('nestsDeeperThan', () => {
  const nest = (depth: number) => {
    let v: unknown = 'leaf';
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };

  test('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan(nest(64), 64)).toBe(false);
    expect(nestsDeeperThan(nest(65), 64)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [1, 2, { c: null }] }, 3)).toBe(false);
  });

  test('measures any depth without recursion', () => {
    expect(nestsDeeperThan(nest(200_000), 64)).toBe(true);
  });
});
