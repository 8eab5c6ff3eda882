/**
 * tools/list_changed for the fixtures' Streamable HTTP sessions. The SDK drops a server notice when the
 * session has no standalone GET stream open, so a notice sent then is kept and sent again once the
 * stream opens (as a client that opens its stream late still hears of the change).
 */
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

/** A session as far as its tools/list_changed notices go. */
export interface ListChangedSession {
  server: Server;
  /** the session's standalone GET SSE stream is open (server-initiated notices go there) */
  standalone?: boolean;
  /** a tools/list_changed came while no standalone stream was open: sent as soon as one opens */
  listChangedPending?: boolean;
}

/** Send tools/list_changed to the session, and keep it for the standalone stream when none is open. */
export async function sendListChanged(s: ListChangedSession): Promise<void> {
  if (!s.standalone) s.listChangedPending = true;
  await s.server.sendToolListChanged().catch(() => undefined); // dropped by the transport if no stream is open
}

/** Follows a session's standalone GET stream (`res`): open once its SSE answer started, closed when it ends; sends a kept notice. */
export function watchStandalone(s: ListChangedSession, res: ServerResponse): void {
  const started = () => {
    if (res.destroyed || res.writableEnded) return;
    if (!res.headersSent) return void setTimeout(started, 5);
    if (res.statusCode !== 200) return; // 4xx: no stream (a GET's 200 is always the SSE stream)
    s.standalone = true;
    res.once('close', () => (s.standalone = false));
    if (s.listChangedPending) {
      s.listChangedPending = false;
      void s.server.sendToolListChanged().catch(() => undefined);
    }
  };
  setImmediate(started);
}
