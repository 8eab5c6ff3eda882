/**
 * The audit service's own definition (audit.service.ts, as main.ts runs it) started in this process against
 * the real Postgres and NATS on a free gRPC port, with a client of its AuditService. Tests name what they put
 * in place (`overrides`: the note signer, peer clients) and the settings they need (`env`); by default no
 * receipts are signed on append and no Merkle schedule runs (the vault is not there).
 */
import { audit as pb } from '@agw/proto';
import { type PromiseClient, type StartedService, type TestServiceOptions, createClient, startTestService } from '@agw/shared';
import { type AuditApi, type AuditOverrides, auditService } from '../../src/audit.service';
import type { AuditConfig } from '../../src/config';

/** The started service and a client of its AuditService. */
export type StartedAudit = StartedService<AuditConfig, AuditApi> & { client: PromiseClient<typeof pb.AuditServiceService> };

export function startAudit(o: TestServiceOptions<AuditConfig, AuditOverrides> = {}): Promise<StartedAudit> {
  return startTestService(auditService(), {
    ...o,
    env: { AUDIT_TAMPER_DEMO: 'false', MERKLE_SCHEDULE_ENABLED: 'false', AUDIT_RECEIPTS: 'false', ...o.env },
    clients: (address) => ({ client: createClient(pb.AuditServiceClient, address, 'audit service') }),
  });
}
