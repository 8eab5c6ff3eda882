/** Public system endpoints: health, Prometheus metrics (internal network only), the OpenAPI document. */
import { Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { metricsExposure } from '../profile-exposure';
import { addPaths, openApiDocument } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';

const check = z.string().meta({ description: 'ok, or what failed' });
const healthSchema = z
  .looseObject({
    status: z.enum(['healthy', 'degraded', 'unhealthy']),
    redis: check,
    postgres: check,
    nats: check,
    services: z.record(z.string(), check),
    blockchain: z.looseObject({ status: z.string() }),
    merkle: z.looseObject({ status: z.string() }),
    hsm: z.looseObject({ status: z.string() }).optional(),
    checked_at: timestamp(),
  })
  .meta({ id: 'Health', description: 'Stores, services and the blockchain, Merkle and HSM sections (each with a status; more fields per section)' });

export function systemRoutes(d: Pick<TenantsFeature, 'config' | 'health' | 'registry'>): Router {
  const r = Router();
  r.get('/health', async (_req, res) => {
    const report = (await d.health.report()) as z.infer<typeof healthSchema>;
    reply(res, healthSchema, report, report.status === 'unhealthy' ? 503 : 200);
  });
  r.get('/metrics', metricsExposure(d.config.profile, d.config.metricsBearerToken), async (_req, res) => {
    res.type(d.registry.contentType).send(await d.registry.metrics());
  });
  r.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });
  return r;
}

addPaths({
  '/health': { get: { security: [], summary: 'Gateway health including stores, services, blockchain and Merkle status', responses: { 200: response('healthy or degraded', healthSchema), 503: response('unhealthy (a store is down)', healthSchema) } } },
  '/metrics': {
    get: {
      security: [],
      summary: 'Prometheus metrics: local profile only, or with METRICS_BEARER_TOKEN (production serves them on the ops port)',
      responses: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } }, 401: errors[401]('METRICS_BEARER_TOKEN is set and was not sent'), 404: errors[404]('production profile without METRICS_BEARER_TOKEN') },
    },
  },
  '/openapi.json': { get: { security: [], summary: 'This document (OpenAPI 3.1.0)', responses: { 200: { description: 'the OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } } } } },
});
