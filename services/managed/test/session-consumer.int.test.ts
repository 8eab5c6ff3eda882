/**
 * The session consumer against the platform stand-in (real HTTP + SSE through the official SDK) and the
 * real Postgres: it stops as soon as the platform ends the session (not at the next event, which never
 * comes), and a dropped stream is resumed without losing or repeating an event. The audit service is the
 * only part replaced here (an in-memory recorder): its own guarantees are tested in services/audit.
 */
import { randomUUID } from 'node:crypto';
import { type Db, createLogger, openTestDb } from '@agw/shared';
import { type RunningStandIn, startPlatformStandIn } from '@agw/platform-stand-in';
import { AgentConfigRepository } from '../src/agents/agent-config.repository';
import { AgentConfigs } from '../src/agents/agent-configs';
import { SessionStreamConsumer } from '../src/consumer/session-stream.consumer';
import { createAnthropicPlatform } from '../src/platform/anthropic-platform';
import type { SessionRecorder } from '../src/sessions/session-recorder';
import { SessionRepository, type SessionRow } from '../src/sessions/session.repository';

let db: Db;
let standIn: RunningStandIn;
let repo: SessionRepository;
const logger = createLogger('managed-test', 'silent');

beforeAll(async () => {
  db = await openTestDb();
  repo = new SessionRepository(db);
  standIn = await startPlatformStandIn({ apiKey: 'k', heartbeatMs: 100 });
});
afterAll(async () => {
  await standIn.close();
  await db.destroy();
});

async function activeSession(): Promise<{ row: SessionRow; platformId: string; platform: ReturnType<typeof createAnthropicPlatform> }> {
  const tenantId = randomUUID();
  await db.insertInto('tenants').values({ id: tenantId, slug: `c-${tenantId}`, name: 'consumer test' }).execute();
  const configRepo = new AgentConfigRepository(db);
  const c = await new AgentConfigs(configRepo, 'm').create(tenantId, { name: 'c', allowed_tools: [], require_human_approval: [], governance_profile: {} });
  const platform = createAnthropicPlatform({ apiKey: 'k', baseURL: standIn.url, environments: { get: (k) => configRepo.resource(`${tenantId}:${k}`), put: (k, id) => configRepo.putResource(`${tenantId}:${k}`, id) } });
  const agentId = await platform.createAgent({ name: 'c', model: 'm', system: null, metadata: {} });
  const env = await platform.ensureEnvironment('test');
  const vault = await platform.createMcpVault({ displayName: 'v', mcpServerUrl: 'http://127.0.0.1:1/mcp', bearer: 'b', metadata: {} });
  const ps = await platform.createSession({ platformAgentId: agentId, environmentId: env, vaultId: vault, systemPrompt: 'p', mcpServerName: 'agw', mcpServerUrl: 'http://127.0.0.1:1/mcp', askTools: [], userMessage: 'go', metadata: {}, title: 't' });
  const reserved = await repo.reserve(tenantId, { id: randomUUID(), agent_id: c.id, system_prompt_hash: 'h', mcp_server_url: 'u', bundle_revision: 'r', metadata: {}, expires_at: new Date(Date.now() + 3600_000) }, { maxConcurrent: 10, maxDaily: 50, maxDailyForAgent: null });
  const row = await repo.setPlatform(tenantId, reserved.id, { anthropic_session_id: ps.id, platform_vault_id: vault, environment_id: env });
  return { row, platformId: ps.id, platform };
}

function consumerOf(row: SessionRow, platform: ReturnType<typeof createAnthropicPlatform>) {
  const recorded: string[] = [];
  const recorder = { observed: async (_s: unknown, e: { id: string }) => (recorded.includes(e.id) ? false : (recorded.push(e.id), true)) } as unknown as SessionRecorder;
  let stopped: string | undefined;
  const consumer = new SessionStreamConsumer(
    { platform, repo, recorder, logger, threshold: async () => 0.8, onAnomaly: async () => undefined, onConfirmationRequest: async () => undefined, idleTimeoutMs: 60_000, reconnectDelayMs: 50 },
    row,
    (_id, reason) => (stopped = reason),
  );
  return { consumer, recorded, stopped: () => stopped };
}

const script = (id: string, steps: unknown[]) => fetch(`${standIn.url}/_stand-in/sessions/${id}/script`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ steps }) });

async function until(fn: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('session stream consumer', () => {
  it('stops as soon as the platform ends the session, with the stream still open', async () => {
    const { row, platformId, platform } = await activeSession();
    const c = consumerOf(row, platform);
    c.consumer.start();
    await until(() => standIn.state.sessions.get(platformId)!.log.connections === 1);
    await script(platformId, [{ idle: 'end_turn' }]);
    await until(() => c.stopped() === 'session_ended', 2000);
    expect((await repo.get(row.tenant_id, row.id))?.status).toBe('completed');
    await until(() => standIn.state.sessions.get(platformId)!.log.connections === 0, 2000);
  });

  it('records every tool use once across a dropped stream, and stops promptly when asked', async () => {
    const { row, platformId, platform } = await activeSession();
    const c = consumerOf(row, platform);
    c.consumer.start();
    await until(() => standIn.state.sessions.get(platformId)!.log.connections === 1);
    await script(platformId, [{ tool_use: { name: 'bash', input: { command: 'one' } } }, { drop_stream: true }, { tool_use: { name: 'bash', input: { command: 'two' } } }, { tool_use: { name: 'read', input: { file_path: 'x' } } }]);
    const log = standIn.state.sessions.get(platformId)!.log;
    // the consumer's resume point reaches the last event of the session: everything was processed
    await until(async () => (await repo.get(row.tenant_id, row.id))?.last_event_id === log.events.at(-1)!.id);
    const toolUses = log.events.filter((e) => e.type === 'agent.tool_use').map((e) => e.id);
    expect(c.recorded).toEqual(toolUses);
    const t0 = Date.now();
    await c.consumer.stop('shutdown');
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(c.stopped()).toBe('shutdown');
  });
});
