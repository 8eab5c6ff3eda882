/**
 * TRUST_PROXY: the client's address behind an ingress. The setting takes off, a hop count or the ingress's
 * ranges, never "trust all"; and with a hop count of 1 an X-Forwarded-For entry the client wrote itself
 * cannot become req.ip, so the per-IP limit (real Redis) and MCP_IP_ALLOWLIST see the address the ingress
 * appended. The app is set up as app.ts sets it (`trust proxy` from the loaded config), over real HTTP.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { ConfigError, TEST_REDIS_URL, createLogger, createRedis, waitForRedis } from '@agw/shared';
import { loadGatewayConfig } from '../config';
import { mcpSourceCheck } from '../mcp/mcp.routes';
import { errorHandler } from './error-handler';
import { ipRateLimit } from './rate-limit.middleware';

describe('the TRUST_PROXY setting', () => {
  const trustProxy = (v: string | undefined) => loadGatewayConfig({ TRUST_PROXY: v }).trustProxy;

  it('is off by default and takes false, a hop count or comma-separated ingress ranges', () => {
    expect(trustProxy(undefined)).toBe(false);
    expect(trustProxy('false')).toBe(false);
    expect(trustProxy('0')).toBe(false);
    expect(trustProxy('1')).toBe(1);
    expect(trustProxy('2')).toBe(2);
    expect(trustProxy('10.0.0.0/8, 192.168.1.5 ,fd00::/8')).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']);
  });

  it.each(['true', 'TRUE', 'yes', 'on', 'all', '*'])('refuses %s (trust every hop) at start, saying why', (v) => {
    expect(() => trustProxy(v)).toThrow(ConfigError);
    expect(() => trustProxy(v)).toThrow(/TRUST_PROXY: .*would trust every hop, so a client's own X-Forwarded-For entry would become its address/);
  });

  it.each([['10.0.0.0/33'], ['10.0.0/8'], ['ingress.example'], ['::1/129'], ['10.0.0.0/8/1'], ['11']])('refuses %s', (v) => {
    expect(() => trustProxy(v)).toThrow(ConfigError);
  });
});

describe('behind one ingress that appends (TRUST_PROXY=1)', () => {
  const redis = createRedis(TEST_REDIS_URL);
  let server: Server;
  let base: string;

  beforeAll(async () => {
    await waitForRedis(redis);
    const config = loadGatewayConfig({ TRUST_PROXY: '1', MCP_IP_ALLOWLIST: '10.0.0.0/8' });
    const app = express();
    app.set('trust proxy', config.trustProxy);
    app.get('/ip', (req, res) => void res.json({ ip: req.ip }));
    app.post('/auth/login', ipRateLimit({ redis, perMinute: 3, name: `trust-proxy-${randomUUID()}` }), (_req, res) => void res.json({ ok: true }));
    const checkSource = mcpSourceCheck(config.mcpIpAllowlist);
    app.post('/mcp/server', (req, res) => {
      checkSource(req);
      res.json({ ok: true });
    });
    app.use(errorHandler(createLogger('test', 'silent')));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    redis.disconnect();
    await new Promise((r) => server.close(r));
  });

  /** what the gateway receives: the client's own header, then the address the ingress appended */
  const through = (clientWrote: string | undefined, ingressSaw: string) => ({ 'X-Forwarded-For': clientWrote ? `${clientWrote}, ${ingressSaw}` : ingressSaw });

  it('req.ip is the address the ingress appended, never the entry the client wrote', async () => {
    const ip = async (headers: Record<string, string>) => ((await (await fetch(`${base}/ip`, { headers })).json()) as { ip: string }).ip;
    expect(await ip(through(undefined, '203.0.113.77'))).toBe('203.0.113.77');
    expect(await ip(through('10.1.2.3', '203.0.113.77'))).toBe('203.0.113.77');
    expect(await ip(through('10.1.2.3, 10.9.9.9', '203.0.113.77'))).toBe('203.0.113.77');
    // a request that came around the ingress: the socket's address
    expect(await ip({})).toBe('127.0.0.1');
  });

  it('the per-IP limit counts the appended address, however the client rotates its own entry', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${base}/auth/login`, { method: 'POST', headers: through(`10.0.0.${i + 1}`, '198.51.100.9') })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // another client behind the same ingress keeps its own budget
    expect((await fetch(`${base}/auth/login`, { method: 'POST', headers: through('10.0.0.1', '198.51.100.10') })).status).toBe(200);
  });

  it('MCP_IP_ALLOWLIST judges the appended address: a client cannot claim an allowed one', async () => {
    const claimed = await fetch(`${base}/mcp/server`, { method: 'POST', headers: through('10.1.2.3', '203.0.113.77') });
    expect(claimed.status).toBe(403);
    expect(((await claimed.json()) as { detail: string }).detail).toMatch(/MCP_IP_ALLOWLIST/);
    expect((await fetch(`${base}/mcp/server`, { method: 'POST', headers: through('203.0.113.77', '10.1.2.3') })).status).toBe(200);
  });
});
