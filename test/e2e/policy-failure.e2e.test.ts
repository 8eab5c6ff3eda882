/**
 * E2E: the failure modes with the policy service really stopped (scripts/fleet.mjs control endpoint):
 * fail-closed (default) answers 502 and allows nothing, fail-open allows and audits it with its own
 * violation id, fail_to_queue puts the call in the approval queue (202).
 */
import { type Tenant, api, call, eventually, fleet, patientTenant } from './support/api';

jest.setTimeout(180_000);

async function auditRecord(key: string, actionId: string) {
  const r = await api('GET', '/audit/log?limit=1000', { key });
  return r.body.records.find((x: { action_id: string }) => x.action_id === actionId);
}

describe('failure modes with the policy service stopped', () => {
  let closed: Tenant;
  let open: Tenant;
  let queued: Tenant;

  beforeAll(async () => {
    closed = await patientTenant('Fail closed');
    open = await patientTenant('Fail open');
    queued = await patientTenant('Fail to queue');
    expect((await api('PATCH', '/dashboard/settings', { key: open.apiKey, body: { failure_config: { mode: 'fail-open' } } })).status).toBe(200);
    expect((await api('PATCH', '/dashboard/settings', { key: queued.apiKey, body: { failure_config: { mode: 'fail_to_queue' } } })).status).toBe(200);
    // all three work while the policy service runs
    for (const t of [closed, open, queued]) expect((await call(t.apiKey)).status).toBe(200);
    await fleet('stop', 'policy');
  });

  afterAll(async () => {
    await fleet('start', 'policy');
  });

  test('fail-closed (default): 502, nothing allowed, the refusal is audited', async () => {
    const r = await call(closed.apiKey, { method: 'read' });
    expect(r.status).toBe(502);
    expect(String(r.body.detail)).toMatch(/^Policy engine unreachable/);
    const log = await api('GET', '/audit/log?limit=5', { key: closed.apiKey });
    expect(log.body.records[0]).toMatchObject({ decision: 'deny', violations: ['policy_engine_unavailable'], bundle_revision: 'unavailable' });
    // a destructive call is not queued either
    expect((await call(closed.apiKey, { method: 'delete' })).status).toBe(502);
  });

  test('fail-open: allowed and audited with a violation id that says so', async () => {
    const r = await call(open.apiKey, { method: 'read' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('allowed');
    expect(r.body.violations).toEqual(['policy_engine_unavailable_fail_open']);
    const rec = await auditRecord(open.apiKey, r.body.action_id);
    expect(rec).toMatchObject({ decision: 'allow', violations: ['policy_engine_unavailable_fail_open'], bundle_revision: 'unavailable' });
    expect(rec.details.failure_mode).toBe('fail-open');
  });

  test('fail_to_queue: 202 into the approval queue', async () => {
    const r = await call(queued.apiKey, { method: 'read' });
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('pending_approval');
    const q = await api('GET', '/approvals', { key: queued.apiKey });
    const item = q.body.pending.find((p: { action_id: string }) => p.action_id === r.body.action_id);
    expect(item).toBeDefined();
    expect(item.opa_result).toMatchObject({ requires_human: true, violations: ['policy_engine_unavailable_queued'] });
    expect((await auditRecord(queued.apiKey, r.body.action_id)).decision).toBe('requires_human');
  });

  test('after a restart the policy decides again, with the policy that was in force', async () => {
    await fleet('start', 'policy');
    await eventually(async () => (await call(closed.apiKey)).status === 200, 30_000, 500);
    expect((await call(closed.apiKey, { method: 'delete' })).status).toBe(202);
    expect((await call(open.apiKey, { method: 'delete' })).status).toBe(202);
  });
});
