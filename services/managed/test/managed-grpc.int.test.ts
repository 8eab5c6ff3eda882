/**
 * The managed service's gRPC surface as main.ts runs it (its definition started by test/support/start-managed.ts)
 * on a database of its own, so that the replica it starts adopts no session of the other tests: agent configs
 * are created, listed and read per tenant, never across tenants, and a request's free-form field that is not
 * the JSON object it holds is the caller's invalid input naming the field.
 */
import { randomUUID } from 'node:crypto';
import { type Db, createDb, ownTestDatabase } from '@agw/shared';
import { type StartedManaged, startManaged } from './support/start-managed';

let managed: StartedManaged;
let db: Db;

beforeAll(async () => {
  const ownDatabaseUrl = await ownTestDatabase('managed_grpc');
  // no agent platform configured: configs work, sessions cannot be created (not exercised here)
  managed = await startManaged({ env: { DATABASE_URL: ownDatabaseUrl, ANTHROPIC_API_KEY: undefined } });
  db = createDb(ownDatabaseUrl, { max: 1 });
}, 60_000);
afterAll(async () => {
  await db?.destroy();
  await managed?.close();
});

/** A new tenant of the service's database. */
async function tenant(): Promise<string> {
  const id = randomUUID();
  await db.insertInto('tenants').values({ id, slug: `mg-${id}`, name: 'managed gRPC test' }).execute();
  return id;
}

const agent = (tenant: string, extra: Record<string, unknown> = {}) =>
  managed.client.createAgent({
    tenant_id: tenant,
    name: `agent-${randomUUID().slice(0, 8)}`,
    anthropic_model: '',
    system_prompt: 'be careful',
    allowed_tools: ['svc_web_search'],
    require_human_approval: [],
    max_session_hours: 0,
    max_daily_sessions: 0,
    max_delegation_depth: 0,
    governance_profile: { text: '{"risk":"low"}' }, governance_profile_json: '{"risk":"low"}',
    parent_agent_id: '',
    ...extra,
  });

test("a tenant's agent configs are created, listed and read by that tenant only", async () => {
  const [a, b] = [await tenant(), await tenant()];
  const created = await agent(a);
  expect(created).toMatchObject({ tenant_id: a, allowed_tools: ['svc_web_search'], governance_profile: { text: '{"risk":"low"}' }, governance_profile_json: '{"risk":"low"}', parent_agent_id: '', depth: 0 });
  expect((await managed.client.listAgents({ tenant_id: a })).configs.map((c) => c.id)).toEqual([created.id]);
  expect(await managed.client.getAgent({ tenant_id: a, config_id: created.id })).toEqual(created);
  // another tenant neither lists nor reads it
  expect((await managed.client.listAgents({ tenant_id: b })).configs).toEqual([]);
  await expect(managed.client.getAgent({ tenant_id: b, config_id: created.id })).rejects.toMatchObject({ code: 'not_found' });
});

test('a governance profile that is not a JSON object is invalid input naming the field', async () => {
  const t = await tenant();
  for (const [text, type] of [
    ['[1]', 'object_type'],
    ['{"risk":', 'json_invalid'],
  ]) {
    // the client rebuilds the service's error by its code, with its detail (the issues)
    await expect(agent(t, { governance_profile: { text }, governance_profile_json: text })).rejects.toMatchObject({ code: 'invalid_input', detail: [expect.objectContaining({ loc: ['governance_profile'], type })] });
  }
  expect((await managed.client.listAgents({ tenant_id: t })).configs).toEqual([]);
});
