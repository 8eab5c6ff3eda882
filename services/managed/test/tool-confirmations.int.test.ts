/**
 * Delivery of platform confirmation answers against the real Postgres (confirmations/tool-confirmations.ts):
 * a request waiting for a human is not delivered; once its approval is decided (or expired) the sweep
 * delivers it even when the decision's NATS event was missed; two replicas never both send it; a platform
 * that refuses it for good makes it undeliverable, one that cannot be reached leaves it for the next sweep.
 * The agent platform is the one external part: a recording stand-in of `confirmToolUse` here.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalRepository, type Db, DependencyUnavailableError, createLogger, openTestDb } from '@agw/shared';
import { AgentConfigRepository } from '../src/agents/agent-config.repository';
import { AgentConfigs } from '../src/agents/agent-configs';
import { ConfirmationRepository } from '../src/confirmations/confirmation.repository';
import { ToolConfirmations } from '../src/confirmations/tool-confirmations';
import type { AgentPlatform } from '../src/platform/agent-platform';
import type { SessionRecorder } from '../src/sessions/session-recorder';
import { SessionRepository } from '../src/sessions/session.repository';

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db.destroy());

async function setup(platformFails?: () => Error | undefined) {
  const tenantId = randomUUID();
  await db.insertInto('tenants').values({ id: tenantId, slug: `tc-${tenantId}`, name: 'confirmations test' }).execute();
  const configs = new AgentConfigs(new AgentConfigRepository(db), 'm');
  const c = await configs.create(tenantId, { name: 'c', allowed_tools: ['svc_send_email'], require_human_approval: ['svc_send_*'], governance_profile: {} });
  const sessions = new SessionRepository(db);
  const reserved = await sessions.reserve(tenantId, { id: randomUUID(), agent_id: c.id, system_prompt_hash: 'h', mcp_server_url: 'u', bundle_revision: 'r', metadata: {}, expires_at: new Date(Date.now() + 3600_000) }, { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: null });
  const session = await sessions.setPlatform(tenantId, reserved.id, { anthropic_session_id: `sesn_${randomUUID()}`, platform_vault_id: 'v', environment_id: 'e' });
  const sent: Array<{ sessionId: string; toolUseId: string; result: string; denyMessage?: string }> = [];
  const recorded: string[] = [];
  const platform = {
    confirmToolUse: async (sessionId: string, x: { toolUseId: string; result: 'allow' | 'deny'; denyMessage?: string }) => {
      const e = platformFails?.();
      if (e) throw e;
      sent.push({ sessionId, ...x });
    },
  } as unknown as AgentPlatform;
  const recorder = { control: async (_s: unknown, f: { method: string }) => void recorded.push(f.method) } as unknown as SessionRecorder;
  const approvals = new ApprovalRepository(db);
  const confirmations = new ConfirmationRepository(db);
  const deps = { confirmations, approvals, sessions, configs, platform, policy: {} as never, vault: {} as never, recorder, approvalExpirySeconds: async () => undefined, logger: createLogger('t', 'silent') };
  /** a request queued for a human, as ToolConfirmations.request leaves it */
  const queue = async () => {
    const actionId = randomUUID();
    const toolUseId = `sevt_${randomUUID().slice(0, 8)}`;
    await approvals.enqueue(tenantId, {
      action_id: actionId, agent_id: c.id, agent_type: 'managed', agent_version: '1.0.0', tool: 'svc_send_email', method: 'send', params: {},
      opa_result: { requires_human: true, violations: [], severity: 'none' }, queue_reason: 'platform_confirmation', queued_at: new Date(), session_id: session.id,
      params_sha256: 'x', bundle_revision: 'r', requested_by_key: null, expires_at: new Date(Date.now() + 3600_000), platform_tool_use_id: toolUseId,
    });
    await confirmations.insert(tenantId, { action_id: actionId, session_id: session.id, tool_use_id: toolUseId, tool_name: 'svc_send_email' });
    return { actionId, toolUseId };
  };
  const mine = async () => (await confirmations.deliverable(10_000)).filter((r) => r.tenant_id === tenantId).map((r) => r.action_id);
  return { tenantId, session, sent, recorded, approvals, confirmations, queue, mine, replica: () => new ToolConfirmations(deps) };
}

describe('platform confirmation delivery', () => {
  it('waits for the human; the sweep delivers a decision whose event was missed, once, with the note', async () => {
    const t = await setup();
    const { actionId, toolUseId } = await t.queue();
    expect(await t.mine()).toEqual([]);
    await t.replica().sweep();
    expect(t.sent).toEqual([]);
    await t.approvals.decide(t.tenantId, actionId, 'rejected', 'reviewer@x', 'not this one', new Date(), () => ({ params_sha256: 'x', evaluated_bundle_revision: 'r', bundle_revision: 'r' }));
    expect(await t.mine()).toEqual([actionId]);
    // two replicas sweep at the same moment: one answer reaches the platform
    await Promise.all([t.replica().sweep(), t.replica().sweep(), t.replica().deliver(t.tenantId, actionId)]);
    expect(t.sent).toEqual([{ sessionId: t.session.anthropic_session_id, toolUseId, result: 'deny', denyMessage: 'Rejected by a reviewer: not this one' }]);
    expect(t.recorded).toEqual(['tool_confirmation']);
    expect(await t.mine()).toEqual([]);
    expect((await t.confirmations.find(t.tenantId, t.session.id, toolUseId))).toMatchObject({ state: 'sent', result: 'deny', reason: 'rejected' });
  });

  it('an unreachable platform leaves the answer for the next sweep; a platform that refuses it for good makes it undeliverable', async () => {
    let failure: Error | undefined = new DependencyUnavailableError('Agent platform tool confirmation failed: connect ECONNREFUSED');
    const t = await setup(() => failure);
    const { actionId, toolUseId } = await t.queue();
    await t.approvals.decide(t.tenantId, actionId, 'approved', 'reviewer@x', null, new Date(), () => ({ params_sha256: 'x', evaluated_bundle_revision: 'r', bundle_revision: 'r' }));
    await t.replica().sweep();
    expect(t.sent).toEqual([]);
    expect(await t.mine()).toEqual([actionId]); // still to deliver
    failure = undefined;
    await t.replica().sweep();
    expect(t.sent).toEqual([{ sessionId: t.session.anthropic_session_id, toolUseId, result: 'allow' }]);

    const second = await t.queue();
    await t.approvals.decide(t.tenantId, second.actionId, 'approved', 'reviewer@x', null, new Date(), () => ({ params_sha256: 'x', evaluated_bundle_revision: 'r', bundle_revision: 'r' }));
    failure = new DependencyUnavailableError('Agent platform tool confirmation failed (HTTP 400): not awaiting', { cause: { status: 400 } });
    await t.replica().sweep();
    expect(await t.confirmations.find(t.tenantId, t.session.id, second.toolUseId)).toMatchObject({ state: 'undeliverable', result: 'allow' });
    expect(await t.mine()).toEqual([]);
  });
});
