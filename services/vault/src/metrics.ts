/** The vault's Prometheus metrics (ops port /metrics). Counts and timings only, never values. */
import { Counter, Histogram, type Registry } from '@agw/shared';

export function createVaultMetrics(registry: Registry) {
  return {
    brokered: new Counter({ name: 'agw_vault_brokered_total', help: 'Brokered executions by outcome', labelNames: ['outcome'], registers: [registry] }),
    brokeredSeconds: new Histogram({
      name: 'agw_vault_brokered_duration_seconds',
      help: 'Upstream time of brokered executions',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    hsmFetchSeconds: new Histogram({
      name: 'agw_vault_hsm_fetch_duration_seconds',
      help: 'Credential decryption time in the HSM',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
    protectedCalls: new Counter({ name: 'agw_vault_pii_calls_total', help: 'ProtectParams calls by whether PII was found', labelNames: ['pii_detected'], registers: [registry] }),
    erasures: new Counter({ name: 'agw_vault_subject_erasures_total', help: 'Subjects erased (keys destroyed)', registers: [registry] }),
  };
}

export type VaultMetrics = ReturnType<typeof createVaultMetrics>;
