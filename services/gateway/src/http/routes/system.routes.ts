/** Public system endpoints: health, Prometheus metrics (internal network only), the OpenAPI document. */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';
import { openApiDocument } from '../../openapi/openapi';

export function systemRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/health', async (_req, res) => {
    const report = await d.health.report();
    res.status(report.status === 'unhealthy' ? 503 : 200).json(report);
  });
  r.get('/metrics', async (_req, res) => {
    res.type(d.registry.contentType).send(await d.registry.metrics());
  });
  r.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });
  return r;
}
