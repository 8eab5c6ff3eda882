/**
 * What an upstream sends during a federated tools/call reaches the caller (docs/mcp.md, "Inside a call"),
 * through the real gRPC ExecuteStream of the vault (its own definition started in-process,
 * test/support/start-vault.ts), the real Postgres and SoftHSM2 token, and two real upstreams over HTTP: the
 * project's 2026-07-28 fixture (SDK v2 server: progress and log messages at the level a request asks for) and
 * `@modelcontextprotocol/server-everything` (2025-11-25: its long-running operation's progress). The events
 * come in the upstream's order, the answer last; the unary Execute is unchanged; cancelling the stream cancels
 * the upstream's request.
 */
import { randomUUID } from 'node:crypto';
import { type ModernUpstream, type ReferenceServer, startModernUpstream, startServerEverything } from '@agw/mcp-fixtures';
import { federation as fpb, vault as pb } from '@agw/proto';
import { type PromiseClient, jsonField } from '@agw/shared';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

let started: StartedVault;
let modern: ModernUpstream;
let everything: ReferenceServer;
let client: PromiseClient<typeof pb.VaultServiceService>;
const tenant = randomUUID();

beforeAll(async () => {
  started = await startVault();
  client = started.vault;
  modern = await startModernUpstream({ port: 0 });
  everything = await startServerEverything();
  // registered through the vault's FederationService, as the gateway does
  for (const [name, url] of [['modern', `${modern.url}/mcp`], ['everything', everything.url]]) {
    const registered = await started.federation.registerUpstream(fpb.RegisterUpstreamRequest.fromPartial({ tenant_id: tenant, name, url }));
    expect(registered.status).toBe('connected');
  }
});

afterAll(async () => {
  await started?.close();
  await modern?.close();
  await everything?.close();
});

const request = (tool: string, method: string, params: Record<string, unknown>, relay: { progress?: boolean; logLevel?: string } = {}): pb.ExecuteRequest => ({
  tenant_id: tenant,
  action_id: randomUUID(),
  agent_id: 'agent-1',
  tool,
  method,
  ...jsonField('params', params),
  origin: 'tool_call',
  user_id: '',
  relay_progress: relay.progress ?? false,
  relay_log_level: relay.logLevel ?? '',
  mcp_round: undefined,
});

/** Every event of one ExecuteStream call, in the order they came, and the answer. */
async function stream(req: pb.ExecuteRequest, signal?: AbortSignal) {
  const events: pb.ExecuteEvent[] = [];
  const last = await client.executeStream(req, { onMessage: (e) => events.push(e), ...(signal ? { signal } : {}) });
  return { events, last };
}

const described = (e: pb.ExecuteEvent) => (e.progress ? `progress ${e.progress.progress}/${e.progress.total} ${e.progress.message ?? ''}`.trim() : e.log ? `${e.log.level} ${e.log.logger} ${e.log.data?.text}` : `answer ${e.response?.outcome}`);

describe('ExecuteStream', () => {
  test('a 2026-07-28 upstream: progress and info log messages in its order, the answer last', async () => {
    const { events, last } = await stream(request('modern', 'slow', { ms: 300, steps: 3, log: 'tick' }, { progress: true, logLevel: 'info' }));
    expect(events.map(described)).toEqual([
      'progress 1/3 step 1 of 3',
      'info slow "tick 1"',
      'progress 2/3 step 2 of 3',
      'info slow "tick 2"',
      'progress 3/3 step 3 of 3',
      'info slow "tick 3"',
      'answer executed',
    ]);
    expect(last.response).toMatchObject({ brokered: true, mcp_result: true, status_code: 200, outcome: 'executed' });
    expect(JSON.parse(last.response!.body!.text)).toMatchObject({ content: [{ type: 'text', text: 'waited 300 ms' }] });
    // the level went to the upstream in the request's _meta (a 2026-07-28 server logs only when asked)
    expect(modern.stats().lastMeta).toMatchObject({ 'io.modelcontextprotocol/logLevel': 'info' });
  });

  test('log messages only, from debug: no progress asked, none relayed', async () => {
    const { events } = await stream(request('modern', 'slow', { ms: 100, steps: 2, log: 'tock' }, { logLevel: 'debug' }));
    expect(events.map(described)).toEqual(['debug slow "starting"', 'info slow "tock 1"', 'info slow "tock 2"', 'answer executed']);
  });

  test('a 2025-11-25 upstream (server-everything): its long-running operation’s progress', async () => {
    const { events, last } = await stream(request('everything', 'trigger-long-running-operation', { duration: 0.3, steps: 3 }, { progress: true }));
    expect(events.map(described)).toEqual(['progress 1/3', 'progress 2/3', 'progress 3/3', 'answer executed']);
    expect(JSON.parse(last.response!.body!.text).content[0].text).toMatch(/Long running operation completed/);
  });

  test('a call that relays nothing: the answer alone; the unary Execute answers the same call', async () => {
    const { events } = await stream(request('modern', 'slow', { ms: 50, steps: 2, log: 'x' }));
    expect(events.map(described)).toEqual(['answer executed']);
    const unary = await client.execute(request('modern', 'slow', { ms: 50, steps: 2 }));
    expect(unary).toMatchObject({ brokered: true, outcome: 'executed', status_code: 200 });
  });

  test('an unknown log level is refused before anything runs', async () => {
    const before = modern.stats().calls.slow ?? 0;
    await expect(stream(request('modern', 'slow', { ms: 10, steps: 1 }, { logLevel: 'loud' }))).rejects.toMatchObject({ code: 'invalid_input' });
    expect(modern.stats().calls.slow ?? 0).toBe(before);
  });

  test('cancelling the stream cancels the upstream’s request', async () => {
    const before = modern.stats().cancelled;
    const ctl = new AbortController();
    const events: pb.ExecuteEvent[] = [];
    const call = client.executeStream(request('modern', 'slow', { ms: 20_000, steps: 100 }, { progress: true }), {
      signal: ctl.signal,
      onMessage: (e) => {
        events.push(e);
        ctl.abort();
      },
    });
    await expect(call).rejects.toBeDefined();
    expect(events).toHaveLength(1);
    for (const end = Date.now() + 10_000; modern.stats().cancelled === before && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    expect(modern.stats().cancelled).toBe(before + 1);
  });
});
