/**
 * The gateway's half of the upstreams' human-only steps (docs/federation.md, "Pins outlive deletion";
 * issue 42, items 6 and 7): the upstreams routes over real HTTP, with the tenant's settings in the real
 * Postgres and the caller set as the authentication middleware sets it. The vault decides what a name
 * keeps; the gateway must tell it who asks (`HumanGate`: a signed-in human or not, the tenant's
 * approvals_require_human, how to name the caller), pass `discard_pins`, refuse a name that would make
 * federated names ambiguous before any vault call, and present the vault's answer and refusal as they are.
 * The vault's FederationService stands in as a recorder (its own tests run it against Postgres and the HSM).
 */
import type { federation as pb } from '@agw/proto';
import { type Db, ForbiddenError, openTestDb } from '@agw/shared';
import type { GatewayDeps } from '../src/deps';
import { upstreamRoutes } from '../src/http/routes/upstreams.routes';
import { type ServedRoutes, asTestCaller, serveRoutes, testSettings } from './support/served-routes';
import { createTestTenant } from './support/tenants';

let db: Db;
let served: ServedRoutes;

/** what the vault was asked */
const asked: { register: pb.RegisterUpstreamRequest[]; delete: pb.DeleteUpstreamRequest[] } = { register: [], delete: [] };
/** the vault's next answer to DeleteUpstream (or its refusal) */
let deleteAnswer: Partial<pb.Upstream> | Error = {};

const upstream = (name: string): pb.Upstream => ({
  name,
  url: 'https://mcp.example.com/mcp',
  transport: 'streamable_http',
  description: '',
  credential_type: 'none',
  credential_header_name: '',
  include: [],
  exclude: [],
  status: 'connected',
  status_reason: '',
  server_name: 'x',
  server_version: '1',
  protocol_version: '2025-06-18',
  tool_count: 0,
  quarantined_count: 0,
  created_at: new Date().toISOString(),
  refreshed_at: '',
  tools: [],
  timeout_ms: 0,
  retained_tools: 0,
  discarded_tools: 0,
  connection: 'shared',
  connections: [],
  authorization_server: '',
  client_registration: '',
});

const client = {
  registerUpstream: async (req: pb.RegisterUpstreamRequest) => {
    asked.register.push(req);
    if (req.name === 'kept' && req.gate?.require_human && !req.gate.human) throw new ForbiddenError(`Upstream name "kept" keeps 1 tool(s); ${req.gate.caller} cannot`);
    return upstream(req.name);
  },
  deleteUpstream: async (req: pb.DeleteUpstreamRequest) => {
    asked.delete.push(req);
    if (deleteAnswer instanceof Error) throw deleteAnswer;
    return { ...upstream(req.name), ...deleteAnswer };
  },
};

beforeAll(async () => {
  db = await openTestDb();
  const settings = testSettings(db);
  served = await serveRoutes((app) => {
    app.use(asTestCaller);
    app.use(upstreamRoutes({ settings, federation: { client, invalidate: () => undefined } } as unknown as GatewayDeps));
  });
});
afterAll(async () => {
  await served.close();
  await db.destroy();
});

beforeEach(() => {
  asked.register.length = 0;
  asked.delete.length = 0;
  deleteAnswer = {};
});

const newTenant = (settings: Record<string, unknown> = { approvals_require_human: true }) => createTestTenant(db, 'U', settings);

async function call(method: string, path: string, tenantId: string, caller: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${served.base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-test-tenant': tenantId, 'x-test-caller': caller },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('registering an upstream tells the vault who asks', () => {
  it.each([
    ['tenant_key', true, { human: false, require_human: true, caller: 'an API key' }],
    ['key_session', true, { human: false, require_human: true, caller: 'a session token made from an API key' }],
    ['human', true, { human: true, require_human: true, caller: 'this session token' }],
    ['tenant_key', false, { human: false, require_human: false, caller: 'an API key' }],
  ])('%s with approvals_require_human %p', async (caller, gate, expected) => {
    const tenantId = await newTenant({ approvals_require_human: gate });
    const r = await call('POST', '/upstreams', tenantId, caller, { name: 'github', url: 'https://mcp.example.com/mcp' });
    expect(r.status).toBe(201);
    expect(asked.register).toHaveLength(1);
    expect(asked.register[0].gate).toEqual(expected);
  });

  it("the vault's refusal of a key on a name that keeps pins is a 403 that names the caller", async () => {
    const tenantId = await newTenant();
    const r = await call('POST', '/upstreams', tenantId, 'key_session', { name: 'kept', url: 'https://mcp.example.com/mcp' });
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain('a session token made from an API key cannot');
  });

  it.each(['a_', 'a-', 'a__b', '_a'])('the name %p is refused (422 at body.name) before the vault is asked', async (name) => {
    const tenantId = await newTenant();
    const r = await call('POST', '/upstreams', tenantId, 'human', { name, url: 'https://mcp.example.com/mcp' });
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'name'] })]);
    expect(asked.register).toEqual([]);
  });
});

describe('DELETE /upstreams/{name}', () => {
  it('keeps the pins by default and says how many', async () => {
    const tenantId = await newTenant();
    deleteAnswer = { retained_tools: 3 };
    const r = await call('DELETE', '/upstreams/github', tenantId, 'tenant_key');
    expect(r).toEqual({ status: 200, body: { status: 'deleted', name: 'github', retained_tools: 3, discarded_tools: 0 } });
    expect(asked.delete).toEqual([{ tenant_id: tenantId, name: 'github', discard_pins: false, gate: { human: false, require_human: true, caller: 'an API key' } }]);
  });

  it('discard_pins=true goes to the vault with the gate; a name no longer registered answers pins_discarded', async () => {
    const tenantId = await newTenant();
    deleteAnswer = { url: '', created_at: '', retained_tools: 0, discarded_tools: 2 };
    const r = await call('DELETE', '/upstreams/github?discard_pins=true', tenantId, 'human');
    expect(r).toEqual({ status: 200, body: { status: 'pins_discarded', name: 'github', retained_tools: 0, discarded_tools: 2 } });
    expect(asked.delete[0]).toMatchObject({ discard_pins: true, gate: { human: true, require_human: true } });
  });

  it("the vault's refusal of discard_pins by a key is a 403; a bad discard_pins is a 422 before any vault call", async () => {
    const tenantId = await newTenant();
    deleteAnswer = new ForbiddenError('Discarding the pins of upstream "github" needs a signed-in human; an API key cannot');
    const refused = await call('DELETE', '/upstreams/github?discard_pins=true', tenantId, 'tenant_key');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('an API key cannot');
    asked.delete.length = 0;
    const bad = await call('DELETE', '/upstreams/github?discard_pins=yes', tenantId, 'human');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'discard_pins'] })]);
    expect(asked.delete).toEqual([]);
  });
});
