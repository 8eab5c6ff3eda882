/**
 * The guarantees the managed service's store gives, against the real Postgres: session limits hold under
 * concurrent creation (the last slot is taken once), a session's stream lease is held by one replica at a
 * time (a crashed holder's lease expires and is taken over), ends are final, and delegation depth is
 * enforced along the whole parent chain.
 */
import { randomUUID } from 'node:crypto';
import { AppError, type Db, openTestDb } from '@agw/shared';
import { AgentConfigRepository } from '../src/agents/agent-config.repository';
import { AgentConfigs } from '../src/agents/agent-configs';
import { SessionRepository } from '../src/sessions/session.repository';

let db: Db;
let configs: AgentConfigs;
let repo: SessionRepository;

async function tenant(): Promise<string> {
  const id = randomUUID();
  await db.insertInto('tenants').values({ id, slug: `m-${id}`, name: 'managed test' }).execute();
  return id;
}

const newSession = (agentId: string) => ({
  id: randomUUID(),
  agent_id: agentId,
  system_prompt_hash: 'a'.repeat(64),
  mcp_server_url: 'http://127.0.0.1/api/mcp/server/sessions/x',
  bundle_revision: 'r1',
  metadata: {},
  expires_at: new Date(Date.now() + 3600_000),
});

beforeAll(async () => {
  db = await openTestDb();
  configs = new AgentConfigs(new AgentConfigRepository(db), 'model-x');
  repo = new SessionRepository(db);
});
afterAll(() => db.destroy());

describe('session limits', () => {
  it('admit exactly the limit when twenty creations race for three slots', async () => {
    const t = await tenant();
    const c = await configs.create(t, { name: 'racer', allowed_tools: [], require_human_approval: [], governance_profile: {} });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => repo.reserve(t, newSession(c.id), { maxConcurrent: 3, maxDaily: 50, maxDailyForAgent: null })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(17);
    expect(refused.every((r) => r.reason instanceof AppError && r.reason.code === 'rate_limited' && /Concurrent session limit/.test(r.reason.message))).toBe(true);
  });

  it('count ended sessions against the daily and per-agent limits', async () => {
    const t = await tenant();
    const c = await configs.create(t, { name: 'daily', allowed_tools: [], require_human_approval: [], governance_profile: {}, max_daily_sessions: 2 });
    for (let i = 0; i < 2; i++) {
      const s = await repo.reserve(t, newSession(c.id), { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: 2 });
      await repo.end(t, s.id, 'completed', { end_reason: 'test' });
    }
    await expect(repo.reserve(t, newSession(c.id), { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: 2 })).rejects.toThrow(/Per-agent session limit exceeded/);
    await expect(repo.reserve(t, newSession(c.id), { maxConcurrent: 10, maxDaily: 2, maxDailyForAgent: null })).rejects.toThrow(/Daily session limit exceeded/);
  });
});

describe('stream leases and ends', () => {
  it('let one replica at a time hold a session, and another take over once the lease expired', async () => {
    const t = await tenant();
    const c = await configs.create(t, { name: 'leased', allowed_tools: [], require_human_approval: [], governance_profile: {} });
    const s = await repo.reserve(t, newSession(c.id), { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: null });
    await repo.setPlatform(t, s.id, { anthropic_session_id: `sesn_${s.id}`, platform_vault_id: 'v', environment_id: 'e' });
    const claims = await Promise.all(['replica-a', 'replica-b', 'replica-c'].map((owner) => repo.claim(s.id, owner, 3)));
    const owners = claims.filter(Boolean).map((x) => x!.consumer_owner);
    expect(owners).toHaveLength(1);
    const holder = owners[0]!;
    const other = holder === 'replica-a' ? 'replica-b' : 'replica-a';
    expect(await repo.claim(s.id, other, 3)).toBeUndefined();
    expect((await repo.orphans(other)).map((x) => x.id)).not.toContain(s.id);
    expect(await repo.renew(holder, [s.id], 3)).toEqual([s.id]);
    // the holder "crashes": its lease runs out and the session is an orphan for everyone else
    await db.updateTable('managed_sessions').set({ consumer_lease_until: new Date(Date.now() - 1000) }).where('id', '=', s.id).execute();
    expect((await repo.orphans(other)).map((x) => x.id)).toContain(s.id);
    expect((await repo.claim(s.id, other, 3))?.consumer_owner).toBe(other);
    expect(await repo.renew(holder, [s.id], 3)).toEqual([]);
  });

  it('end a session once: a concurrent interrupt and platform event cannot both win', async () => {
    const t = await tenant();
    const c = await configs.create(t, { name: 'ender', allowed_tools: [], require_human_approval: [], governance_profile: {} });
    const s = await repo.reserve(t, newSession(c.id), { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: null });
    const [x, y] = await Promise.all([
      repo.end(t, s.id, 'interrupted', { end_reason: 'user', interrupt_reason: 'stop' }),
      repo.end(t, s.id, 'completed', { end_reason: 'platform' }),
    ]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    // another tenant can neither read nor end it
    const other = await tenant();
    expect(await repo.get(other, s.id)).toBeUndefined();
    expect(await repo.end(other, s.id, 'failed', { end_reason: 'x' })).toBeUndefined();
  });
});

describe('delegation depth', () => {
  it('is bounded by every ancestor, not only the parent', async () => {
    const t = await tenant();
    const root = await configs.create(t, { name: 'root', allowed_tools: [], require_human_approval: [], governance_profile: {}, max_delegation_depth: 2 });
    const mid = await configs.create(t, { name: 'mid', allowed_tools: [], require_human_approval: [], governance_profile: {}, max_delegation_depth: 5, parent_agent_id: root.id });
    const leaf = await configs.create(t, { name: 'leaf', allowed_tools: [], require_human_approval: [], governance_profile: {}, max_delegation_depth: 5, parent_agent_id: mid.id });
    expect([root.depth, mid.depth, leaf.depth]).toEqual([0, 1, 2]);
    await expect(configs.create(t, { name: 'too-deep', allowed_tools: [], require_human_approval: [], governance_profile: {}, parent_agent_id: leaf.id })).rejects.toThrow(/"root".*at most 2 level/);
    const other = await tenant();
    await expect(configs.create(other, { name: 'x', allowed_tools: [], require_human_approval: [], governance_profile: {}, parent_agent_id: root.id })).rejects.toThrow(/not found/);
  });
});
