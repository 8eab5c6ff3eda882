/**
 * An upstream of revision 2026-07-28 (the official SDK v2: `@modelcontextprotocol/server` createMcpHandler,
 * both eras in one endpoint), for what a 2025 server cannot do: a tool that asks for the user's input in the
 * multi round-trip form (SEP-2322: `input_required` with an elicitation and a `requestState`), and a slow
 * tool that reports progress and notices its cancellation. Served at `<url>/mcp`.
 *
 * Tools:
 * - `confirm_delete {path}`: the first round answers `input_required`, a form elicitation `confirm`
 *   ("Delete <path>?") and the state `confirm:<path>`, when the request declared elicitation (else an
 *   error result saying the client cannot answer); the round with the state and an accepted
 *   `{confirm: true}` answers `Deleted <path>`, any other answer `Kept <path>`;
 * - `slow {ms, steps, log}`: waits `ms` (default 5000), sending `steps` progress notifications (default 5) when the
 *   request has a progressToken, and with `log` (a string) a log message per step (`info`, data
 *   `"<log> <step>"`, logger `slow`) after a `debug` one (`"starting"`), as far as the request's log level lets
 *   it (the SDK's `log`); `cancelled` in stats() counts the calls whose request was cancelled.
 */
import { type AddressInfo } from 'node:net';
import http from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Server, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';

export interface ModernUpstream {
  /** `http://host:port` (the MCP endpoint is `${url}/mcp`) */
  url: string;
  stats(): { calls: Record<string, number>; cancelled: number; lastMeta: Record<string, unknown> | undefined };
  close(): Promise<void>;
}

export const MODERN_TOOLS = [
  {
    name: 'confirm_delete',
    description: 'Deletes a file after the user confirms it.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'slow',
    description: 'Waits, reporting progress.',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' }, steps: { type: 'number' }, log: { type: 'string' } } },
  },
];

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export async function startModernUpstream(o: { port?: number; host?: string } = {}): Promise<ModernUpstream> {
  const calls: Record<string, number> = {};
  let cancelled = 0;
  let lastMeta: Record<string, unknown> | undefined;
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'agw-modern-fixture', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: MODERN_TOOLS as never }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      calls[name] = (calls[name] ?? 0) + 1;
      lastMeta = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      if (name === 'confirm_delete') {
        const path = String(args.path ?? '');
        const state = ctx.mcpReq.requestState<string>();
        if (state === undefined) {
          const caps = ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities' as never] as { elicitation?: unknown } | undefined;
          if (!caps?.elicitation) return { ...text('This tool needs the user to confirm, and the client declared no elicitation'), isError: true };
          return inputRequired({
            inputRequests: {
              confirm: {
                method: 'elicitation/create',
                params: { mode: 'form', message: `Delete ${path}?`, requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] } },
              },
            },
            requestState: `confirm:${path}`,
          }) as never;
        }
        const answer = ctx.mcpReq.inputResponses?.confirm as { action?: string; content?: { confirm?: unknown } } | undefined;
        const yes = state === `confirm:${path}` && answer?.action === 'accept' && answer.content?.confirm === true;
        return text(yes ? `Deleted ${path}` : `Kept ${path}`);
      }
      if (name === 'slow') {
        const ms = typeof args.ms === 'number' ? args.ms : 5000;
        const steps = typeof args.steps === 'number' ? args.steps : 5;
        const token = (request.params._meta as { progressToken?: string | number } | undefined)?.progressToken;
        const signal = ctx.mcpReq.signal;
        const log = typeof args.log === 'string' ? args.log : undefined;
        if (log !== undefined) await ctx.mcpReq.log('debug', 'starting', 'slow').catch(() => undefined);
        for (let i = 1; i <= steps; i++) {
          const waited = await new Promise<boolean>((resolve) => {
            const t = setTimeout(() => resolve(true), ms / steps);
            signal.addEventListener('abort', () => (clearTimeout(t), resolve(false)), { once: true });
          });
          if (!waited) {
            cancelled++;
            return { ...text('cancelled'), isError: true };
          }
          if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i} of ${steps}` } }).catch(() => undefined);
          if (log !== undefined) await ctx.mcpReq.log('info', `${log} ${i}`, 'slow').catch(() => undefined);
        }
        return text(`waited ${ms} ms`);
      }
      return { ...text(`Unknown tool ${name}`), isError: true };
    });
    return server;
  });
  const node = toNodeHandler(handler);
  const srv = http.createServer((req, res) => {
    if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
    // a closed request is a cancelled one: the SDK aborts the handler's signal
    void node(req, res);
  });
  await new Promise<void>((resolve) => srv.listen(o.port ?? 0, o.host ?? '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    stats: () => ({ calls: { ...calls }, cancelled, lastMeta }),
    close: async () => {
      await handler.close();
      srv.closeAllConnections();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}
