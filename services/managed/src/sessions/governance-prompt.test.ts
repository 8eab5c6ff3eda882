import { governedSystemPrompt, promptHash } from './governance-prompt';
import { derivedActionId } from './session-recorder';

const ctx = { sessionId: 's-1', configName: 'ops', allowedTools: ['svc_a', 'svc_b'], requireHumanApproval: ['svc_b'], maxSessionHours: 2, mcpServerName: 'agw-governance' };

describe('governance prompt', () => {
  it('follows the config prompt and names the tools, the approvals and the limit', () => {
    const p = governedSystemPrompt('You answer tickets.', ctx);
    expect(p.startsWith('You answer tickets.\n\n## Governance')).toBe(true);
    expect(p).toContain('svc_a, svc_b');
    expect(p).toContain('wait for a human approval: svc_b');
    expect(p).toContain('at most 2 hours');
    expect(governedSystemPrompt(null, ctx).startsWith('## Governance')).toBe(true);
  });

  it('hashes to a stable SHA-256 that changes with any instruction', () => {
    const p = governedSystemPrompt(null, ctx);
    expect(promptHash(p)).toMatch(/^[0-9a-f]{64}$/);
    expect(promptHash(p)).toBe(promptHash(governedSystemPrompt(null, ctx)));
    expect(promptHash(p)).not.toBe(promptHash(governedSystemPrompt(null, { ...ctx, maxSessionHours: 3 })));
  });
});

describe('derived action ids', () => {
  it('are UUIDs, stable for one platform event and distinct across events', () => {
    const a = derivedActionId('session-1:sevt_1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedActionId('session-1:sevt_1')).toBe(a);
    expect(derivedActionId('session-1:sevt_2')).not.toBe(a);
  });
});
