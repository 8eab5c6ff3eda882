import { approvalPatternFor, mayRequireApproval } from './approval-patterns';

describe('require_human_approval patterns', () => {
  it('match the tool name or tool.method with * and ?', () => {
    expect(approvalPatternFor(['svc_send_*'], 'svc_send_email', 'send')).toBe('svc_send_*');
    expect(approvalPatternFor(['svc_payments.transfer'], 'svc_payments', 'transfer')).toBe('svc_payments.transfer');
    expect(approvalPatternFor(['svc_db.d?lete'], 'svc_db', 'delete')).toBe('svc_db.d?lete');
    expect(approvalPatternFor(['svc_send_*'], 'svc_web_search', 'search')).toBeUndefined();
    expect(approvalPatternFor(undefined, 'x', 'y')).toBeUndefined();
  });
  it('treat regex characters literally', () => {
    expect(approvalPatternFor(['svc.(x)'], 'svcA(x)', 'm')).toBeUndefined();
    expect(approvalPatternFor(['svc.(x)'], 'svc.(x)', 'm')).toBe('svc.(x)');
  });
});

describe('mayRequireApproval', () => {
  it('marks a credential tool that a name or tool.method pattern can match', () => {
    expect(mayRequireApproval(['send_email'], { name: 'send_email' })).toBe(true);
    expect(mayRequireApproval(['email.send'], { name: 'email' })).toBe(true);
    expect(mayRequireApproval(['*.delete'], { name: 'files' })).toBe(true);
    expect(mayRequireApproval(['email.send'], { name: 'calendar' })).toBe(false);
    expect(mayRequireApproval([], { name: 'email' })).toBe(false);
  });
  it('knows a federated tool exactly: its MCP name, its upstream, or upstream.tool', () => {
    expect(mayRequireApproval(['mail__send'], { name: 'mail__send', upstream: 'mail', method: 'send' })).toBe(true);
    expect(mayRequireApproval(['mail.send'], { name: 'mail__send', upstream: 'mail', method: 'send' })).toBe(true);
    expect(mayRequireApproval(['mail.send'], { name: 'mail__list', upstream: 'mail', method: 'list' })).toBe(false);
    expect(mayRequireApproval(['mail'], { name: 'mail__list', upstream: 'mail', method: 'list' })).toBe(true);
  });
});
