/**
 * The Managed Agents beta API under `/v1` (beta `managed-agents-2026-04-01`), as the official SDK calls
 * it: agents, environments, vaults and their credentials, sessions, and a session's events (send, list,
 * SSE stream). Every request needs the API key (`x-api-key`, or `Authorization: Bearer` as SDK 1.x
 * sends it) and the beta in `anthropic-beta`.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, invalidRequest, notFound, readJsonObject } from './api-errors';
import { type PlatformState, type Session, presentCredential, presentSession } from './platform-state';
import { Router } from './router';

export const BETA = 'managed-agents-2026-04-01';

export interface PlatformApiOptions {
  apiKey: string;
  heartbeatMs: number;
  /** called after a session is created (the demo mode starts its script here) */
  onSessionCreated(s: Session): void;
}

/** Throws the API's 401 / 400 unless the request carries the key and the beta header. */
export function checkAccess(req: IncomingMessage, apiKey: string): void {
  const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
  const key = req.headers['x-api-key'] ?? bearer;
  if (key !== apiKey) throw new ApiError(401, 'authentication_error', key ? 'invalid x-api-key' : 'x-api-key header is required');
  const betas = String(req.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim());
  if (!betas.includes(BETA)) throw invalidRequest(`this API is in beta: send the header anthropic-beta: ${BETA}`);
}

function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw invalidRequest('limit must be an integer from 1 to 1000');
  return n;
}

export function platformApi(state: PlatformState, o: PlatformApiOptions): Router {
  const get = <T>(map: Map<string, T>, what: string, id: string): T => {
    const v = map.get(id);
    if (v === undefined) throw notFound(what, id);
    return v;
  };
  const session = (id: string) => get(state.sessions, 'session', id);

  return new Router()
    .on('POST', '/agents', async ({ req }) => state.createAgent(await readJsonObject(req)))
    .on('GET', '/agents/:id', ({ params }) => get(state.agents, 'agent', params.id))
    .on('POST', '/environments', async ({ req }) => state.createEnvironment(await readJsonObject(req)))
    .on('GET', '/environments/:id', ({ params }) => get(state.environments, 'environment', params.id))
    .on('POST', '/vaults', async ({ req }) => state.createVault(await readJsonObject(req)))
    .on('GET', '/vaults/:id', ({ params }) => get(state.vaults, 'vault', params.id))
    .on('POST', '/vaults/:id/credentials', async ({ req, params }) => presentCredential(state.addCredential(params.id, await readJsonObject(req))))
    .on('POST', '/sessions', async ({ req }) => {
      const s = state.createSession(await readJsonObject(req));
      o.onSessionCreated(s);
      return presentSession(s);
    })
    .on('GET', '/sessions/:id', ({ params }) => presentSession(session(params.id)))
    .on('POST', '/sessions/:id/archive', ({ params }) => {
      const s = session(params.id);
      state.archive(s);
      return presentSession(s);
    })
    .on('POST', '/sessions/:id/events', async ({ req, params }) => {
      const s = session(params.id);
      const { events } = await readJsonObject(req);
      if (!Array.isArray(events) || events.length === 0) throw invalidRequest('events must be a non-empty array');
      events.forEach((e, i) => {
        if (e?.type === 'user.interrupt') return;
        if (e?.type === 'user.message' && Array.isArray(e.content)) return;
        if (e?.type === 'user.tool_confirmation') return;
        throw invalidRequest(`events[${i}]: the stand-in accepts user.message (with content), user.interrupt and user.tool_confirmation, not ${JSON.stringify(e?.type)}`);
      });
      const data = events.map((e) =>
        e.type === 'user.interrupt' ? state.interrupt(s, e.session_thread_id ?? null) : e.type === 'user.tool_confirmation' ? state.confirm(s, e) : state.userMessage(s, e.content),
      );
      return { data };
    })
    .on('GET', '/sessions/:id/events', ({ params, query }) => session(params.id).log.page(limitOf(query), query.get('page') ?? undefined))
    .on('GET', '/sessions/:id/events/stream', ({ params, res }) => {
      session(params.id).log.subscribe(res, o.heartbeatMs);
      return undefined;
    });
}
