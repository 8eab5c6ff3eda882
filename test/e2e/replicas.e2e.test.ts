/**
 * Several replicas, proven (issue 17): a fleet of its own at AGW_REPLICAS=2 (two of every service against the
 * same Postgres, Redis and NATS; two gateways behind the fleet's round-robin proxy), driven by several tenants
 * through both gateways at once. Checks: every chain verifies, no record duplicated or lost, each webhook
 * event delivered once per endpoint, each tree head built once and anchored once, an approval decided on one
 * replica is seen on the other, the rate limit holds across replicas, a key rotation takes effect on both at
 * once, an MCP task or signed requestState made at one gateway is answered by the other, and with one
 * replica of every service SIGKILLed mid-run the others carry on and every answered
 * 200/202/403 has exactly one record.
 *
 * Its fleet runs at E2E_PORT_OFFSET + 30 (no port of it meets a fleet at the usual offsets), with a database
 * and stream prefix of its own; both Merkle and anchor schedulers run on both replicas, ticking every second,
 * so they race each other and the triggers.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startFixtures } from '@agw/mcp-fixtures';
import { type Db, createDb } from '@agw/shared';
import { E2E_DATABASE_NAME, E2E_ENV, E2E_OFFSET, E2E_STREAM_PREFIX } from './support/e2e-env';
import { eventually, sleep } from './support/eventually';
import { startFleetProcess, stopFleetProcess } from './support/fleet-process';
import { toolCall } from './support/api';

jest.setTimeout(180_000);

const OFFSET = E2E_OFFSET + 30;
const PROXY = `http://127.0.0.1:${8080 + OFFSET}/api`;
const GW1 = `http://127.0.0.1:${8081 + OFFSET}/api`;
const GW2 = `http://127.0.0.1:${8082 + OFFSET}/api`;
const CONTROL = `http://127.0.0.1:${8999 + OFFSET}`;
const DB_NAME = `${E2E_DATABASE_NAME}_replicas`;
const DB_URL = `postgres://postgres@127.0.0.1:5432/${DB_NAME}`;
const CA_FILE = path.resolve(__dirname, '../../.run/e2e-webhook-ca-replicas.pem');

let fleetProcess: ChildProcess | undefined;
let db: Db;
let cert: { cert: string; key: string };
const servers: https.Server[] = [];

interface Res {
  status: number;
  body: any;
  headers: Headers;
}
async function req(base: string, method: string, p: string, o: { key?: string; token?: string; body?: unknown } = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (o.key) headers['x-api-key'] = o.key;
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${p}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * the three answers of a governed call under the financial template: allowed (200; its e-mail address is
 * personal data, encrypted with the subject's HSM key by whichever vault replica gets the call), pending
 * approval (202, amount >= 1000), denied (403, amount >= 5000)
 */
const KINDS = [toolCall({ params: { q: 'hello', email: 'alice.replicas@example.com' } }), toolCall({ tool: 'svc_payments', method: 'transfer', params: { amount: 2000, currency: 'EUR' } }), toolCall({ tool: 'svc_payments', method: 'transfer', params: { amount: 9000, currency: 'EUR' } })];

interface Tenant {
  tenantId: string;
  apiKey: string;
  email: string;
  received: Array<{ delivery: string; event: string; actionId: string }>;
}

