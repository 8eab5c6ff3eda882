/**
 * The stand-in's control API under `/_stand-in` (no API key; loopback clients only): tests and the demo
 * script sessions and inspect what the platform received. No answer carries a credential token.
 *
 * - `POST /_stand-in/sessions/{id}/script` `{steps}` → `{results}` once every step ran (see script-runner)
 * - `GET /_stand-in/sessions/{id}` → status, resolved agent, vault ids, metadata, events, interrupts, open streams
 * - `GET /_stand-in/sessions` → `{sessions: [{id, status, title, events, stream_connections}]}`
 * - `GET /_stand-in/health` → `{status: 'ok'}`
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, notFound, readJsonObject } from './api-errors';
import type { PlatformState, Session } from './platform-state';
import { Router } from './router';
import { parseSteps, runScript } from './script-runner';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export function checkLoopback(req: IncomingMessage): void {
  if (!LOOPBACK.test(req.socket.remoteAddress ?? '')) throw new ApiError(403, 'permission_error', 'the control API answers loopback clients only');
}

export function sessionView(s: Session) {
  return { id: s.id, status: s.status, agent: s.agent, vault_ids: s.vault_ids, metadata: s.metadata, title: s.title, events: s.log.events, interrupts: s.interrupts, stream_connections: s.log.connections };
}

export function controlApi(state: PlatformState): Router {
  const session = (id: string) => {
    const s = state.sessions.get(id);
    if (!s) throw notFound('session', id);
    return s;
  };
  return new Router()
    .on('GET', '/health', () => ({ status: 'ok', sessions: state.sessions.size }))
    .on('GET', '/sessions', () => ({
      sessions: [...state.sessions.values()].map((s) => ({ id: s.id, status: s.status, title: s.title, events: s.log.events.length, stream_connections: s.log.connections })),
    }))
    .on('GET', '/sessions/:id', ({ params }) => sessionView(session(params.id)))
    .on('POST', '/sessions/:id/script', async ({ req, params }) => {
      const s = session(params.id);
      const steps = parseSteps((await readJsonObject(req)).steps);
      return { results: await runScript(state, s, steps) };
    });
}
