/**
 * Anchoring survives the anchor service being down: tree heads built meanwhile travel over NATS
 * (durable consumer) and are anchored after the restart, on the same contract (the embedded chain's
 * state and the stored address are reused).
 */
import { type Tenant, api, call, eventually, fleet, newTenant } from './support/api';

describe('anchoring durability', () => {
  let t: Tenant;

  beforeAll(async () => {
    t = await newTenant('Provenance durability');
  });

  afterAll(async () => {
    await fleet('start', 'anchor');
  });

  it('anchors heads built while the anchor service was down, after its restart, on the same contract', async () => {
    for (let i = 0; i < 3; i++) expect([200, 202, 403, 502]).toContain((await call(t.apiKey, { params: { q: `durable ${i}` } })).status);
    const before = await api('POST', '/anchor/trigger', { key: t.apiKey });
    expect(before.status).toBe(200);
    const contract = before.body.contract_address;

    await fleet('stop', 'anchor');
    for (let i = 0; i < 2; i++) expect([200, 202, 403, 502]).toContain((await call(t.apiKey, { params: { q: `while down ${i}` } })).status);
    // the tree head is built (audit service) even though anchoring is unreachable: a clear 502
    const down = await api('POST', '/anchor/trigger', { key: t.apiKey });
    expect(down.status).toBe(502);
    expect(String(down.body.detail)).toMatch(/anchor service is unreachable/);
    const roots = await api('GET', '/audit/merkle/roots', { key: t.apiKey });
    expect(roots.body.trees.map((x: { record_count: number }) => x.record_count)).toEqual([3, 5]);
    const health = await api('GET', '/health', { key: t.apiKey });
    expect(health.body.blockchain.status).toBe('error');
    expect(health.body.services.anchor).toBe('unreachable');
    expect(health.body.status).toBe('degraded');

    await fleet('start', 'anchor');
    // the head built while it was down arrives through the durable NATS consumer
    await eventually(async () => (await api('GET', '/anchor/status', { key: t.apiKey })).body.pending_tree_heads === 1);
    const after = await api('POST', '/anchor/trigger', { key: t.apiKey });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ tree_index: 1, tree_size: 5, contract_address: contract, tree_heads_built: [] });
    const verify = await api('GET', '/anchor/verify', { key: t.apiKey });
    expect(verify.body).toMatchObject({ verified: true, tx_hash: after.body.tx_hash });
    const status = await api('GET', '/anchor/status', { key: t.apiKey });
    expect(status.body).toMatchObject({ anchor_count: 2, pending_tree_heads: 0, contract_address: contract });
  });
});
