/**
 * Approvals against the real Postgres, a real audit service (its chain and gRPC server, in process) and a
 * real NATS connection, with an explicit clock (no sleeps): a queued action expires exactly at its time,
 * with a control_plane record and an `expired` decision event; approving or rejecting it afterwards is a
 * 409 naming the expiry; the decision record carries the params hash and bundle revisions; the agent's
 * retry of an approved call is allowed once, only with the same params.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalRepository, type Bus, type Db, type Logger, canonicalJson, createDb, streams } from '@agw/shared';
import { createHash } from 'node:crypto';
import { type ApprovalsBed, startApprovalsBed } from './support/approvals-bed';
import { createTestTenant } from './support/tenants';
import { ApprovalExpiry } from '../src/approvals/approval-expiry';
import { ApprovalQueue } from '../src/approvals/approval-queue';
import { ApprovedRetries } from '../src/approvals/approved-retry';
import { DecisionPublisher } from '../src/events/decision-publisher';
import { EventOutboxRepository } from '../src/events/event-outbox.repository';
import { DecisionRecorder } from '../src/pipeline/decision-recorder';
import { SettingsRepository } from '../src/tenants/settings.repository';
import { SettingsService } from '../src/tenants/settings.service';

let bed: ApprovalsBed;
let db: Db;
let bus: Bus;
let logger: Logger;
let recorder: DecisionRecorder;
let repo: ApprovalRepository;

/** The test's clock: time moves only when the test says so. */
let now = new Date('2026-11-23T10:00:00.000Z');
const clock = () => now;
const noBroker = { execute: async () => null };

beforeAll(async () => {
  // the audit service's own definition, as main.ts runs it, in this process
  bed = await startApprovalsBed('APX', 'approval-expiry-test');
  ({ db, bus, logger, recorder, repo } = bed);
});
afterAll(async () => {
  await bed.close();
});

const tenant = () => createTestTenant(db, 'APX');

/**
 * The decision events on `subjects`, wherever they are now: committed to the event outbox with their record,
 * or already published on the DECISIONS stream by the audit service's relay, which deletes the outbox row
 * once the stream has the event (it runs in this process, so either may be seen). Polled until one is found.
 */
async function queuedOrPublished(subjects: string[]): Promise<Array<{ subject: string; event: unknown }>> {
  const jsm = await bus.nc.jetstreamManager();
  for (const until = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 50))) {
    const queued = await db.selectFrom('event_outbox').select(['subject', 'event']).where('subject', 'in', subjects).execute();
    if (queued.length) return queued.map((e) => ({ subject: e.subject, event: e.event }));
    const published = [];
    const stream = streams(bed.prefix).decisions.name;
    for (const subject of subjects) {
      // how many the stream holds on the subject (a duplicate would count), and the last one's content
      const count = (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
      if (count === 0) continue;
      const last = (await jsm.streams.getMessage(stream, { last_by_subj: subject })).json();
      for (let i = 0; i < count; i++) published.push({ subject, event: last });
    }
    if (published.length || Date.now() > until) return published;
  }
}

const jcsSha256 = (v: unknown) => createHash('sha256').update(canonicalJson(v)).digest('hex');

async function queue(tenantId: string, params: Record<string, unknown>, ttlSeconds: number, by: string | null = null): Promise<string> {
  const actionId = randomUUID();
  await repo.enqueue(tenantId, {
    action_id: actionId,
    agent_id: 'agent-x',
    agent_type: 'assistant',
    agent_version: '1.0.0',
    tool: 'svc_db',
    method: 'delete',
    params,
    opa_result: { requires_human: true, violations: ['destructive_operation_requires_approval'], severity: 'high' },
    queue_reason: 'policy',
    queued_at: now,
    session_id: null,
    params_sha256: jcsSha256(params),
    bundle_revision: 'rev-at-queue',
    requested_by_key: by,
    expires_at: new Date(now.getTime() + ttlSeconds * 1000),
  });
  return actionId;
}

const records = async (tenantId: string, actionId: string) => (await bed.audit.client.getByAction({ tenant_id: tenantId, action_id: actionId })).records.map((r) => r.entry!);

