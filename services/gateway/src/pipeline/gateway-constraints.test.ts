import { StoreUnavailableError, createRedis } from '@agw/shared';
import { RedisGatewayConstraints, gatewayConstraintsSchema, parsedConstraints } from './gateway-constraints';
import type { ToolCallRequest } from './tool-call.schema';

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

describe('RedisGatewayConstraints with its Redis unreachable', () => {
  it('refuses the call as a store that is down (503 naming Redis), not as a peer (502)', async () => {
    const redis = createRedis('redis://127.0.0.1:1'); // nothing listens on port 1
    try {
      const constraints = new RedisGatewayConstraints(redis);
      const call = { agent_id: 'a', tool: 'svc_web_search', method: 'search', params: {} } as unknown as ToolCallRequest;
      const err = await constraints.check('t1', call, { gateway_constraints: { daily_caps: { actions_per_agent: 5 } } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(err).toMatchObject({ code: 'store_unavailable', store: 'Redis', message: 'Redis is unreachable (gateway)', retryAfterSeconds: expect.any(Number) });
    } finally {
      redis.disconnect();
    }
  });
});
