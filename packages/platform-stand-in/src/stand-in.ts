/**
 * The HTTP server of the platform stand-in: the Managed Agents beta API (`/v1/agents`, `/v1/environments`,
 * `/v1/vaults`, `/v1/vaults/{id}/credentials`, `/v1/sessions`, `/v1/sessions/{id}/events`, `.../stream`)
 * with the real authentication (the API key as `x-api-key` or `Authorization: Bearer`) and beta header (`anthropic-beta: managed-agents-2026-04-01`)
 * rules and Anthropic's error shape, plus a loopback control API under `/_stand-in` for scripting sessions.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Session, PlatformState, presentCredential, presentSession } from './platform-state';
import { runDemo, runScript } from './script-runner';
import { SessionLog, newId } from './session-log';

export const BETA = 'managed-agents-2026-04-01';

export interface StandInOptions {
  host?: string;
  port?: number;
  apiKey: string;
  /** sessions created with a user message run the demo script by themselves */
  demo?: boolean;
  heartbeatMs?: number;
}

export interface RunningStandIn {
  url: string;
  port: number;
  state: PlatformState;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const notFound = (what: string, id: string) => new ApiError(404, 'not_found_error', `${what} ${id} not found`);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* below */
  }
  throw new ApiError(400, 'invalid_request_error', 'body must be a JSON object');
}

