/**
 * Four-eyes approvals against the real Postgres, a real audit service (its chain and gRPC server, in
 * process) and a real NATS connection: an action needing n distinct members' approvals is approved only by
 * the n-th member's vote (executed then, once); a member's second approval is a 409; the initiator (its
 * session, the owner of its API key) and callers that are no members get a 403; one rejection ends it; two
 * ApprovalQueue instances (two replicas) voting at once count each vote exactly once; every vote is its own
 * control_plane record naming the member, and the final record names every approver.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalRepository, type Db, createDb } from '@agw/shared';
import { type ApprovalsBed, startApprovalsBed } from './support/approvals-bed';
import { type TestMember, addTestMember, createTestTenant } from './support/tenants';
import { ApprovalQueue, type QuorumPending } from '../src/approvals/approval-queue';
import type { DecisionRecorder } from '../src/pipeline/decision-recorder';
import { newApiKey } from '../src/tenants/api-keys';

let bed: ApprovalsBed;
let db: Db;
let db2: Db;
let recorder: DecisionRecorder;
let repo: ApprovalRepository;

/** A broker that counts its executions: the upstream must be called once, after the last needed approval. */
function countingBroker() {
  const b = {
    calls: 0,
    execute: async () => {
      b.calls++;
      return { status_code: 200, body: { transferred: true }, hsm_fetch_ms: 0, execution_ms: 1, credential_name: 'bank' };
    },
  };
  return b;
}
/** stands in for the vault's PII envelope: the plaintext must not reach the chain */
const sealed = (email: string) => ({ $pii: { sealed: Buffer.from(email).toString('base64') } });
const pseudonymise = async (_t: string, _a: string, email: string) => sealed(email);

beforeAll(async () => {
  // the audit service's own definition, as main.ts runs it, in this process
  bed = await startApprovalsBed('QRM', 'approval-quorum-test');
  ({ db, recorder, repo } = bed);
  db2 = createDb(bed.url);
});
afterAll(async () => {
  await bed.close();
  await db2.destroy();
});

async function tenant(settings: Record<string, unknown> = { required_approvers: 2 }): Promise<{ id: string; owner: TestMember; a: TestMember; b: TestMember; c: TestMember }> {
  const id = await createTestTenant(db, 'QRM', settings);
  const member = (name: string, role: 'owner' | 'approver') => addTestMember(db, id, `${name}-${id.slice(0, 8)}@quorum.test`, role);
  return { id, owner: await member('owner', 'owner'), a: await member('alice', 'approver'), b: await member('bob', 'approver'), c: await member('carol', 'approver') };
}

async function queue(r: ApprovalRepository, tenantId: string, o: { initiator?: string; key?: string; policy?: number; platform?: boolean } = {}): Promise<string> {
  const actionId = randomUUID();
  await r.enqueue(tenantId, {
    action_id: actionId,
    agent_id: 'treasury-agent',
    agent_type: 'assistant',
    agent_version: '1.0.0',
    tool: 'bank',
    method: 'transfer',
    params: { amount: 250000, currency: 'EUR' },
    opa_result: { requires_human: true, violations: ['large_transfer'], severity: 'medium' },
    queue_reason: o.platform ? 'platform_confirmation' : 'policy',
    queued_at: new Date(),
    ...(o.platform ? { session_id: null, platform_tool_use_id: 'sevt_1' } : {}),
    session_id: null,
    params_sha256: 'a'.repeat(64),
    bundle_revision: 'rev-1',
    requested_by_key: o.key ?? null,
    expires_at: new Date(Date.now() + 3600_000),
    ...(o.policy ? { required_approvers: o.policy } : {}),
    ...(o.initiator ? { initiator_user_id: o.initiator } : {}),
  });
  return actionId;
}

const as = (m: TestMember) => ({ name: m.email, member: m });
const records = async (tenantId: string, actionId: string) => (await bed.audit.client.getByAction({ tenant_id: tenantId, action_id: actionId })).records.map((r) => r.entry!);

