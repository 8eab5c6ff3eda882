/**
 * Public transparency (no credentials; per-IP rate limit, mounted before authentication in app.ts):
 * - GET /dashboard/public/{slug}: the public dashboard of the tenant that published it under `slug`;
 * - GET /dashboard/public with `X-Service-Public-Tenant: <slug>`: the same, for a status page served on
 *   the tenant's own domain by a proxy that sets the header (the header selects, it never authorizes);
 * - GET /transparency: the tenants that publish one, with their latest signed tree head;
 * - GET /transparency/{tenant_id}: the same body as the dashboard, by tenant id.
 * Nothing is public unless the tenant opted in (settings `public_dashboard.enabled`); any other slug or
 * id, unknown or not published, is the same 404. Choices: docs/public-dashboard.md.
 */
import { InputError, NotFoundError } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, pathParam, queryParam } from '../../openapi/openapi';
import { errors, reply, response } from '../../openapi/schema';
import { PUBLIC_SLUG } from '../../tenants/settings.schema';
import { PublicDashboard, type PublicDashboardDeps, publicDashboardSchema, publicTenantSchema, signedHeadSchema } from '../../transparency/public-dashboard';
import { type PublicTenant, PublicTenantsRepository } from '../../transparency/public-tenants.repository';
import { isUuid } from '../params';
import { parseWith } from '../validation';

export const PUBLIC_TENANT_HEADER = 'x-service-public-tenant';
const LIST_MAX = 500;
const LIST_DEFAULT = 100;

const transparencyQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer' }).int('limit must be an integer').min(1, 'limit must be at least 1').max(LIST_MAX, `limit must be at most ${LIST_MAX}`).default(LIST_DEFAULT),
  after: z.string().regex(PUBLIC_SLUG, 'after must be a slug (the next_after of the previous page)').optional(),
});

const transparencyListSchema = z.object({
  tenants: z.array(publicTenantSchema.extend({ dashboard_path: z.string(), signed_tree_head: signedHeadSchema.nullable() })),
  count: z.number().int().meta({ description: 'tenants on this page' }),
  next_after: z.string().nullable().meta({ description: 'pass as `after` for the next page; null on the last page' }),
});

const notPublished = () => new NotFoundError('No public dashboard here');

export function publicRoutes(d: Pick<TenantsFeature, 'config' | 'db'> & Omit<PublicDashboardDeps, 'cacheSeconds'>): Router {
  const r = Router();
  const tenants = new PublicTenantsRepository(d.db);
  const dashboard = new PublicDashboard({ ...d, cacheSeconds: d.config.publicCacheSeconds });

  const bySlug = async (slug: string | undefined): Promise<PublicTenant> => {
    const t = slug && PUBLIC_SLUG.test(slug) ? await tenants.bySlug(slug) : undefined;
    if (!t) throw notPublished();
    return t;
  };
  const show = async (t: PublicTenant) => ({ tenant: { tenant_id: t.tenant_id, slug: t.slug, name: t.name }, ...(await dashboard.aggregate(t)) });

  r.get('/dashboard/public/:slug', async (req, res) => {
    reply(res, publicDashboardSchema, await show(await bySlug(String(req.params.slug))));
  });
  r.get('/dashboard/public', async (req, res) => {
    const slug = req.header(PUBLIC_TENANT_HEADER)?.trim().toLowerCase();
    if (!slug) throw InputError.at(['header', PUBLIC_TENANT_HEADER], 'X-Service-Public-Tenant (the slug of a public dashboard) is required here', 'missing');
    reply(res, publicDashboardSchema, await show(await bySlug(slug)));
  });
  r.get('/transparency', async (req, res) => {
    const { limit, after } = parseWith(transparencyQuery, { limit: req.query.limit, after: req.query.after }, 'query');
    const page = await tenants.list(limit + 1, after);
    const list = page.slice(0, limit);
    const heads = await Promise.all(list.map((t) => dashboard.signedHead(t.tenant_id).catch(() => null)));
    reply(res, transparencyListSchema, {
      tenants: list.map((t, i) => ({ tenant_id: t.tenant_id, slug: t.slug, name: t.name, dashboard_path: `/api/dashboard/public/${t.slug}`, signed_tree_head: heads[i] })),
      count: list.length,
      next_after: page.length > limit ? list[list.length - 1].slug : null,
    });
  });
  r.get('/transparency/:tenant_id', async (req, res) => {
    const id = String(req.params.tenant_id);
    const t = isUuid(id) ? await tenants.byTenantId(id.toLowerCase()) : undefined;
    if (!t) throw notPublished();
    reply(res, publicDashboardSchema, await show(t));
  });
  return r;
}

const notFound = errors[404]('unknown, or not published (the same answer)');
const limited = errors[429]('too many requests from this address (Retry-After)');
addPaths({
  '/dashboard/public/{slug}': {
    get: {
      security: [],
      summary: 'A tenant’s public dashboard (only if it opted in): decision counts, chain status, signed tree head, anchor, policy template name',
      parameters: [pathParam('slug', { type: 'string', pattern: PUBLIC_SLUG.source })],
      responses: { 200: response('aggregates only: no parameters, agent ids or personal data', publicDashboardSchema), 404: notFound, 429: limited },
    },
  },
  '/dashboard/public': {
    get: {
      security: [],
      summary: 'The public dashboard selected by X-Service-Public-Tenant (a tenant’s own domain, behind a proxy that sets the header)',
      parameters: [{ name: 'X-Service-Public-Tenant', in: 'header', required: true, schema: { type: 'string' }, description: 'the slug of a public dashboard; it selects, it never authorizes' }],
      responses: { 200: response('the dashboard', publicDashboardSchema), 404: notFound, 422: errors[422]('header missing'), 429: limited },
    },
  },
  '/transparency': {
    get: {
      security: [],
      summary: 'Tenants that publish a dashboard, with their latest signed tree head, a page at a time in slug order',
      parameters: [
        queryParam('limit', { type: 'integer', minimum: 1, maximum: LIST_MAX, default: LIST_DEFAULT }),
        { name: 'after', in: 'query', schema: { type: 'string', pattern: PUBLIC_SLUG.source }, description: 'the next_after of the previous page' },
      ],
      responses: { 200: response('published tenants', transparencyListSchema), 422: errors[422]('limit out of range, or after not a slug'), 429: limited },
    },
  },
  '/transparency/{tenant_id}': {
    get: {
      security: [],
      summary: 'A tenant’s transparency page by id (only if it opted in); the same body as its public dashboard',
      parameters: [pathParam('tenant_id', { type: 'string', format: 'uuid' })],
      responses: { 200: response('the dashboard', publicDashboardSchema), 404: notFound, 429: limited },
    },
  },
});
