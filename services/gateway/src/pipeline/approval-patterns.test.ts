import { approvalPatternFor } from './approval-patterns';

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