describe('expiry with an explicit clock', () => {
  it('expires a queued action exactly at its time, records it and queues an `expired` event; a late decision is a 409', async () => {
    const t = await tenant();
    now = new Date('2026-11-23T10:00:00.000Z');
    const expiry = new ApprovalExpiry(repo, recorder, logger, clock);
    const queueSvc = new ApprovalQueue(repo, recorder, noBroker, { clock, currentRevision: async () => 'rev-now', expireNow: expiry.expireNow });
    const a = await queue(t, { table: 'orders' }, 3600);

    now = new Date('2026-11-23T10:59:59.999Z'); // one millisecond before
    expect((await expiry.sweep()).filter((r) => r.tenant_id === t)).toEqual([]);
    expect((await queueSvc.pending(t)).map((r) => r.action_id)).toEqual([a]);

    now = new Date('2026-11-23T11:00:00.000Z'); // due
    const swept = (await expiry.sweep()).filter((r) => r.tenant_id === t);
    expect(swept.map((r) => [r.action_id, r.status])).toEqual([[a, 'expired']]);
    expect(await queueSvc.pending(t)).toEqual([]);
    expect(await repo.get(t, a)).toMatchObject({ status: 'expired', decided_by: 'system:expiry', decided_at: now });

    const [rec] = await records(t, a);
    expect(rec).toMatchObject({ source: 'control_plane', decision: 'deny', tool: 'svc_db', method: 'delete' });
    expect(JSON.parse(rec.details!.text)).toMatchObject({
      approval: 'expired',
      expires_at: '2026-11-23T11:00:00.000Z',
      approval_binding: { params_sha256: jcsSha256({ table: 'orders' }), evaluated_bundle_revision: 'rev-at-queue' },
    });
    const events = await queuedOrPublished([`${bed.prefix}.decisions.${t}.expired`]);
    expect(events.map((e) => e.event)).toEqual([expect.objectContaining({ kind: 'expired', action_id: a, tenant_id: t })]);

    for (const decision of ['approved', 'rejected'] as const) {
      await expect(queueSvc.decide(t, a, decision, 'someone@example.com', null)).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining(`expired at 2026-11-23T11:00:00.000Z`),
      });
    }
    expect(await expiry.sweep()).toEqual([]); // nothing is expired twice
    expect(await records(t, a)).toHaveLength(1);
  });

  it('a decision arriving after the time (before any sweep) expires the action on the spot and is refused', async () => {
    const t = await tenant();
    now = new Date('2026-11-23T10:00:00.000Z');
    const expiry = new ApprovalExpiry(repo, recorder, logger, clock);
    const queueSvc = new ApprovalQueue(repo, recorder, noBroker, { clock, expireNow: expiry.expireNow });
    const a = await queue(t, { id: 1 }, 60);
    now = new Date('2026-11-23T10:01:00.000Z');
    await expect(queueSvc.decide(t, a, 'approved', 'h@example.com', null)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('expired') });
    expect((await repo.get(t, a))?.status).toBe('expired');
    expect((await records(t, a)).map((r) => JSON.parse(r.details!.text).approval)).toEqual(['expired']);
  });

  it('a decision just before the time wins, and the sweep leaves the decided action alone', async () => {
    const t = await tenant();
    now = new Date('2026-11-23T10:00:00.000Z');
    const expiry = new ApprovalExpiry(repo, recorder, logger, clock);
    const queueSvc = new ApprovalQueue(repo, recorder, noBroker, { clock, currentRevision: async () => 'rev-now', expireNow: expiry.expireNow });
    const a = await queue(t, { id: 2 }, 60);
    now = new Date('2026-11-23T10:00:59.999Z');
    await expect(queueSvc.decide(t, a, 'rejected', 'h@example.com', 'no')).resolves.toMatchObject({ status: 'rejected' });
    now = new Date('2026-11-23T12:00:00.000Z');
    expect((await expiry.sweep()).filter((r) => r.tenant_id === t)).toEqual([]);
    expect((await repo.get(t, a))?.status).toBe('rejected');
  });
  it('expires with a pool of one connection: the record reads the tenant\'s settings through the sweep\'s transaction, never a second connection', async () => {
    // the sweep holds a transaction (the expiry lock, the due rows) while it records each expiry, and the
    // record asks whether the tenant has a webhook URL (gateway.ts wires SettingsService.hasWebhook). Read
    // from the pool, concurrent sweeps (a late decision expires its action on the spot) could hold every
    // pooled connection, each waiting for the lock, while the lock's holder waited for one more. A pool of
    // one is the same wait, every time.
    const one = createDb(bed.url, { max: 1 });
    const settings = new SettingsService(new SettingsRepository(one), {} as never, { rps: 1, burst: 1 });
    const onePoolRecorder = new DecisionRecorder(bed.audit.client as never, new DecisionPublisher(bus, new EventOutboxRepository(one, 'gateway'), logger), {
      retryBudgetMs: 15_000,
      hasWebhook: (tenantId, conn) => settings.hasWebhook(tenantId, conn), // as gateway.ts wires it
    });
    const expiry = new ApprovalExpiry(new ApprovalRepository(one), onePoolRecorder, logger, clock);
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the expiry sweep waited for a second pooled connection')), 10_000).unref())]);
    const t = await tenant(); // no webhook URL
    now = new Date('2026-11-23T10:00:00.000Z');
    const a = await queue(t, { id: 3 }, 60);
    now = new Date('2026-11-23T10:01:00.000Z');
    expect((await within(expiry.sweep({ tenantId: t, actionId: a }))).map((r) => [r.action_id, r.status])).toEqual([[a, 'expired']]);
    expect((await records(t, a)).map((r) => JSON.parse(r.details!.text).approval)).toEqual(['expired']);
    // the settings were read (no webhook URL: the event goes under nohook.); a read that found no connection
    // would have counted as "has a webhook" and sent it under decisions.
    const events = await queuedOrPublished([`${bed.prefix}.decisions.${t}.expired`, `${bed.prefix}.nohook.decisions.${t}.expired`]);
    expect(events.map((e) => e.subject)).toEqual([`${bed.prefix}.nohook.decisions.${t}.expired`]);
    await one.destroy();
  }, 30_000);
});

