/**
 * Public dashboard and transparency (docs/public-dashboard.md): nothing is public until the tenant opts
 * in; what is published is aggregate only (counts, chain status, signed tree head, anchor, template
 * name), never parameters, agent ids or personal data; slugs are unique; opting out hides it at once;
 * the per-IP rate limit answers 429 with Retry-After.
 */
import { randomInt } from 'node:crypto';
import { type ApiResponse, api, call, eventually, fleet, newTenant, type Tenant } from './support/api';

jest.setTimeout(120_000);

const always = { timezone: 'UTC', start_hour: 0, end_hour: 24, weekdays: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] };
const pay = (params: Record<string, unknown>) => ({ agent_id: 'public-marker-agent', tool: 'svc_payments', method: 'transfer', params });

describe('public dashboard and transparency', () => {
  let a: Tenant;
  let b: Tenant;
  const actionIds: string[] = [];
  let anchorTx = '';

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('Public Co A'), newTenant('Public Co B')]);
    const set = await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { policy_template: 'financial', policy_config: { business_hours: always, transaction_limit: 4321 } } });
    expect(set.status).toBe(200);
    const allowed = await call(a.apiKey, pay({ amount: 100, currency: 'EUR', memo: 'public-marker-param' }));
    const denied = await call(a.apiKey, pay({ amount: 5000, currency: 'EUR', beneficiary: 'jane.public@example.com' }));
    const pending = await call(a.apiKey, pay({ amount: 1000, currency: 'EUR' }));
    expect([allowed.status, denied.status, pending.status]).toEqual([200, 403, 202]);
    actionIds.push(allowed.body.action_id, denied.body.detail.action_id, pending.body.action_id);
    const anchored = await api('POST', '/anchor/trigger', { key: a.apiKey });
    expect(anchored.status).toBe(200);
    anchorTx = anchored.body.tx_hash;
  });

  it('is off by default: the slug and the tenant id are the same 404 as an unknown one', async () => {
    const settings = await api('GET', '/dashboard/settings', { key: a.apiKey });
    expect(settings.body.public_dashboard).toEqual({ enabled: false, slug: null });
    const bySlug = await api('GET', `/dashboard/public/${a.slug}`);
    const unknown = await api('GET', '/dashboard/public/no-such-dashboard');
    expect(bySlug.status).toBe(404);
    expect(bySlug.body).toEqual(unknown.body);
    expect((await api('GET', `/transparency/${a.tenantId}`)).status).toBe(404);
    expect((await api('GET', '/transparency')).body.tenants.map((t: { tenant_id: string }) => t.tenant_id)).not.toContain(a.tenantId);
  });

  it('after opting in publishes aggregates only: counts, chain status, signed head, anchor, template name', async () => {
    const on = await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { public_dashboard: { enabled: true } } });
    expect(on.status).toBe(200);
    expect(on.body.public_dashboard).toEqual({ enabled: true, slug: a.slug });

    const r = await api('GET', `/dashboard/public/${a.slug}`);
    expect(r.status).toBe(200);
    expect(r.body.tenant).toEqual({ tenant_id: a.tenantId, slug: a.slug, name: 'Public Co A' });
    expect(r.body.policy_template).toBe('financial');
    expect(r.body.decisions.period_days).toBe(30);
    expect(r.body.decisions.totals.today).toMatchObject({ allow: 1, deny: 1, requires_human: 1 });
    expect(r.body.decisions.totals.last_30_days).toEqual(r.body.decisions.totals.today);
    expect(r.body.decisions.daily).toEqual([{ date: new Date().toISOString().slice(0, 10), counts: r.body.decisions.totals.today }]);
    // the three calls and two settings changes (the template, opting in): control_plane records naming who changed them (docs/audit.md, "Who acted")
    expect(r.body.chain).toEqual({ valid: true, record_count: 5 });
    // anchored before opting in: the template change and the three calls
    expect(r.body.signed_tree_head).toMatchObject({ tree_size: 4 });
    expect(r.body.signed_tree_head.checkpoint).toContain(r.body.signed_tree_head.origin);
    expect(r.body.verifier_key).toEqual(expect.any(String));
    expect(r.body.anchor).toMatchObject({ tx_hash: anchorTx, tree_size: 4 });
    expect(r.body.anchor.chain_id).toEqual(expect.any(Number));
    expect(r.body.anchor.contract_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(r.body.unavailable).toEqual([]);

    // never parameters, policy parameters, agent ids, action ids, personal data or credentials
    const text = JSON.stringify(r.body);
    for (const secret of ['public-marker-param', 'public-marker-agent', 'jane.public', '4321', 'transaction_limit', a.apiKey, a.email, ...actionIds]) {
      expect(text).not.toContain(secret);
    }
    for (const key of ['params', 'agent_id', 'action_id', 'policy_config', 'violations']) expect(text).not.toContain(`"${key}"`);

    // the same page by tenant id, and for a proxy on the tenant's own domain (X-Service-Public-Tenant)
    const byId = await api('GET', `/transparency/${a.tenantId}`);
    expect(byId.status).toBe(200);
    expect(byId.body.tenant.slug).toBe(a.slug);
    const byHeader = await api('GET', '/dashboard/public', { headers: { 'X-Service-Public-Tenant': a.slug } });
    expect(byHeader.status).toBe(200);
    expect(byHeader.body.tenant.tenant_id).toBe(a.tenantId);
    const noHeader = await api('GET', '/dashboard/public');
    expect(noHeader.status).toBe(422);
    expect(noHeader.body.detail[0].loc).toEqual(['header', 'x-service-public-tenant']);
    expect((await api('GET', '/dashboard/public', { headers: { 'X-Service-Public-Tenant': 'no-such-dashboard' } })).status).toBe(404);

    // the list: A with its latest signed head, never B (not opted in)
    const list = await api('GET', '/transparency');
    expect(list.status).toBe(200);
    const entry = list.body.tenants.find((t: { tenant_id: string }) => t.tenant_id === a.tenantId);
    expect(entry).toMatchObject({ slug: a.slug, name: 'Public Co A', dashboard_path: `/api/dashboard/public/${a.slug}`, signed_tree_head: { tree_size: 4 } });
    expect(list.body.tenants.map((t: { tenant_id: string }) => t.tenant_id)).not.toContain(b.tenantId);
    expect(JSON.stringify(list.body)).not.toContain('public-marker');
  });

  it('slugs are validated and unique (409), and stay reserved while a dashboard is off', async () => {
    const bad = await api('PATCH', '/dashboard/settings', { key: b.apiKey, body: { public_dashboard: { enabled: true, slug: 'Not A Slug' } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'public_dashboard', 'slug']);
    const taken = await api('PATCH', '/dashboard/settings', { key: b.apiKey, body: { public_dashboard: { enabled: true, slug: a.slug } } });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toMatch(/slug is taken/);
    // B's own page is separate and shows only B
    const own = await api('PATCH', '/dashboard/settings', { key: b.apiKey, body: { public_dashboard: { enabled: true, slug: `${b.slug}-status` } } });
    expect(own.status).toBe(200);
    const pageB = await api('GET', `/dashboard/public/${b.slug}-status`);
    expect(pageB.status).toBe(200);
    expect(pageB.body.tenant.tenant_id).toBe(b.tenantId);
    // B's one saved settings change (the refused ones change nothing and are not recorded)
    expect(pageB.body.chain.record_count).toBe(1);
    expect(pageB.body.signed_tree_head).toBeNull();
    expect(JSON.stringify(pageB.body)).not.toContain(a.tenantId);
  });

  it('opting out hides the dashboard at once (404 everywhere), keeping the slug', async () => {
    const off = await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { public_dashboard: { enabled: false } } });
    expect(off.status).toBe(200);
    expect(off.body.public_dashboard).toEqual({ enabled: false, slug: a.slug });
    expect((await api('GET', `/dashboard/public/${a.slug}`)).status).toBe(404);
    expect((await api('GET', `/transparency/${a.tenantId}`)).status).toBe(404);
    expect((await api('GET', '/dashboard/public', { headers: { 'X-Service-Public-Tenant': a.slug } })).status).toBe(404);
    expect((await api('GET', '/transparency')).body.tenants.map((t: { tenant_id: string }) => t.tenant_id)).not.toContain(a.tenantId);
    // reserved: another tenant cannot take it while A's dashboard is off
    expect((await api('PATCH', '/dashboard/settings', { key: b.apiKey, body: { public_dashboard: { enabled: true, slug: a.slug } } })).status).toBe(409);
  });

  it('lists published tenants a page at a time in slug order (limit, after → next_after), and refuses a bad page with 422', async () => {
    const from = { 'X-Forwarded-For': `192.0.2.${randomInt(1, 254)}` }; // its own address: the 40/min public limit is per address
    const prefix = `page-${randomInt(100000, 999999)}`;
    const ts = await Promise.all(['c', 'a', 'b'].map((x) => newTenant(`Paged ${x}`)));
    for (const [i, t] of ts.entries()) {
      expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { public_dashboard: { enabled: true, slug: `${prefix}-${'cab'[i]}` } } })).status).toBe(200);
    }
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const r: ApiResponse = await api('GET', `/transparency?limit=2${after ? `&after=${after}` : ''}`, { headers: from });
      expect(r.status).toBe(200);
      expect(r.body.tenants.length).toBeLessThanOrEqual(2);
      expect(r.body.count).toBe(r.body.tenants.length);
      seen.push(...r.body.tenants.map((t: { slug: string }) => t.slug));
      after = r.body.next_after;
      if (!after) break;
      expect(after).toBe(seen[seen.length - 1]);
    }
    expect(after).toBeNull();
    expect(seen).toEqual([...new Set(seen)].sort());
    expect(seen.filter((x) => x.startsWith(prefix))).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    for (const [q, loc] of [['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=x', 'limit'], ['after=Not%20A%20Slug', 'after']]) {
      const bad = await api('GET', `/transparency?${q}`, { headers: from });
      expect([q, bad.status, bad.body.detail[0].loc]).toEqual([q, 422, ['query', loc]]);
    }
  });

  it('shows what it can while a service behind it is down: that section null and named in `unavailable`, never cached', async () => {
    const from = { 'X-Forwarded-For': `192.0.2.${randomInt(1, 254)}` };
    const t = await newTenant('Public Co Partial');
    expect((await call(t.apiKey, pay({ amount: 100, currency: 'EUR' }))).status).toBe(200);
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { public_dashboard: { enabled: true } } })).status).toBe(200);
    await fleet('kill', 'anchor');
    let partial;
    try {
      partial = await api('GET', `/dashboard/public/${t.slug}`, { headers: from });
    } finally {
      await fleet('start', 'anchor');
    }
    expect(partial.status).toBe(200);
    expect(partial.body.unavailable).toEqual(['anchor']);
    expect(partial.body.anchor).toBeNull();
    // the call and the settings change that opted in
    expect(partial.body.chain).toEqual({ valid: true, record_count: 2 });
    expect(partial.body.decisions.totals.today).toMatchObject({ allow: 1 });
    expect(partial.body.policy_template).toEqual(expect.any(String));
    // the partial page was not cached: once the gateway has reconnected to the anchor service (its channel
    // retries within 500 ms of the service being ready) the page is whole
    const whole = await eventually(async () => {
      const r = await api('GET', `/dashboard/public/${t.slug}`, { headers: from });
      return r.status === 200 && r.body.unavailable.length === 0 && r;
    }, 5000, 100);
    expect(whole.body.anchor).toEqual(null); // this tenant has no anchor yet: null, and no longer unavailable
  });

  it('is rate-limited per client address: 429 with Retry-After, other addresses unaffected', async () => {
    const ip = `198.51.100.${randomInt(1, 254)}`;
    // 40 a minute (E2E_ENV): 85 requests leave at least 5 over even when a minute boundary falls among them
    const results = await Promise.all(Array.from({ length: 85 }, () => api('GET', '/transparency', { headers: { 'X-Forwarded-For': ip } })));
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(80);
    expect(limited.length).toBeGreaterThanOrEqual(5);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].body.detail).toMatch(/Too many/);
    expect((await api('GET', '/transparency', { headers: { 'X-Forwarded-For': `203.0.113.${randomInt(1, 254)}` } })).status).toBe(200);
  });
});
