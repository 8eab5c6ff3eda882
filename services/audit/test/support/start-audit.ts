/**
 * The audit service's own definition (audit.service.ts, as main.ts runs it) started in this process against
 * the real Postgres and NATS on a free gRPC port, with a client of its AuditService. Tests name what they put
 * in place (`overrides`: the note signer, peer clients) and the settings they need (`env`); by default no
 * receipts are signed on append and no Merkle schedule runs (the vault is not there).
 */
import { audit as pb } from '@agw/proto';
import { type PromiseClient, type ServiceOverrides, type StartedService, createClient, createLogger, createMetricsRegistry, startService } from '@agw/shared';
import { type AuditApi, type AuditOverrides, auditService } from '../../src/audit.service';
import { type AuditConfig, loadAuditConfig } from '../../src/config';

/** The started service and a client of its AuditService. */
export type StartedAudit = StartedService<AuditConfig, AuditApi> & { client: PromiseClient<typeof pb.AuditServiceService> };

export async function startAudit(o: { prefix?: string; env?: Record<string, string>; overrides?: ServiceOverrides<AuditOverrides> } = {}): Promise<StartedAudit> {
  const config = loadAuditConfig({
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test',
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    AGW_STREAM_PREFIX: o.prefix ?? process.env.AGW_STREAM_PREFIX ?? '',
    LOG_LEVEL: 'silent',
    AUDIT_GRPC_PORT: '0',
    AUDIT_TAMPER_DEMO: 'false',
    MERKLE_SCHEDULE_ENABLED: 'false',
    AUDIT_RECEIPTS: 'false',
    ...o.env,
  });
  const started = await startService(auditService(), { config, logger: createLogger('test', 'silent'), registry: createMetricsRegistry('test'), overrides: o.overrides });
  const client = createClient(pb.AuditServiceClient, `127.0.0.1:${started.grpcPort}`, 'audit service');
  return {
    ...started,
    client,
    close: async () => {
      client.close();
      await started.close();
    },
  };
}