export async function startPlatformStandIn(o: StandInOptions): Promise<RunningStandIn> {
  const state = new PlatformState();
  const heartbeatMs = o.heartbeatMs ?? 15_000;
  const sessionOf = (id: string): Session => {
    const s = state.sessions.get(id);
    if (!s) throw notFound('session', id);
    return s;
  };

  async function api(req: IncomingMessage, res: ServerResponse, path: string[], query: URLSearchParams): Promise<void> {
    // the SDK sends the key as `Authorization: Bearer` (1.x) or `x-api-key`
    const key = req.headers['x-api-key'] ?? String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (key !== o.apiKey) throw new ApiError(401, 'authentication_error', 'invalid API key');
    if (!String(req.headers['anthropic-beta'] ?? '').split(',').map((s) => s.trim()).includes(BETA)) {
      throw new ApiError(400, 'invalid_request_error', `this endpoint is in beta: send the anthropic-beta header ${BETA}`);
    }
    const m = req.method ?? 'GET';
    const [resource, id, sub, subId] = path;
    if (resource === 'agents') {
      if (m === 'POST' && !id) {
        const b = await readJson(req);
        if (typeof b.name !== 'string' || !b.model) throw new ApiError(400, 'invalid_request_error', 'name and model are required');
        return send(res, 200, state.createAgent(b));
      }
      if (m === 'GET' && id) return send(res, 200, state.agents.get(id) ?? (() => { throw notFound('agent', id); })());
    }
    if (resource === 'environments') {
      if (m === 'POST' && !id) {
        const b = await readJson(req);
        const env = { id: newId('env'), type: 'environment', name: String(b.name ?? 'default'), config: b.config ?? { type: 'cloud' }, metadata: b.metadata ?? {}, created_at: new Date().toISOString(), archived_at: null };
        state.environments.set(env.id, env);
        return send(res, 200, env);
      }
      if (m === 'GET' && id) return send(res, 200, state.environments.get(id) ?? (() => { throw notFound('environment', id); })());
    }
    if (resource === 'vaults') {
      if (m === 'POST' && !id) {
        const b = await readJson(req);
        const vault = { id: newId('vlt'), type: 'vault' as const, display_name: String(b.display_name ?? ''), metadata: b.metadata ?? {}, created_at: new Date().toISOString(), credentials: [] };
        state.vaults.set(vault.id, vault);
        const { credentials: _c, ...shown } = vault;
        return send(res, 200, { ...shown, archived_at: null });
      }
      const vault = id ? state.vaults.get(id) : undefined;
      if (id && !vault) throw notFound('vault', id);
      if (m === 'POST' && vault && sub === 'credentials' && !subId) {
        const b = await readJson(req);
        const auth = b.auth ?? {};
        if (auth.type !== 'static_bearer' || typeof auth.token !== 'string' || typeof auth.mcp_server_url !== 'string') {
          throw new ApiError(400, 'invalid_request_error', 'auth must be {type: static_bearer, token, mcp_server_url}');
        }
        const c = { id: newId('vcrd'), type: 'vault_credential' as const, vault_id: vault.id, display_name: b.display_name ?? null, token: auth.token, mcp_server_url: auth.mcp_server_url, created_at: new Date().toISOString() };
        vault.credentials.push(c);
        return send(res, 200, presentCredential(c));
      }
    }
    if (resource === 'sessions') {
      if (m === 'POST' && !id) return send(res, 200, presentSession(createSession(await readJson(req))));
      const s = id ? sessionOf(id) : undefined;
      if (s && m === 'GET' && !sub) return send(res, 200, presentSession(s));
      if (s && m === 'POST' && sub === 'archive') {
        s.status = 'terminated';
        s.log.append('session.status_terminated');
        return send(res, 200, presentSession(s));
      }
      if (s && sub === 'events' && m === 'GET' && subId === 'stream') return s.log.subscribe(res, heartbeatMs);
      if (s && sub === 'events' && m === 'GET' && !subId) return send(res, 200, s.log.page(Math.min(Math.max(Number(query.get('limit') ?? 1000) || 1000, 1), 1000), query.get('page') ?? undefined));
      if (s && sub === 'events' && m === 'POST' && !subId) {
        const b = await readJson(req);
        const events = Array.isArray(b.events) ? b.events : [];
        if (!events.length) throw new ApiError(400, 'invalid_request_error', 'events must be a non-empty array');
        const stored = [];
        for (const e of events) {
          if (e?.type === 'user.message') stored.push(s.log.append('user.message', { content: e.content ?? [] }));
          else if (e?.type === 'user.interrupt') {
            stored.push(s.log.append('user.interrupt', { session_thread_id: e.session_thread_id ?? null }));
            s.interrupts.push(new Date().toISOString());
            s.interruptEpoch++;
            if (s.status !== 'terminated') {
              s.status = 'idle';
              s.log.append('session.status_idle', { stop_reason: { type: 'end_turn' }, stop_details: null });
            }
          } else throw new ApiError(400, 'invalid_request_error', `the stand-in accepts user.message and user.interrupt, not ${e?.type}`);
        }
        return send(res, 200, { data: stored });
      }
    }
    throw new ApiError(404, 'not_found_error', `no route ${m} /v1/${path.join('/')}`);
  }

  function createSession(b: Record<string, any>): Session {
    const ref = b.agent;
    const agentId = typeof ref === 'string' ? ref : ref?.id;
    const base = state.agents.get(String(agentId));
    if (!base) throw notFound('agent', String(agentId));
    if (!state.environments.has(String(b.environment_id))) throw notFound('environment', String(b.environment_id));
    const vaultIds: string[] = Array.isArray(b.vault_ids) ? b.vault_ids : [];
    for (const v of vaultIds) if (!state.vaults.has(v)) throw notFound('vault', v);
    const overrides = ref?.type === 'agent_with_overrides' ? ref : {};
    const agent = {
      ...base,
      ...(overrides.system !== undefined ? { system: overrides.system } : {}),
      ...(overrides.mcp_servers ? { mcp_servers: overrides.mcp_servers } : {}),
      ...(overrides.tools ? { tools: overrides.tools } : {}),
    };
    const s: Session = {
      id: newId('sesn'),
      status: 'idle',
      agent,
      environment_id: b.environment_id,
      vault_ids: vaultIds,
      metadata: b.metadata ?? {},
      title: b.title ?? null,
      created_at: new Date().toISOString(),
      log: new SessionLog(),
      interrupts: [],
      interruptEpoch: 0,
    };
    state.sessions.set(s.id, s);
    const initial = Array.isArray(b.initial_events) ? b.initial_events.filter((e: any) => e?.type === 'user.message') : [];
    if (initial.length) {
      for (const e of initial) s.log.append('user.message', { content: e.content ?? [] });
      s.status = 'running';
      s.log.append('session.status_running');
      if (o.demo) setTimeout(() => void runDemo(state, s).catch(() => undefined), 300).unref();
    }
    return s;
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string[]): Promise<void> {
    const [resource, id, action] = path;
    if (resource === 'health') return send(res, 200, { status: 'ok', sessions: state.sessions.size });
    if (resource === 'sessions' && !id) return send(res, 200, { sessions: [...state.sessions.values()].map((s) => ({ id: s.id, status: s.status, events: s.log.events.length })) });
    if (resource === 'sessions' && id) {
      const s = sessionOf(id);
      if (req.method === 'GET' && !action) {
        return send(res, 200, { id: s.id, status: s.status, agent: s.agent, vault_ids: s.vault_ids, metadata: s.metadata, events: s.log.events, interrupts: s.interrupts, stream_connections: s.log.connections });
      }
      if (req.method === 'POST' && action === 'script') {
        const b = await readJson(req);
        if (!Array.isArray(b.steps)) throw new ApiError(400, 'invalid_request_error', 'steps must be an array');
        return send(res, 200, { results: await runScript(state, s, b.steps) });
      }
    }
    throw new ApiError(404, 'not_found_error', `no control route /_stand-in/${path.join('/')}`);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const handler = parts[0] === 'v1' ? api(req, res, parts.slice(1), url.searchParams) : parts[0] === '_stand-in' ? control(req, res, parts.slice(1)) : Promise.reject(new ApiError(404, 'not_found_error', 'not found'));
    handler.catch((e: unknown) => {
      if (res.headersSent) return void res.end();
      const err = e instanceof ApiError ? e : new ApiError(500, 'api_error', (e as Error).message);
      send(res, err.status, { type: 'error', error: { type: err.type, message: err.message } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    port,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of state.sessions.values()) s.log.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
