/** Tenant reads; POST/GET /tenants are for administrators (ADMIN_EMAILS or users.is_admin, with a session token). */
import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { z } from 'zod';
import { ForbiddenError, NotFoundError } from '@agw/shared';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { slugify } from '../../tenants/accounts';
import { newApiKey } from '../../tenants/api-keys';
import { NEW_TENANT_SETTINGS } from '../../tenants/settings.schema';
import { isUuid } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const createBody = z.object({ name: z.string().trim().min(1).max(256), slug: z.string().regex(/^[a-z0-9-]{1,64}$/).optional() }).strict();

const tenantSchema = z.object({ tenant_id: z.string(), slug: z.string(), name: z.string(), created_at: timestamp() }).meta({ id: 'Tenant' });
const createdResponse = z.object({ tenant_id: z.string(), slug: z.string(), name: z.string(), api_key: z.string().meta({ description: 'shown only once' }) });
const listResponse = z.object({ tenants: z.array(tenantSchema), count: z.number().int() });

const present = (t: { id: string; slug: string; name: string; created_at: Date }): z.infer<typeof tenantSchema> => ({ tenant_id: t.id, slug: t.slug, name: t.name, created_at: t.created_at.toISOString() });

export function tenantRoutes(d: Pick<TenantsFeature, 'tenants'>): Router {
  const r = Router();
  const admin = (req: import('express').Request) => {
    if (!authOf(req).isAdmin) throw new ForbiddenError('Administrator access required');
  };
  r.post('/tenants', async (req, res) => {
    admin(req);
    const body = parseWith(createBody, req.body, 'body');
    const id = randomUUID();
    let slug = body.slug ?? slugify(body.name);
    if (await d.tenants.slugExists(slug)) slug = `${slug}-${id.slice(0, 8)}`;
    const key = newApiKey();
    await d.tenants.createTenant({ id, slug, name: body.name }, key, { ...NEW_TENANT_SETTINGS });
    reply(res, createdResponse, { tenant_id: id, slug, name: body.name, api_key: key.key }, 201);
  });
  r.get('/tenants', async (req, res) => {
    admin(req);
    const tenants = await d.tenants.listTenants();
    reply(res, listResponse, { tenants: tenants.map(present), count: tenants.length });
  });
  r.get('/tenants/:id', async (req, res) => {
    const auth = authOf(req);
    const id = req.params.id;
    // another tenant's id is reported as not found (admins may read any tenant)
    if (!isUuid(id) || (id.toLowerCase() !== auth.tenantId && !auth.isAdmin)) throw new NotFoundError('Tenant not found');
    const t = await d.tenants.getTenant(id.toLowerCase());
    if (!t) throw new NotFoundError('Tenant not found');
    reply(res, tenantSchema, present(t));
  });
  return r;
}

const adminOnly = errors[403]('administrators only (ADMIN_EMAILS or users.is_admin, with a session token)');
addPaths({
  '/tenants': {
    get: { summary: 'All tenants (administrators)', responses: { 200: response('tenants', listResponse), 403: adminOnly } },
    post: { summary: 'Create a tenant without an owner (administrators)', requestBody: jsonBody(createBody), responses: { 201: response('the tenant and its API key (shown once)', createdResponse), 403: adminOnly, 422: errors[422]() } },
  },
  '/tenants/{id}': { get: { summary: 'A tenant (the caller’s own; administrators: any)', parameters: [pathParam('id', { type: 'string', format: 'uuid' })], responses: { 200: response('tenant', tenantSchema), 404: errors[404]() } } },
});
