/**
 * The platform stand-in's HTTP server: the Managed Agents beta API under `/v1` (see platform-api) and
 * the loopback control API under `/_stand-in` (see control-api), over one real socket, state in memory.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, sendError } from './api-errors';
import { checkLoopback, controlApi } from './control-api';
import { checkAccess, platformApi } from './platform-api';
import { PlatformState } from './platform-state';
import { runDemo } from './script-runner';

export interface StandInOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0 (an ephemeral port) */
  port?: number;
  /** the API key the `/v1` API accepts */
  apiKey: string;
  /** sessions created with a user message run the demo script by themselves */
  demo?: boolean;
  /** interval of `event: ping` frames on event streams; default 15 000 ms */
  heartbeatMs?: number;
}

export interface RunningStandIn {
  /** base URL for the SDK (`new Anthropic({ apiKey, baseURL: url })`) and the control API */
  url: string;
  port: number;
  /** the in-memory platform, for in-process assertions */
  state: PlatformState;
  /** ends every event stream and stops listening */
  close(): Promise<void>;
}

/** How long a demo session "thinks" before it acts (lets the consumer attach its stream first). */
const DEMO_START_MS = 300;

export async function startPlatformStandIn(o: StandInOptions): Promise<RunningStandIn> {
  if (!o.apiKey) throw new Error('startPlatformStandIn: apiKey is required');
  const state = new PlatformState();
  const host = o.host ?? '127.0.0.1';
  const timers = new Set<NodeJS.Timeout>();
  const v1 = platformApi(state, {
    apiKey: o.apiKey,
    heartbeatMs: o.heartbeatMs ?? 15_000,
    onSessionCreated: (s) => {
      if (!o.demo || s.status !== 'running') return;
      const t = setTimeout(() => {
        timers.delete(t);
        void runDemo(state, s).catch(() => undefined);
      }, DEMO_START_MS);
      timers.add(t);
    },
  });
  const control = controlApi(state);

  const server = http.createServer((req, res) => {
    const handled = (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      let segments: string[];
      try {
        segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      } catch {
        throw new ApiError(404, 'not_found_error', `no route ${req.method} ${url.pathname}`);
      }
      const [prefix, ...path] = segments;
      if (prefix === 'v1') {
        checkAccess(req, o.apiKey);
        return v1.dispatch(req, res, path, url.searchParams);
      }
      if (prefix === '_stand-in') {
        checkLoopback(req);
        return control.dispatch(req, res, path, url.searchParams);
      }
      throw new ApiError(404, 'not_found_error', `no route ${req.method} ${url.pathname}`);
    })();
    handled.catch((e: unknown) => sendError(res, e));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of state.sessions.values()) s.log.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