describe('an approval is bound to the exact call', () => {
  it('the decision record carries the params hash and the bundle revisions; only the same params retry, once', async () => {
    const t = await tenant();
    now = new Date('2026-11-23T10:00:00.000Z');
    const queueSvc = new ApprovalQueue(repo, recorder, noBroker, { clock, currentRevision: async () => 'rev-now' });
    const retries = new ApprovedRetries(repo, recorder, logger, clock);
    const params = { table: 'orders', where: { id: [1, 2] } };
    const a = await queue(t, params, 3600);
    const decided = await queueSvc.decide(t, a, 'approved', 'h@example.com', 'ok');
    const binding = { params_sha256: jcsSha256(params), evaluated_bundle_revision: 'rev-at-queue', bundle_revision: 'rev-now' };
    expect(decided).toMatchObject({ status: 'approved', execution_mode: 'agent_direct', approval_binding: binding });
    const [rec] = await records(t, a);
    expect(rec).toMatchObject({ source: 'control_plane', decision: 'allow' });
    expect(JSON.parse(rec.details!.text)).toMatchObject({ approval: 'approved', decided_by: 'h@example.com', approval_binding: binding });

    const call = (p: Record<string, unknown>, over: Record<string, string> = {}) => ({ agent_id: 'agent-x', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_db', method: 'delete', params: p, ...over });
    // different params, another method, another agent: not the approved call
    expect(await retries.claim({ tenantId: t }, call({ table: 'orders', where: { id: [1, 2, 3] } }), a)).toBeNull();
    expect(await retries.claim({ tenantId: t }, call(params, { method: 'drop' }), a)).toBeNull();
    expect(await retries.claim({ tenantId: t }, call(params, { agent_id: 'agent-y' }), a)).toBeNull();
    // the same params, keys in another order: allowed, under the approved action's id
    const ok = await retries.claim({ tenantId: t }, call({ where: { id: [1, 2] }, table: 'orders' }), a);
    expect(ok).toEqual({ kind: 'allowed', action_id: a, execution_mode: 'agent_direct', violations: ['destructive_operation_requires_approval'], severity: 'high' });
    expect(await retries.claim({ tenantId: t }, call(params), a)).toBeNull(); // once
    const recs = await records(t, a);
    expect(recs.map((r) => [r.source, r.decision])).toEqual([
      ['control_plane', 'allow'],
      ['mcp_governed', 'allow'],
    ]);
    expect(recs[1]).toMatchObject({ execution_mode: 'agent_direct', bundle_revision: 'rev-at-queue' });
    expect(JSON.parse(recs[1].details!.text)).toMatchObject({ stage: 'approved_retry', approved_action_id: a, approval_binding: binding });
    expect(await bed.audit.client.verify({ tenant_id: t })).toMatchObject({ valid: true, record_count: 2 });
  });

  it('an action queued by an agent key is retried only with that key; a rejected or pending one never', async () => {
    const t = await tenant();
    now = new Date('2026-11-23T10:00:00.000Z');
    const queueSvc = new ApprovalQueue(repo, recorder, noBroker, { clock });
    const retries = new ApprovedRetries(repo, recorder, logger, clock);
    const call = { agent_id: 'agent-x', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_db', method: 'delete', params: { n: 1 } };
    const pending = await queue(t, { n: 1 }, 3600, 'key-hash-a');
    expect(await retries.claim({ tenantId: t, agentKeyHash: 'key-hash-a' }, call, pending)).toBeNull();
    const rejected = await queue(t, { n: 1 }, 3600, 'key-hash-a');
    await queueSvc.decide(t, rejected, 'rejected', 'h@example.com', null);
    expect(await retries.claim({ tenantId: t, agentKeyHash: 'key-hash-a' }, call, rejected)).toBeNull();
    await queueSvc.decide(t, pending, 'approved', 'h@example.com', null);
    expect(await retries.claim({ tenantId: t, agentKeyHash: 'key-hash-b' }, call, pending)).toBeNull();
    expect(await retries.claim({ tenantId: randomUUID() }, call, pending)).toBeNull(); // another tenant
    expect(await retries.claim({ tenantId: t, agentKeyHash: 'key-hash-a' }, call, pending)).toMatchObject({ kind: 'allowed', action_id: pending });
  });
});
