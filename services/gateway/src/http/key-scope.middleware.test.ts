/**
 * keyScopeGuard on a small app over real HTTP, with the caller's AuthContext set as auth.middleware.ts sets
 * it: the transport's 405 for GET/DELETE on the MCP server's endpoints for every credential that may use
 * the MCP server (before any scope check), an OAuth token's reach (the MCP server, the actions its grant
 * queued) and an agent key's.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createLogger } from '@agw/shared';
import express, { Router } from 'express';
import { errorHandler } from './error-handler';
import { keyScopeGuard } from './key-scope.middleware';
import type { AuthContext } from './request-context';

const CALLERS: Record<string, AuthContext> = {
  tenant: { tenantId: 't1', method: 'api_key', isAdmin: false, keyScope: 'tenant', keyHash: 'h-tenant' },
  agent: { tenantId: 't1', method: 'api_key', isAdmin: false, keyScope: 'agent', keyHash: 'h-agent' },
  oauth: { tenantId: 't1', method: 'oauth', isAdmin: false, keyScope: 'agent', keyHash: 'oauth-grant:g1', agentName: 'inspector', oauthClientId: 'c1' },
};

let server: Server;
let base: string;

beforeAll(async () => {
  const api = Router();
  api.use((req, _res, next) => {
    const who = req.header('x-caller');
    if (who) req.auth = CALLERS[who];
    next();
  });
  api.use(keyScopeGuard);
  // stand-ins for the routes behind the guard: the MCP server answers 405 itself to a tenant key
  api.post(['/mcp/server', '/mcp/server/sessions/:id', '/mcp/server/upstreams/:name'], (_req, res) => void res.json({ reached: 'mcp' }));
  api.all(['/mcp/server', '/mcp/server/sessions/:id', '/mcp/server/upstreams/:name'], (_req, res) => void res.status(405).set('allow', 'POST').json({ route: 405 }));
  api.get('/actions/:id', (_req, res) => void res.json({ reached: 'actions' }));
  api.get('/approvals', (_req, res) => void res.json({ reached: 'approvals' }));
  api.post('/mcp/tools/call', (_req, res) => void res.json({ reached: 'tools' }));
  const app = express();
  app.use('/api', api);
  app.use(errorHandler(createLogger('test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const call = async (caller: string, method: string, path: string) => {
  const res = await fetch(`${base}${path}`, { method, headers: { 'x-caller': caller } });
  return { status: res.status, allow: res.headers.get('allow'), body: (await res.json()) as Record<string, any> };
};

describe('GET and DELETE on the MCP server: the transport’s 405 before any scope check', () => {
  test.each([
    ['agent', 'GET', '/mcp/server'],
    ['agent', 'DELETE', '/mcp/server'],
    ['agent', 'GET', '/mcp/server/'],
    ['agent', 'GET', '/mcp/server/sessions/abc'],
    ['agent', 'DELETE', '/mcp/server/sessions/abc'],
    ['oauth', 'GET', '/mcp/server'],
    ['oauth', 'DELETE', '/mcp/server'],
    ['oauth', 'GET', '/mcp/server/sessions/abc'],
    ['oauth', 'DELETE', '/mcp/server/sessions/abc'],
    ['agent', 'GET', '/mcp/server/upstreams/everything'],
    ['oauth', 'DELETE', '/mcp/server/upstreams/everything'],
  ])('%s key: %s %s is 405 with a JSON-RPC error and Allow: POST', async (who, method, path) => {
    const r = await call(who, method, path);
    expect(r).toEqual({ status: 405, allow: 'POST', body: { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, use POST' }, id: null } });
  });

  test('the tenant key goes on to the route (which answers the 405 itself)', async () => {
    expect(await call('tenant', 'GET', '/mcp/server')).toMatchObject({ status: 405, body: { route: 405 } });
  });

  test('other methods and paths are not touched: PUT is still a scope question, POST reaches the server', async () => {
    expect((await call('agent', 'PUT', '/mcp/server')).status).toBe(403);
    expect((await call('oauth', 'PUT', '/mcp/server')).status).toBe(403);
    expect((await call('agent', 'GET', '/mcp/server/health/x')).status).toBe(403);
    expect((await call('agent', 'GET', '/mcp/server/upstreams/a/b')).status).toBe(403);
    expect((await call('agent', 'POST', '/mcp/server')).body).toEqual({ reached: 'mcp' });
    expect((await call('oauth', 'POST', '/mcp/server')).body).toEqual({ reached: 'mcp' });
  });

  test('one upstream’s own server: an agent key reaches it; an OAuth token (whose audience is /mcp/server) does not', async () => {
    expect((await call('agent', 'POST', '/mcp/server/upstreams/everything')).body).toEqual({ reached: 'mcp' });
    expect((await call('oauth', 'POST', '/mcp/server/upstreams/everything')).status).toBe(403);
  });
});

describe('what an OAuth access token reaches', () => {
  test('the MCP server and GET /actions/{id} (the route limits it to its grant’s actions)', async () => {
    expect((await call('oauth', 'GET', '/actions/0d9c3a4e-1111-4111-8111-111111111111')).body).toEqual({ reached: 'actions' });
  });

  test('nothing else: a 403 naming what it may do', async () => {
    for (const [method, path] of [
      ['GET', '/approvals'],
      ['POST', '/mcp/tools/call'],
      ['POST', '/mcp/server/sessions/abc'],
      ['DELETE', '/actions/x'],
      ['GET', '/actions/x/y'],
    ] as const) {
      const r = await call('oauth', method, path);
      expect([method, path, r.status]).toEqual([method, path, 403]);
      expect(r.body.detail).toBe(
        `This access token is an MCP client's: it is bound to the MCP server (POST /api/mcp/server), acts as an agent and may read the actions it queued (GET /api/actions/{action_id}), never ${method} /api${path}`,
      );
    }
  });

  test('an agent key keeps its own list', async () => {
    expect((await call('agent', 'POST', '/mcp/tools/call')).body).toEqual({ reached: 'tools' });
    expect((await call('agent', 'GET', '/actions/x')).body).toEqual({ reached: 'actions' });
    expect((await call('agent', 'GET', '/approvals')).status).toBe(403);
  });
});
