import { mayContainPii } from './may-contain-pii';

describe('mayContainPii (the gateway skips the vault when false)', () => {
  it('is false for params without personal data', () => {
    expect(mayContainPii({ q: 'weather in Paris', page: 2, filters: { lang: 'en', tags: ['a', 'b'] }, flag: true, none: null })).toBe(false);
    expect(mayContainPii({ amount: 9000, currency: 'EUR', table: 'orders', limit: 1000 })).toBe(false);
  });

  it.each([
    [{ to: 'jane@example.com' }],
    [{ nested: { deep: [{ note: 'call +44 20 7946 0958 today' }] } }],
    [{ iban: 'DE89 3704 0044 0532 0130 00' }],
    [{ card: '4111 1111 1111 1111' }],
    [{ client: '192.168.10.20' }],
    [{ name: 'Jane Doe' }],
    [{ person: { ssn: '123-45-6789' } }],
    [{ already: { $pii: { v: 1 } } }],
  ])('is true when the vault would protect something: %j', (params) => {
    expect(mayContainPii(params as Record<string, unknown>)).toBe(true);
  });
});
