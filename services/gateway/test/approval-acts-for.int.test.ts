/**
 * Approved actions carry their human (docs/federation.md, "Per-user connections"): a queued call keeps
 * the human it acted for (`acts_for_user_id`), and the approval executes it with that human's connection
 * of a per_user upstream (the broker's `userId`), never the approver's; a call that acted for nobody
 * executes for nobody. Real Postgres, a real audit service in process and a real NATS connection.
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalRepository, Db } from '@agw/shared';
import { type ApprovalsBed, startApprovalsBed } from './support/approvals-bed';
import { type TestMember, addTestMember, createTestTenant } from './support/tenants';
import { ApprovalQueue } from '../src/approvals/approval-queue';
import type { DecisionRecorder } from '../src/pipeline/decision-recorder';

let bed: ApprovalsBed;
let db: Db;
let recorder: DecisionRecorder;
let repo: ApprovalRepository;

/** A broker that keeps what each execution was asked to act with. */
function recordingBroker() {
  const calls: Array<{ userId?: string; origin?: string }> = [];
  return {
    calls,
    execute: async (_tenantId: string, _actionId: string, req: { userId?: string; origin?: string }) => {
      calls.push({ ...(req.userId ? { userId: req.userId } : {}), origin: req.origin });
      return { status_code: 200, body: { issue: 'created' }, hsm_fetch_ms: 0, execution_ms: 1, credential_name: 'github' };
    },
  };
}

beforeAll(async () => {
  // the audit service's own definition, as main.ts runs it, in this process
  bed = await startApprovalsBed('AFR', 'approval-acts-for-test');
  ({ db, recorder, repo } = bed);
});
afterAll(async () => {
  await bed.close();
});

async function tenant(): Promise<{ id: string; alice: TestMember; bob: TestMember }> {
  const id = await createTestTenant(db, 'AFR');
  const member = (name: string) => addTestMember(db, id, `${name}-${id.slice(0, 8)}@acts-for.test`, 'approver');
  return { id, alice: await member('alice'), bob: await member('bob') };
}

async function queue(tenantId: string, actsFor?: string): Promise<string> {
  const actionId = randomUUID();
  await repo.enqueue(tenantId, {
    action_id: actionId,
    agent_id: 'triage-agent',
    agent_type: 'assistant',
    agent_version: '1.0.0',
    tool: 'github',
    method: 'create_issue',
    params: { title: 'flaky test' },
    opa_result: { requires_human: true, violations: ['write_to_repo'], severity: 'medium' },
    queue_reason: 'policy',
    queued_at: new Date(),
    session_id: null,
    params_sha256: 'b'.repeat(64),
    bundle_revision: 'rev-1',
    requested_by_key: null,
    expires_at: new Date(Date.now() + 3600_000),
    ...(actsFor ? { acts_for_user_id: actsFor } : {}),
  });
  return actionId;
}

describe('an approved action', () => {
  it("executes with the connection of the human its call acted for, not the approver's", async () => {
    const t = await tenant();
    const broker = recordingBroker();
    const q = new ApprovalQueue(repo, recorder, broker);
    const id = await queue(t.id, t.alice.id);
    expect((await repo.get(t.id, id))?.acts_for_user_id).toBe(t.alice.id);
    const out = await q.decide(t.id, id, 'approved', { name: t.bob.email, member: t.bob }, null);
    expect(out).toMatchObject({ status: 'approved', execution_mode: 'gateway_brokered', execution_result: { status_code: 200 } });
    expect(broker.calls).toEqual([{ userId: t.alice.id, origin: 'approval' }]);
  });

  it('that acted for nobody executes for nobody (a per_user upstream refuses it)', async () => {
    const t = await tenant();
    const broker = recordingBroker();
    const q = new ApprovalQueue(repo, recorder, broker);
    const id = await queue(t.id);
    expect((await repo.get(t.id, id))?.acts_for_user_id).toBeNull();
    await q.decide(t.id, id, 'approved', { name: t.bob.email, member: t.bob }, null);
    expect(broker.calls).toEqual([{ origin: 'approval' }]);
  });
});