describe('the number of approvers', () => {
  it('is the stricter of the tenant setting and the policy (the row keeps it)', async () => {
    const t = await tenant({ required_approvers: 2 });
    expect((await repo.get(t.id, await queue(repo, t.id)))?.required_approvers).toBe(2);
    expect((await repo.get(t.id, await queue(repo, t.id, { policy: 3 })))?.required_approvers).toBe(3);
    const one = await tenant({});
    expect((await repo.get(one.id, await queue(repo, one.id)))?.required_approvers).toBe(1);
    expect((await repo.get(one.id, await queue(repo, one.id, { policy: 2 })))?.required_approvers).toBe(2);
  });
});

describe('votes', () => {
  it('counts distinct members: the first approval is pending (nothing runs), a second by the same member is a 409, the second member approves and executes once', async () => {
    const t = await tenant();
    const broker = countingBroker();
    const q = new ApprovalQueue(repo, recorder, broker, { pseudonymise });
    const id = await queue(repo, t.id);
    const first = (await q.decide(t.id, id, 'approved', as(t.a), 'looks fine')) as QuorumPending;
    expect(first).toMatchObject({ status: 'pending', action_id: id, required: 2, approvals: [{ member_id: t.a.id, email: t.a.email }] });
    expect(broker.calls).toBe(0);
    expect((await repo.get(t.id, id))?.status).toBe('pending');
    await expect(q.decide(t.id, id, 'approved', as(t.a), null)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining(`${t.a.email} approved action ${id} already`) });
    const second = await q.decide(t.id, id, 'approved', as(t.b), null);
    expect(second).toMatchObject({ status: 'approved', action_id: id, execution_mode: 'gateway_brokered', execution_result: { status_code: 200 } });
    expect(broker.calls).toBe(1);
    const row = await repo.get(t.id, id);
    expect(row?.status).toBe('approved');
    expect(row?.decided_by).toBe(`${t.a.email}, ${t.b.email}`);
    await expect(q.decide(t.id, id, 'approved', as(t.c), null)).rejects.toMatchObject({ code: 'conflict', message: `Action ${id} is already approved` });
    expect(broker.calls).toBe(1);

    // every vote is its own record naming the member (e-mail pseudonymised); the final one names both approvers
    const recs = await records(t.id, id);
    const votes = recs.filter((r) => r.source === 'control_plane' && JSON.parse(r.details!.text).approval === 'vote');
    expect(votes.map((r) => JSON.parse(r.details!.text).member)).toEqual([
      { id: t.a.id, email: sealed(t.a.email) },
      { id: t.b.id, email: sealed(t.b.email) },
    ]);
    expect(votes.map((r) => r.decision)).toEqual(['requires_human', 'requires_human']);
    const final = recs.filter((r) => r.source === 'control_plane' && JSON.parse(r.details!.text).approval === 'approved');
    expect(final).toHaveLength(1);
    expect(final[0].decision).toBe('allow');
    expect(JSON.parse(final[0].details!.text)).toMatchObject({
      approvers: [
        { id: t.a.id, email: sealed(t.a.email) },
        { id: t.b.id, email: sealed(t.b.email) },
      ],
      required_approvers: 2,
    });
    expect(JSON.stringify(recs)).not.toContain(t.a.email);
  });

  it('never counts the initiator: its own session, or the member who issued the API key that made the call', async () => {
    const t = await tenant();
    const q = new ApprovalQueue(repo, recorder, countingBroker());
    const bySession = await queue(repo, t.id, { initiator: t.a.id });
    await expect(q.decide(t.id, bySession, 'approved', as(t.a), null)).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining(`${t.a.email} started action ${bySession}`) });
    const key = newApiKey('agent');
    await db.insertInto('api_keys').values({ id: key.id, tenant_id: t.id, key_hash: key.keyHash, key_prefix: key.keyPrefix, scope: 'agent', name: 'treasury', created_by: `user:${t.b.email}` }).execute();
    const byKey = await queue(repo, t.id, { key: key.keyHash });
    await expect(q.decide(t.id, byKey, 'approved', as(t.b), null)).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('the initiator of an action never counts as its approver') });
    // a caller that is no member (the tenant key, a session made from a key) cannot vote
    await expect(q.decide(t.id, byKey, 'approved', { name: `api_key:${t.id}`, caller: 'an API key' }, null)).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('an API key is no member and cannot count as an approver'),
    });
    expect(await repo.votes(t.id, [bySession, byKey])).toEqual(new Map());
    // the others still can
    expect(await q.decide(t.id, byKey, 'approved', as(t.a), null)).toMatchObject({ status: 'pending' });
    expect(await q.decide(t.id, byKey, 'approved', as(t.c), null)).toMatchObject({ status: 'approved' });
  });

  it('ends with one rejection by any of them, after approvals or before', async () => {
    const t = await tenant();
    const broker = countingBroker();
    const q = new ApprovalQueue(repo, recorder, broker);
    const id = await queue(repo, t.id);
    expect(await q.decide(t.id, id, 'approved', as(t.a), null)).toMatchObject({ status: 'pending' });
    expect(await q.decide(t.id, id, 'rejected', as(t.b), 'too large')).toMatchObject({ status: 'rejected' });
    await expect(q.decide(t.id, id, 'approved', as(t.c), null)).rejects.toMatchObject({ code: 'conflict', message: `Action ${id} is already rejected` });
    expect(broker.calls).toBe(0);
    expect((await repo.get(t.id, id))?.decided_by).toBe(t.b.email);
  });
});

