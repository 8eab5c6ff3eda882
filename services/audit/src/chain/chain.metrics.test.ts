import { Registry } from '@agw/shared';
import type { AuditChain } from './audit-chain';
import { instrumentChain } from './chain.metrics';

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('instrumentChain', () => {
  it('counts appends by outcome and verifications by result, and returns what the chain returns', async () => {
    let valid = true;
    const chain = {
      append: async (tenantId: string) => {
        if (tenantId === 'broken') throw new Error('db down');
        return { id: 1, event_queued: false };
      },
      verify: async () => (valid ? { valid: true, record_count: 3 } : { valid: false, record_count: 1, reason: 'hash_mismatch' }),
    } as unknown as AuditChain;
    const registry = new Registry();
    instrumentChain(chain, registry);

    expect(await chain.append('t1', {} as never)).toMatchObject({ id: 1 });
    await expect(chain.append('broken', {} as never)).rejects.toThrow('db down');
    expect(await chain.verify('t1')).toMatchObject({ valid: true });
    valid = false;
    expect(await chain.verify('t1')).toMatchObject({ valid: false });

    expect(await value(registry, 'agw_audit_chain_appends_total', { outcome: 'committed' })).toBe(1);
    expect(await value(registry, 'agw_audit_chain_appends_total', { outcome: 'failed' })).toBe(1);
    expect(await value(registry, 'agw_audit_chain_verifications_total', { result: 'valid' })).toBe(1);
    expect(await value(registry, 'agw_audit_chain_verifications_total', { result: 'invalid' })).toBe(1);
    expect(await value(registry, 'agw_audit_chain_verifications_total', { result: 'error' })).toBe(0);
  });
});
