/**
 * The hash chain's own metrics: appends committed (or failed) and the outcome of every verification run.
 * A verification that finds a broken link is the one signal an auditor cares most about, so it is counted
 * with `result="invalid"` (the alert AgwChainVerificationFailed). Labels are fixed sets; no tenant label.
 */
import { Counter, type Registry } from '@agw/shared';
import type { AuditChain } from './audit-chain';

export function instrumentChain(chain: AuditChain, registry: Registry): void {
  const appends = new Counter({ name: 'agw_audit_chain_appends_total', help: 'Records appended to the tenant hash chains, by outcome (committed | failed)', labelNames: ['outcome'], registers: [registry] });
  const verifications = new Counter({
    name: 'agw_audit_chain_verifications_total',
    help: 'Chain verification runs, by result (valid | invalid: a record does not recompute or link | error)',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const outcome of ['committed', 'failed']) appends.inc({ outcome }, 0);
  for (const result of ['valid', 'invalid', 'error']) verifications.inc({ result }, 0);

  const append = chain.append.bind(chain);
  chain.append = async (...args) => {
    try {
      const r = await append(...args);
      appends.inc({ outcome: 'committed' });
      return r;
    } catch (e) {
      appends.inc({ outcome: 'failed' });
      throw e;
    }
  };
  const verify = chain.verify.bind(chain);
  chain.verify = async (tenantId) => {
    try {
      const r = await verify(tenantId);
      verifications.inc({ result: r.valid ? 'valid' : 'invalid' });
      return r;
    } catch (e) {
      verifications.inc({ result: 'error' });
      throw e;
    }
  };
}