describe('managed sessions', () => {
  it("a platform confirmation request (queued by the managed service with the tenant's setting) waits for two approvers; the platform runs it, the gateway executes nothing", async () => {
    const t = await tenant();
    const broker = countingBroker();
    const q = new ApprovalQueue(repo, recorder, broker);
    const id = await queue(repo, t.id, { platform: true });
    expect((await repo.get(t.id, id))?.required_approvers).toBe(2);
    expect(await q.decide(t.id, id, 'approved', as(t.a), null)).toMatchObject({ status: 'pending', required: 2 });
    expect((await repo.get(t.id, id))?.status).toBe('pending');
    const done = await q.decide(t.id, id, 'approved', as(t.b), null);
    expect(done).toMatchObject({ status: 'approved', action_id: id });
    expect(done).not.toHaveProperty('execution_mode');
    expect(broker.calls).toBe(0);
  });
});

describe('two replicas at once', () => {
  it('counts two members approving in parallel exactly once each: one approves, the action runs once', async () => {
    const t = await tenant();
    for (let i = 0; i < 5; i++) {
      const broker = countingBroker();
      const q1 = new ApprovalQueue(repo, recorder, broker);
      const q2 = new ApprovalQueue(new ApprovalRepository(db2), recorder, broker);
      const id = await queue(repo, t.id);
      const answers = await Promise.all([q1.decide(t.id, id, 'approved', as(t.a), null), q2.decide(t.id, id, 'approved', as(t.b), null)]);
      expect(answers.map((a) => a.status).sort()).toEqual(['approved', 'pending']);
      expect(broker.calls).toBe(1);
      expect((await repo.votes(t.id, [id])).get(id)?.map((v) => v.member_id).sort()).toEqual([t.a.id, t.b.id].sort());
      const finals = (await records(t.id, id)).filter((r) => r.source === 'control_plane' && JSON.parse(r.details!.text).approval === 'approved');
      expect(finals).toHaveLength(1);
    }
  });

  it('counts one member approving twice at once (two replicas) once: one answer is pending, the other a 409', async () => {
    const t = await tenant({ required_approvers: 3 });
    const q1 = new ApprovalQueue(repo, recorder, countingBroker());
    const q2 = new ApprovalQueue(new ApprovalRepository(db2), recorder, countingBroker());
    const id = await queue(repo, t.id);
    const settled = await Promise.allSettled([q1.decide(t.id, id, 'approved', as(t.a), null), q2.decide(t.id, id, 'approved', as(t.a), null)]);
    expect(settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<unknown>).value)).toEqual([
      expect.objectContaining({ status: 'pending', required: 3, approvals: [expect.objectContaining({ member_id: t.a.id })] }),
    ]);
    expect(settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason.code)).toEqual(['conflict']);
    expect((await repo.votes(t.id, [id])).get(id)).toHaveLength(1);
  });
});
