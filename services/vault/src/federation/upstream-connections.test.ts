import { SecretMasker } from '../secrets/secret-masker';
import { nestsDeeperThan, remember } from './upstream-connections';

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

describe('remember: the secrets a connection sent', () => {
  test('a secret sent on every request is kept while rotating access tokens come and go', () => {
    const open = { secrets: new Set<string>(), masker: new SecretMasker([]) };
    for (let i = 0; i < 40; i++) remember(open, ['client-secret-kept', `access-token-number-${i}`]);
    expect(open.secrets.size).toBe(16);
    expect(open.masker.text('x client-secret-kept y')).toBe('x [redacted] y');
    expect(open.masker.text('access-token-number-39')).toBe('[redacted]');
    // the oldest tokens, no longer sent, are the ones dropped
    expect(open.secrets.has('access-token-number-0')).toBe(false);
  });
});
