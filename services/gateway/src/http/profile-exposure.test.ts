import type { AddressInfo } from 'node:net';
import express from 'express';
import { errorHandler } from './error-handler';
import { localProfileOnly, metricsExposure } from './profile-exposure';
import { createLogger } from '@agw/shared';

/** The two guards on routes shaped like the gateway's, behind its error mapping. */
async function serve(profile: 'local' | 'production', token?: string) {
  const app = express();
  app.get('/api/metrics', metricsExposure(profile, token), (_req, res) => void res.type('text/plain').send('agw_up 1\n'));
  app.post('/api/audit/tamper-simulate', localProfileOnly(profile), (_req, res) => void res.json({ status: 'tampered' }));
  app.use(errorHandler(createLogger('test', 'silent')));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return { base, close: () => new Promise((r) => server.close(r)) };
}

describe('what the edge exposes by profile', () => {
  it('local: metrics and the tamper demo are there', async () => {
    const s = await serve('local');
    expect((await fetch(`${s.base}/metrics`)).status).toBe(200);
    expect((await fetch(`${s.base}/audit/tamper-simulate`, { method: 'POST' })).status).toBe(200);
    await s.close();
  });

  it('production: no public metrics and no tamper demo (404)', async () => {
    const s = await serve('production');
    const m = await fetch(`${s.base}/metrics`);
    expect(m.status).toBe(404);
    expect(((await m.json()) as { detail: string }).detail).toMatch(/ops port/);
    expect((await fetch(`${s.base}/audit/tamper-simulate`, { method: 'POST' })).status).toBe(404);
    await s.close();
  });

  it('with METRICS_BEARER_TOKEN: metrics only with that token', async () => {
    const token = 'metrics-token-0123456789';
    for (const profile of ['production', 'local'] as const) {
      const s = await serve(profile, token);
      expect((await fetch(`${s.base}/metrics`)).status).toBe(401);
      expect((await fetch(`${s.base}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const ok = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('agw_up 1');
      await s.close();
    }
  });
});
