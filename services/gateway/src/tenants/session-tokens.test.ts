import { SessionTokens } from './session-tokens';

describe('session-scoped MCP tokens', () => {
  const tokens = new SessionTokens('a-test-secret-of-enough-length', 3600);

  it('name their tenant and session, and are never taken for a user session', async () => {
    const t = await tokens.issueMcp('tenant-1', 'session-1', 600);
    expect(await tokens.verifyMcp(t)).toEqual({ tenantId: 'tenant-1', sessionId: 'session-1' });
    expect(await tokens.verify(t)).toBeUndefined();
  });

  it('name the member who started the session, whose connections its calls use', async () => {
    const t = await tokens.issueMcp('tenant-1', 'session-1', 600, 'user-1');
    expect(await tokens.verifyMcp(t)).toEqual({ tenantId: 'tenant-1', sessionId: 'session-1', actsFor: 'user-1' });
    expect(await tokens.verify(t)).toBeUndefined();
  });

  it('are not made from user tokens, other keys or tampered text', async () => {
    const user = (await tokens.issue({ userId: 'u', tenantId: 't', email: 'e@x.test' })).access_token;
    expect(await tokens.verifyMcp(user)).toBeUndefined();
    expect(await tokens.verify(user)).toMatchObject({ userId: 'u', tenantId: 't' });
    const other = await new SessionTokens('another-secret-entirely', 3600).issueMcp('tenant-1', 'session-1', 600);
    expect(await tokens.verifyMcp(other)).toBeUndefined();
    expect(await tokens.verifyMcp('agw_not_a_jwt')).toBeUndefined();
  });
});