async function receiver() {
  const got: Tenant['received'] = [];
  const server = https.createServer({ cert: cert.cert, key: cert.key }, (rq, rs) => {
    const chunks: Buffer[] = [];
    rq.on('data', (c: Buffer) => chunks.push(c));
    rq.on('end', () => {
      const json = JSON.parse(Buffer.concat(chunks).toString());
      got.push({ delivery: String(rq.headers['x-service-delivery']), event: String(rq.headers['x-service-event']), actionId: json.data?.action_id });
      rs.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}

async function newTenant(name: string, base = PROXY): Promise<Tenant> {
  const email = `replicas-${randomUUID()}@e2e.test`;
  const r = await req(base, 'POST', '/auth/signup', { body: { email, password: 'correct-horse-battery-staple', tenant_name: name } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  const hook = await receiver();
  const s = await req(base, 'PATCH', '/dashboard/settings', {
    key: r.body.api_key,
    // the load of the kill test outruns the default rate limit on a quiet machine: lifted (the rate-limit test sets its own)
    body: { policy_template: 'financial', webhook_url: hook.url, webhook_events: ['action.allowed', 'action.denied', 'action.pending'], rate_limit_rps: 10000, rate_limit_burst: 100000 },
  });
  if (s.status !== 200) throw new Error(`settings failed: ${s.status} ${JSON.stringify(s.body)}`);
  return { tenantId: r.body.tenant_id, apiKey: r.body.api_key, email, received: hook.got };
}

async function control(action: 'kill' | 'start' | 'stop', name: string): Promise<void> {
  const res = await fetch(`${CONTROL}/${action}/${name}`, { method: 'POST' });
  if (!res.ok) throw new Error(`fleet ${action} ${name}: ${res.status} ${await res.text()}`);
}

interface Answer {
  tenant: Tenant;
  status: number;
  actionId?: string;
  /** when the call was sent (ms) */
  startedAt: number;
  /** what an unanswered call was told (the error's detail, or the network error): shown when a check fails */
  detail?: string;
}

/**
 * Drives governed calls from `workers` clients per tenant, each through the next base URL in turn, until
 * `done(answers)` holds: a number of calls, never a time window, so a slower machine makes the run
 * longer, not the assertions weaker. A run that cannot get there in 90 s fails with what it has.
 */
async function drive(tenants: Tenant[], bases: () => string[], done: (answers: Answer[]) => boolean, workers = 3): Promise<Answer[]> {
  const answers: Answer[] = [];
  const giveUpAt = Date.now() + 90_000;
  let n = 0;
  await Promise.all(
    tenants.flatMap((tenant) =>
      Array.from({ length: workers }, async () => {
        while (!done(answers) && Date.now() < giveUpAt) {
          const i = n++;
          const bs = bases();
          const base = bs[i % bs.length];
          const startedAt = Date.now();
          const r = await req(base, 'POST', '/mcp/tools/call', { key: tenant.apiKey, body: KINDS[i % KINDS.length] }).catch((e: unknown) => ({ status: 0, body: { detail: String((e as Error).cause ?? e) } }) as Res);
          const actionId = r.status === 403 ? r.body?.detail?.action_id : r.body?.action_id;
          answers.push({ tenant, status: r.status, actionId, startedAt, detail: typeof r.body?.detail === 'string' ? r.body.detail : undefined });
        }
      }),
    ),
  );
  if (!done(answers)) throw new Error(`drive: the calls did not reach their count in 90 s (${answers.length} answers)`);
  return answers;
}

/** the last record id so far: a phase's records are those after it */
async function lastRecordId(): Promise<number> {
  const r = await db.selectFrom('audit_records').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst();
  return Number(r?.max ?? 0);
}

const answered = (a: Answer) => a.status === 200 || a.status === 202 || a.status === 403;
/** the calls that got no answer, each as its status and what it was told (so a failed check says why) */
const unanswered = (as: Answer[]) => as.filter((a) => !answered(a)).map((a) => (a.detail ? `${a.status} ${a.detail}` : String(a.status)));
/** a status check whose failure shows the body (a 503's detail names the store or peer) */
function expectStatus(r: Res, status: number): void {
  expect(`${r.status}${r.status === status ? '' : ` ${JSON.stringify(r.body)}`}`).toBe(String(status));
}

/** Every answered call has exactly one governed record; records of unanswered calls are at most the failures. */
async function checkRecords(tenants: Tenant[], answers: Answer[], sinceId: number): Promise<void> {
  const rows = await db
    .selectFrom('audit_records')
    .select(['tenant_id', 'action_id', 'source'])
    .where('id', '>', sinceId)
    .where(
      'tenant_id',
      'in',
      tenants.map((t) => t.tenantId),
    )
    .where('source', '!=', 'control_plane')
    .execute();
  const count = new Map<string, number>();
  for (const r of rows) count.set(r.action_id, (count.get(r.action_id) ?? 0) + 1);
  const ok = answers.filter(answered);
  expect(ok.every((a) => typeof a.actionId === 'string')).toBe(true);
  const missingOrDuplicated = ok.filter((a) => count.get(a.actionId!) !== 1).map((a) => `${a.status} ${a.actionId} x${count.get(a.actionId!) ?? 0}`);
  expect(missingOrDuplicated).toEqual([]);
  expect([...count.values()].every((c) => c === 1)).toBe(true);
  const notAnswered = answers.length - ok.length;
  expect(rows.length - ok.length).toBeGreaterThanOrEqual(0);
  expect(rows.length - ok.length).toBeLessThanOrEqual(notAnswered);
  for (const t of tenants) expect((await req(PROXY, 'GET', '/audit/verify', { key: t.apiKey })).body).toMatchObject({ valid: true });
}

/**
 * Each decision event of an answered call reaches the tenant's endpoint once. `exactlyOnce: false` (a webhook
 * replica was SIGKILLed): an attempt the dying replica had sent but not yet recorded is sent again by the
 * survivor, with the same X-Service-Delivery id (delivery is at least once; a receiver that keeps the ids it
 * has seen gets each event once: docs/operations.md); every copy of an event must then carry one delivery id.
 */
async function checkWebhooks(answers: Answer[], o: { exactlyOnce: boolean }): Promise<void> {
  const ok = answers.filter(answered);
  await eventually(async () => ok.every((a) => a.tenant.received.some((g) => g.actionId === a.actionId)), 60_000, 250).catch(() => undefined);
  const notDelivered = ok.filter((a) => !a.tenant.received.some((g) => g.actionId === a.actionId)).map((a) => a.actionId);
  expect(notDelivered).toEqual([]);
  for (const t of new Set(ok.map((a) => a.tenant))) {
    const perAction = new Map<string, number>();
    const deliveryIds = new Map<string, Set<string>>();
    for (const g of t.received) {
      perAction.set(g.actionId, (perAction.get(g.actionId) ?? 0) + 1);
      deliveryIds.set(g.actionId, (deliveryIds.get(g.actionId) ?? new Set()).add(g.delivery));
    }
    expect([...deliveryIds.entries()].filter(([, ids]) => ids.size !== 1)).toEqual([]); // one delivery per event and endpoint
    if (o.exactlyOnce) expect([...perAction.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    else expect([...perAction.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(10); // only attempts in flight at the kill
  }
}

/** Tree heads follow each other without overlap (each built once) and each is in exactly one anchored batch. */
async function checkTreesAndAnchors(tenants: Tenant[]): Promise<void> {
  const ids = tenants.map((t) => t.tenantId);
  const heads = await db.selectFrom('merkle_tree_heads').select(['tenant_id', 'tree_index', 'tree_size', 'from_record_id', 'to_record_id']).where('tenant_id', 'in', ids).orderBy('tree_index').execute();
  for (const t of ids) {
    const mine = heads.filter((h) => h.tenant_id === t);
    expect(mine.length).toBeGreaterThan(0);
    mine.forEach((h, i) => {
      expect(Number(h.tree_index)).toBe(i);
      if (i > 0) expect(Number(h.tree_size)).toBeGreaterThan(Number(mine[i - 1].tree_size)); // no head built twice
    });
  }
  const anchored = await db.selectFrom('anchor_tree_heads').select(['tenant_id', 'tree_index', 'batch_id']).where('tenant_id', 'in', ids).execute();
  expect(anchored).toHaveLength(heads.length); // each head received once by the anchor service
  expect(anchored.every((a) => a.batch_id !== null)).toBe(true); // and anchored
  const batchIds = [...new Set(anchored.map((a) => Number(a.batch_id)))];
  const batches = await db.selectFrom('anchor_batches').select(['id', 'tx_hash', 'status', 'leaf_count']).where('id', 'in', batchIds).execute();
  expect(batches.every((b) => b.status === 'anchored' && b.tx_hash)).toBe(true);
  expect(new Set(batches.map((b) => b.tx_hash)).size).toBe(batches.length); // one transaction per batch
}

/** Build and anchor now, from both gateways at the same time, per tenant. */
async function triggerEverywhere(tenants: Tenant[]): Promise<void> {
  const rs = await Promise.all(tenants.flatMap((t) => [GW1, GW2].map((b) => req(b, 'POST', '/anchor/trigger', { key: t.apiKey }))));
  for (const r of rs) expect([200, 409]).toContain(r.status);
}

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agw-e2e-replicas-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=agw-e2e-replicas', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
    { stdio: 'pipe' },
  );
  cert = { cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: readFileSync(path.join(dir, 'key.pem'), 'utf8') };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(CA_FILE), { recursive: true });
  writeFileSync(CA_FILE, cert.cert);

  fleetProcess = await startFleetProcess({
    name: 'the replicas fleet',
    offset: OFFSET,
    db: DB_NAME,
    prefix: `${E2E_STREAM_PREFIX}R`,
    controlPort: Number(new URL(CONTROL).port),
    env: {
      ...E2E_ENV,
      AGW_REPLICAS: '2',
      // 14 services beside the suite's own fleet on one Postgres (max_connections 100): small pools, 5 per
      // process (70 at most; 3 starved the services: transactions waiting for an advisory lock each hold a
      // pooled connection, and the anchor run calls the audit service while it holds its lock)
      DB_POOL_MAX: '5',
      WEBHOOK_CA_FILE: CA_FILE,
      MERKLE_SCHEDULE_ENABLED: 'true',
      MERKLE_TICK_SECONDS: '1',
      ANCHOR_SCHEDULE_ENABLED: 'true',
      ANCHOR_TICK_SECONDS: '1',
    },
  });
  db = createDb(DB_URL);
}, 170_000);

afterAll(async () => {
  await db?.destroy();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await stopFleetProcess(fleetProcess);
}, 40_000);

describe('a fleet of two replicas of every service', () => {
  let tenants: Tenant[];

  it('serves several tenants through both gateways at once: every chain verifies, nothing duplicated or lost, webhooks once, tree heads built and anchored once', async () => {
    tenants = await Promise.all(['Replicas A', 'Replicas B', 'Replicas C'].map((n) => newTenant(n)));
    const since = await lastRecordId();
    let driving = true;
    const triggers = (async () => {
      // tree builds and anchoring raced from both gateways while the calls go on (and the schedulers tick)
      while (driving) {
        await triggerEverywhere(tenants);
        await sleep(1500);
      }
    })();
    const answers = await drive(tenants, () => [GW1, GW2, PROXY], (a) => a.length >= 90).finally(() => (driving = false));
    await triggers;
    expect(answers.length).toBeGreaterThanOrEqual(90);
    expect(unanswered(answers)).toEqual([]);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 202, 403]));
    await checkRecords(tenants, answers, since);
    // the personal data was encrypted (by both vault replicas, with the one subject key each tenant has)
    const params = await db.selectFrom('audit_records').select('params').where('tenant_id', 'in', tenants.map((t) => t.tenantId)).where('tool', '=', 'svc_web_search').execute();
    expect(params.length).toBeGreaterThan(0);
    expect(params.filter((p) => JSON.stringify(p.params).includes('alice.replicas@'))).toEqual([]);
    await triggerEverywhere(tenants); // the last records into a head and on chain
    await checkTreesAndAnchors(tenants);
    await checkWebhooks(answers, { exactlyOnce: true });
  });

  it('an approval decided on one replica is seen on the other, and only one decision wins', async () => {
    const t = tenants[0];
    const p = await req(GW1, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[1] });
    expect(p.status).toBe(202);
    const pendingOnB = await req(GW2, 'GET', '/approvals', { key: t.apiKey });
    expect(pendingOnB.body.pending.map((x: { action_id: string }) => x.action_id)).toContain(p.body.action_id);
    // approvals of a new tenant need a signed-in human (approvals_require_human): one session token, valid on both replicas
    const login = await req(GW1, 'POST', '/auth/login', { body: { email: t.email, password: 'correct-horse-battery-staple' } });
    expect(login.status).toBe(200);
    const token = login.body.access_token as string;
    const [onB, onA] = await Promise.all([
      req(GW2, 'POST', `/approve/${p.body.action_id}`, { token, body: { note: 'approved on replica 2' } }),
      req(GW1, 'POST', `/approve/${p.body.action_id}`, { token, body: { note: 'approved on replica 1' } }),
    ]);
    expect([onA.status, onB.status].sort()).toEqual([200, 409]);
    const history = await req(GW1, 'GET', '/approvals/history', { key: t.apiKey });
    expect(history.body.history.find((x: { action_id: string }) => x.action_id === p.body.action_id)).toMatchObject({ status: 'approved' });
    expect((await req(GW1, 'GET', '/approvals', { key: t.apiKey })).body.pending.map((x: { action_id: string }) => x.action_id)).not.toContain(p.body.action_id);
  });

  it('four eyes: two approvers approving at once on the two replicas are counted exactly once each; the action runs once', async () => {
    const t = await newTenant('Replicas four eyes');
    const pw = 'correct-horse-battery-staple';
    const owner = (await req(GW1, 'POST', '/auth/login', { body: { email: t.email, password: pw } })).body.access_token as string;
    expect((await req(GW1, 'PATCH', '/dashboard/settings', { token: owner, body: { required_approvers: 2 } })).status).toBe(200);
    const approvers: string[] = [];
    const ids: string[] = [];
    for (const name of ['alice', 'bob']) {
      const email = `${name}-${randomUUID().slice(0, 8)}@replicas.test`;
      const inv = await req(GW1, 'POST', '/members/invitations', { token: owner, body: { email, role: 'approver' } });
      const acc = await req(GW2, 'POST', '/members/invitations/accept', { body: { token: inv.body.token, password: pw } });
      expect(acc.status).toBe(201);
      ids.push(acc.body.user_id);
      approvers.push((await req(GW2, 'POST', '/auth/login', { body: { email, password: pw } })).body.access_token as string);
    }
    await sleep(2_500); // every replica's settings cache (2 s) has required_approvers
    for (let round = 0; round < 3; round++) {
      // the financial template (this file's tenants) queues a transfer of 2000
      const p = await req(PROXY, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[1] });
      expect(p.status).toBe(202);
      const [a, b] = await Promise.all([
        req(GW1, 'POST', `/approve/${p.body.action_id}`, { token: approvers[0], body: { note: 'replica 1' } }),
        req(GW2, 'POST', `/approve/${p.body.action_id}`, { token: approvers[1], body: { note: 'replica 2' } }),
      ]);
      // one vote is counted first (202, pending), the other meets the quorum (200, approved): never both, never neither
      expect([a.status, b.status].sort()).toEqual([200, 202]);
      const item = (await req(GW2, 'GET', '/approvals/history', { key: t.apiKey })).body.history.find((x: { action_id: string }) => x.action_id === p.body.action_id);
      expect(item).toMatchObject({ status: 'approved', required_approvers: 2 });
      expect(item.approvals.map((v: { member_id: string }) => v.member_id).sort()).toEqual([...ids].sort());
      const recs = await db.selectFrom('audit_records').select(['details']).where('tenant_id', '=', t.tenantId).where('action_id', '=', p.body.action_id).where('source', '=', 'control_plane').execute();
      expect(recs.filter((r) => (r.details as { approval?: string }).approval === 'vote')).toHaveLength(2);
      expect(recs.filter((r) => (r.details as { approval?: string }).approval === 'approved')).toHaveLength(1);
    }
  });

  it('an MCP task created at one gateway is polled and completed through the other; a requestState signed by one is honoured by the other', async () => {
    const t = await newTenant('Replicas MCP approvals');
    const fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
    try {
      expect((await req(GW1, 'POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
      const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "large sums need a human" if {', '  input.method == "add"', '  input.params.a > 1000', '}', ''].join('\n');
      expect((await req(GW1, 'PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
      await sleep(2_500); // every replica's settings cache (2 s) has the policy
      const token = (await req(GW1, 'POST', '/auth/login', { body: { email: t.email, password: 'correct-horse-battery-staple' } })).body.access_token as string;
      let id = 0;
      const mcp = async (base: string, method: string, params: Record<string, unknown>, caps: Record<string, unknown>) => {
        const name = (params.name ?? params.taskId) as string | undefined;
        const res = await fetch(`${base}/mcp/server`, {
          method: 'POST',
          headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': caps } } }),
        });
        return (await res.json()) as any;
      };
      const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
      const created = await mcp(GW1, 'tools/call', { name: 'fx__add', arguments: { a: 5000, b: 1 } }, tasks);
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.result.taskId as string;
      expect((await mcp(GW2, 'tasks/get', { taskId }, tasks)).result).toMatchObject({ taskId, status: 'working' });
      expect((await req(GW2, 'POST', `/approve/${taskId}`, { token })).status).toBe(200);
      expect((await mcp(GW1, 'tasks/get', { taskId }, tasks)).result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: '5001' }] } });

      const elicitation = { elicitation: { url: {} } };
      const first = await mcp(GW2, 'tools/call', { name: 'fx__add', arguments: { a: 6000, b: 1 } }, elicitation);
      expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
      expect((await req(GW1, 'POST', `/approve/${first.result._meta['io.agw/action_id']}`, { token })).status).toBe(200);
      const retry = await mcp(GW1, 'tools/call', { name: 'fx__add', arguments: { a: 6000, b: 1 }, requestState: first.result.requestState, inputResponses: { agw_approval: { action: 'accept' } } }, elicitation);
      expect(retry.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: '6001' }] });
    } finally {
      await fixtures.close();
    }
  });

  it('holds a tenant rate limit across the replicas, not per replica', async () => {
    const t = await newTenant('Replicas rate');
    expect((await req(GW1, 'PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 1, rate_limit_burst: 6 } })).status).toBe(200);
    await sleep(6_500); // the earlier requests leave the 6 s window; every replica's settings cache (2 s) has the new limit
    const rs = await Promise.all(Array.from({ length: 16 }, (_, i) => req(i % 2 ? GW2 : GW1, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[0] })));
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(6); // per replica it would be 12
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it('a rotated API key stops working on both gateways at once, the new one works on both', async () => {
    const t = tenants[1];
    for (const b of [GW1, GW2]) expect((await req(b, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[0] })).status).toBe(200); // cached on both
    const rotated = await req(GW1, 'POST', '/api-keys/rotate', { key: t.apiKey });
    expectStatus(rotated, 200);
    const fresh = rotated.body.api_key as string;
    expect((await req(GW2, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[0] })).status).toBe(401);
    expect((await req(GW1, 'POST', '/mcp/tools/call', { key: t.apiKey, body: KINDS[0] })).status).toBe(401);
    expect((await req(GW2, 'POST', '/mcp/tools/call', { key: fresh, body: KINDS[0] })).status).toBe(200);
    expect((await req(GW1, 'POST', '/mcp/tools/call', { key: fresh, body: KINDS[0] })).status).toBe(200);
    t.apiKey = fresh;
  });

  it('carries on when one replica of every service is SIGKILLed mid-run, and loses nothing it answered', async () => {
    const killed = ['gateway-2', 'policy-2', 'audit-2', 'vault-2', 'webhook-2', 'anchor-2', 'managed-2'];
    for (const t of tenants) t.received.length = 0;
    const since = await lastRecordId();
    let killedAt = Infinity;
    // calls sent 3 s or more after the kill: by then every channel has moved to the survivors
    const late = (as: Answer[]) => as.filter((a) => a.startedAt >= killedAt + 3_000);
    let killing: Promise<unknown> = Promise.resolve();
    // the kill comes after 30 answers; the run goes on until 30 calls were sent well after it
    const answers = await drive(
      tenants,
      () => (Date.now() < killedAt ? [GW1, GW2, PROXY] : [GW1, PROXY]), // after the kill: gateway 2's port is gone
      (as) => {
        if (as.length >= 30 && killedAt === Infinity) {
          killedAt = Date.now();
          killing = Promise.all(killed.map((s) => control('kill', s)));
        }
        return late(as).length >= 30;
      },
    );
    await killing;
    expect(unanswered(late(answers))).toEqual([]);
    expect(answers.filter(answered).length).toBeGreaterThanOrEqual(30);
    await checkRecords(tenants, answers, since);
    await checkWebhooks(answers, { exactlyOnce: false });
    // the survivors serve every other kind of request
    expect((await req(PROXY, 'GET', '/managed/agents', { key: tenants[0].apiKey })).status).toBe(200);
    const trigger = await req(PROXY, 'POST', '/anchor/trigger', { key: tenants[2].apiKey });
    expect([200, 409]).toContain(trigger.status);
    await checkTreesAndAnchors(tenants);

    // the killed replicas come back and rejoin: the proxy and every gRPC channel use them again
    await Promise.all(killed.map((name) => control('start', name)));
    const since2 = await lastRecordId();
    const again = await drive(tenants, () => [GW1, GW2, PROXY], (a) => a.length >= 30, 2);
    expect(unanswered(again)).toEqual([]);
    await checkRecords(tenants, again, since2);
  });
});
