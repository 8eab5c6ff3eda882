/** The witnesses' Prometheus metrics (audit service ops port; docs/evidence.md, "Witnesses"). */
import { Counter, type Registry } from '@agw/shared';

export function createWitnessMetrics(registry: Registry) {
  return {
    cosignatures: new Counter({ name: 'audit_witness_cosignatures_total', help: 'Checkpoint cosignatures received from witnesses (C2SP tlog-witness), by witness', labelNames: ['witness'], registers: [registry] }),
    refusals: new Counter({
      name: 'audit_witness_refusals_total',
      help: 'add-checkpoint requests a witness did not cosign, by witness and HTTP status (422 and 403: the witness saw another view of the log; an alert); bad_cosignature: an answer that did not verify',
      labelNames: ['witness', 'status'],
      registers: [registry],
    }),
  };
}
