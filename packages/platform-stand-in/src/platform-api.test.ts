/**
 * The beta API through the official SDK over a real socket: resources and their shapes, the key and beta
 * header checks and the error shape, the SSE stream (no replay, named frames, heartbeats, a dropped
 * connection), the paged event list, user messages and interrupts, archiving.
 */
import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { control, createSession, script, sdkClient, until } from './__tests__/fixtures';
import { BETA, type RunningStandIn, startPlatformStandIn } from './index';

const KEY = 'test-key';
const MCP_URL = 'http://127.0.0.1:9/mcp'; // never called in this file
let standIn: RunningStandIn;
let client: Anthropic;

beforeAll(async () => {
  standIn = await startPlatformStandIn({ apiKey: KEY, heartbeatMs: 100 });
  client = sdkClient(standIn, KEY);
});
afterAll(() => standIn.close());

const raw = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  fetch(`${standIn.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

/** Collects event types from an SDK stream until `last` arrives. */
async function collect(sessionId: string, last: string): Promise<{ types: string[]; done: Promise<void> }> {
  const stream = await client.beta.sessions.events.stream(sessionId);
  const types: string[] = [];
  const done = (async () => {
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === last) break;
    }
  })();
  await until(() => standIn.state.sessions.get(sessionId)!.log.connections, (n) => n > 0);
  return { types, done };
}

describe('resources', () => {
  it('creates and retrieves agents, environments and vaults; a credential never echoes its token', async () => {
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5', system: 'sys', metadata: { k: 'v' } });
    expect(agent).toMatchObject({ type: 'agent', version: 1, name: 'a', model: { id: 'claude-sonnet-4-5' }, system: 'sys', tools: [], mcp_servers: [], metadata: { k: 'v' }, archived_at: null });
    expect(agent.id).toMatch(/^agent_/);
    expect(await client.beta.agents.retrieve(agent.id)).toEqual(agent);

    const env = await client.beta.environments.create({ name: 'e' });
    expect(env).toMatchObject({ type: 'environment', name: 'e', config: { type: 'cloud' }, archived_at: null });
    expect(env.id).toMatch(/^env_/);
    expect(await client.beta.environments.retrieve(env.id)).toEqual(env);

    const vault = await client.beta.vaults.create({ display_name: 'v', metadata: { tenant: 't' } });
    expect(vault).toMatchObject({ type: 'vault', display_name: 'v', metadata: { tenant: 't' } });
    expect(vault.id).toMatch(/^vlt_/);
    const cred = await client.beta.vaults.credentials.create(vault.id, { display_name: 'gw', auth: { type: 'static_bearer', token: 'tok-123', mcp_server_url: MCP_URL } });
    expect(cred).toMatchObject({ type: 'vault_credential', vault_id: vault.id, auth: { type: 'static_bearer', mcp_server_url: MCP_URL } });
    expect(cred.id).toMatch(/^vcrd_/);
    expect(JSON.stringify(cred)).not.toContain('tok-123');
  });

  it('creates a session with agent overrides, resolves the agent, and retrieves it', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    expect(s.id).toMatch(/^sesn_/);
    expect(s).toMatchObject({ type: 'session', status: 'idle', metadata: { tenant: 't1' }, title: 'a session', archived_at: null, resources: [], outcome_evaluations: [] });
    expect(s.agent).toMatchObject({ type: 'agent', version: 1, system: 'governed prompt', mcp_servers: [{ type: 'url', name: 'gw', url: MCP_URL }] });
    expect(s.agent.tools).toContainEqual({ type: 'mcp_toolset', mcp_server_name: 'gw', configs: [], default_config: { enabled: true, permission_policy: { type: 'always_allow' } } });
    expect(await client.beta.sessions.retrieve(s.id)).toMatchObject({ id: s.id, agent: s.agent, vault_ids: s.vault_ids });
    // a plain agent reference (id, or {type: 'agent', id, version}) runs the agent as defined
    const plain = await client.beta.sessions.create({ agent: { type: 'agent', id: s.agent.id, version: 1 }, environment_id: s.environment_id });
    expect(plain.agent).toMatchObject({ system: 'base prompt', mcp_servers: [] });
  });

  it('answers 404 for unknown agents, environments, vaults and sessions', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    await expect(client.beta.agents.retrieve('agent_missing')).rejects.toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error' } } });
    await expect(client.beta.sessions.create({ agent: 'agent_missing', environment_id: s.environment_id })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.sessions.create({ agent: s.agent.id, environment_id: 'env_missing' })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.sessions.create({ agent: s.agent.id, environment_id: s.environment_id, vault_ids: ['vlt_missing'] })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.vaults.credentials.create('vlt_missing', { auth: { type: 'static_bearer', token: 't', mcp_server_url: MCP_URL } })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.sessions.retrieve('sesn_missing')).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.sessions.events.list('sesn_missing').then((p) => p.data)).rejects.toMatchObject({ status: 404 });
  });
});

describe('access and errors', () => {
  it('refuses a wrong or missing key (401) and a missing beta header (400) in the error shape', async () => {
    await expect(sdkClient(standIn, 'wrong').beta.agents.create({ name: 'x', model: 'm' })).rejects.toMatchObject({ status: 401, error: { error: { type: 'authentication_error' } } });
    const noKey = await raw('GET', '/v1/agents/agent_x', { 'anthropic-beta': BETA });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
    const noBeta = await raw('POST', '/v1/agents', { 'x-api-key': KEY }, { name: 'x', model: 'm' });
    expect(noBeta.status).toBe(400);
    expect(await noBeta.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const ok = await raw('POST', '/v1/agents', { 'x-api-key': KEY, 'anthropic-beta': `other-beta,${BETA}` }, { name: 'x', model: 'm' });
    expect(ok.status).toBe(200);
  });

  it('validates bodies: 400 for bad JSON, missing fields, unsupported events and credential types', async () => {
    const h = { 'x-api-key': KEY, 'anthropic-beta': BETA };
    const bad = await fetch(`${standIn.url}/v1/agents`, { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{nope' });
    expect(bad.status).toBe(400);
    expect((await raw('POST', '/v1/agents', h, { model: 'm' })).status).toBe(400);
    const s = await createSession(client, { mcpUrl: MCP_URL });
    await expect(client.beta.sessions.events.send(s.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: 'x', result: 'allow' } as never] })).rejects.toMatchObject({ status: 400 });
    expect((await raw('POST', `/v1/vaults/${s.vault_ids[0]}/credentials`, h, { auth: { type: 'mcp_oauth' } })).status).toBe(400);
    expect((await raw('GET', '/v1/nowhere', h)).status).toBe(404);
    expect((await raw('GET', '/v1/agents/%E0%A4%A', h)).status).toBe(404);
    expect((await raw('GET', '/elsewhere')).status).toBe(404);
  });
});

describe('events', () => {
  it('starts a session with its initial user message; the stream gets only events appended after it opened', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL, message: 'hi' });
    expect(s.status).toBe('running');
    const { types, done } = await collect(s.id, 'session.status_idle');
    await script(standIn, s.id, [{ tool_use: { name: 'bash', input: { command: 'ls' } } }, { message: 'done' }, { idle: 'end_turn' }]);
    await done;
    expect(types).toEqual(['agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']);
    const listed = [];
    for await (const e of client.beta.sessions.events.list(s.id)) listed.push(e);
    expect(listed.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']);
    expect(listed[0]).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    expect(listed[3]).toMatchObject({ tool_use_id: listed[2].id, is_error: false });
    expect(listed[5]).toMatchObject({ stop_reason: { type: 'end_turn' }, stop_details: null });
    for (const e of listed) expect(e).toMatchObject({ id: expect.stringMatching(/^sevt_/), processed_at: expect.any(String) });
    expect((await client.beta.sessions.retrieve(s.id)).status).toBe('idle');
  });

  it('pages the event list with an opaque cursor, oldest first', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL, message: 'hi' });
    await script(standIn, s.id, [{ message: 'one' }, { message: 'two' }, { idle: 'requires_action' }]);
    const first = await client.beta.sessions.events.list(s.id, { limit: 2 });
    expect(first.data.map((e) => e.type)).toEqual(['user.message', 'session.status_running']);
    expect(first.next_page).toEqual(expect.any(String));
    const all = [];
    for await (const e of client.beta.sessions.events.list(s.id, { limit: 2 })) all.push(e);
    expect(all.map((e) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.message', 'agent.message', 'session.status_idle']);
    expect(all[4]).toMatchObject({ stop_reason: { type: 'requires_action', event_ids: [] } });
    const h = { 'x-api-key': KEY, 'anthropic-beta': BETA };
    expect(await (await raw('GET', `/v1/sessions/${s.id}/events?limit=5`, h)).json()).toMatchObject({ next_page: null });
    expect((await raw('GET', `/v1/sessions/${s.id}/events?page=garbage`, h)).status).toBe(400);
    expect((await raw('GET', `/v1/sessions/${s.id}/events?limit=0`, h)).status).toBe(400);
  });

  it('frames every SSE event with event:, id: and data:, and sends event: ping heartbeats', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.get(`${standIn.url}/v1/sessions/${s.id}/events/stream`, { headers: { 'x-api-key': KEY, 'anthropic-beta': BETA } }, (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        let buf = '';
        res.on('data', (c) => {
          buf += c;
          if (buf.includes('event: agent.message') && buf.includes('event: ping')) (req.destroy(), resolve(buf));
        });
        void script(standIn, s.id, [{ message: 'framed' }]);
      });
      req.on('error', reject);
    });
    const frame = text.split('\n\n').find((f) => f.includes('event: agent.message'))!;
    const lines = frame.split('\n');
    const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6));
    expect(lines).toContain(`id: ${data.id}`);
    expect(data).toMatchObject({ type: 'agent.message', content: [{ type: 'text', text: 'framed' }] });
    expect(text).toContain('event: ping\ndata: ');
  });

  it('a dropped stream ends the SDK iteration (with an error or an end)', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    const stream = await client.beta.sessions.events.stream(s.id);
    const outcome = (async () => {
      try {
        for await (const _e of stream) {
          /* the drop ends it */
        }
        return 'ended';
      } catch {
        return 'error';
      }
    })();
    await until(() => standIn.state.sessions.get(s.id)!.log.connections, (n) => n === 1);
    expect(await script(standIn, s.id, [{ drop_stream: true }])).toEqual([{ dropped: 1 }]);
    expect(['ended', 'error']).toContain(await outcome);
    expect((await control(standIn, 'GET', `/sessions/${s.id}`)).body.stream_connections).toBe(0);
  });

  it('user.interrupt stops a running script, idles the session (end_turn) and is recorded', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL, message: 'go' });
    const t0 = Date.now();
    const running = script(standIn, s.id, [{ message: 'working' }, { wait_ms: 5000 }, { tool_use: { name: 'bash', input: { command: 'ls' } } }, { idle: 'end_turn' }]);
    await until(() => standIn.state.sessions.get(s.id)!.log.events.length, (n) => n >= 3);
    const sent = await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.interrupt' }] });
    expect(sent.data).toEqual([expect.objectContaining({ type: 'user.interrupt', id: expect.stringMatching(/^sevt_/), processed_at: expect.any(String) })]);
    const results = await running;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(results[1]).toMatchObject({ interrupted: true });
    expect(results.slice(2)).toEqual(['skipped', 'skipped']);
    const view = (await control(standIn, 'GET', `/sessions/${s.id}`)).body;
    expect(view.status).toBe('idle');
    expect(view.interrupts).toEqual([{ event_id: sent.data![0].id, received_at: expect.any(String), script_running: true }]);
    expect(view.events.map((e: any) => e.type)).toEqual(['user.message', 'session.status_running', 'agent.message', 'user.interrupt', 'session.status_idle']);
    expect(view.events.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
  });

  it('a user message starts an idle session; errors and termination are session events', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    const sent = await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }] });
    expect(sent.data).toEqual([expect.objectContaining({ type: 'user.message', content: [{ type: 'text', text: 'again' }] })]);
    expect((await client.beta.sessions.retrieve(s.id)).status).toBe('running');
    const results = await script(standIn, s.id, [{ error: 'unknown_error' }, { terminate: true }, { message: 'never' }]);
    expect(results[2]).toBe('skipped');
    const types = standIn.state.sessions.get(s.id)!.log.events.map((e) => e.type);
    expect(types).toEqual(['user.message', 'session.status_running', 'session.error', 'session.status_terminated']);
    expect(standIn.state.sessions.get(s.id)!.log.events[2]).toMatchObject({ error: { type: 'unknown_error', message: expect.any(String), retry_status: { type: 'terminal' } } });
    expect((await client.beta.sessions.retrieve(s.id)).status).toBe('terminated');
  });

  it('archive terminates the session and emits session.status_terminated to open streams', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL, message: 'hi' });
    const { types, done } = await collect(s.id, 'session.status_terminated');
    const archived = await client.beta.sessions.archive(s.id);
    await done;
    expect(types).toEqual(['session.status_terminated']);
    expect(archived).toMatchObject({ status: 'terminated', archived_at: expect.any(String) });
  });
});

describe('control API', () => {
  it('lists sessions, answers health, rejects bad scripts, and 404s unknown sessions', async () => {
    const s = await createSession(client, { mcpUrl: MCP_URL });
    expect((await control(standIn, 'GET', '/health')).body).toMatchObject({ status: 'ok' });
    expect((await control(standIn, 'GET', '/sessions')).body.sessions).toContainEqual(expect.objectContaining({ id: s.id, status: 'idle' }));
    const bad = await control(standIn, 'POST', `/sessions/${s.id}/script`, { steps: [{ message: 'x' }, { fly: true }] });
    expect(bad).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', message: expect.stringContaining('steps[1]') } } });
    expect(standIn.state.sessions.get(s.id)!.log.events).toHaveLength(0);
    expect((await control(standIn, 'GET', '/sessions/sesn_missing')).status).toBe(404);
  });
});
