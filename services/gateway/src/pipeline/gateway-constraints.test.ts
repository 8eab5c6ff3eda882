import { gatewayConstraintsSchema, parsedConstraints } from './gateway-constraints';

describe('parsedConstraints', () => {
  it('parses a settings value as the schema does, once per object', () => {
    const value = { blocked_domains: [' Evil.COM '], cooldown: { violations: 3 } };
    const c = parsedConstraints(value);
    expect(c).toEqual(gatewayConstraintsSchema.parse(value));
    expect(c).toEqual({ blocked_domains: ['evil.com'], cooldown: { violations: 3, window_seconds: 3600, cooldown_seconds: 900 } });
    expect(parsedConstraints(value)).toBe(c);
  });

  it('a new settings object (a re-read or a change) is parsed again', () => {
    const a = parsedConstraints({ daily_caps: { actions_per_agent: 5 } });
    const b = parsedConstraints({ daily_caps: { actions_per_agent: 6 } });
    expect(a.daily_caps?.actions_per_agent).toBe(5);
    expect(b.daily_caps?.actions_per_agent).toBe(6);
  });

  it('absent, not an object, or invalid: no constraints', () => {
    expect(parsedConstraints(undefined)).toEqual({});
    expect(parsedConstraints(null)).toEqual({});
    expect(parsedConstraints('evil.com')).toEqual({});
    const invalid = { blocked_domains: ['not a domain'], extra: 1 };
    expect(parsedConstraints(invalid)).toEqual({});
    expect(parsedConstraints(invalid)).toBe(parsedConstraints(invalid));
  });
});
