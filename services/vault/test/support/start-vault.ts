/**
 * The vault's own definition (vault.service.ts, as main.ts runs it) started in this process against the real
 * Postgres (migrated), NATS and the SoftHSM2 token `agw-test` on a free gRPC port, with clients of its three
 * gRPC services (VaultService, FederationService, NoteSigningService). Tests name what they put in place
 * (`overrides`: the quarantine and connection-event recorders, the catalog change notice) and the settings they
 * need (`env`, on top of the local profile with 5 s federation call and connect timeouts; `config` for a value
 * no env spelling gives in the local profile, such as an empty UPSTREAM_ALLOW_CIDRS).
 */
import { federation as fpb, vault as pb } from '@agw/proto';
import { type PromiseClient, type ServiceOverrides, type StartedService, createClient, createLogger, createMetricsRegistry, migrateToLatest, startService } from '@agw/shared';
import { type VaultConfig, loadVaultConfig } from '../../src/config';
import { type VaultApi, type VaultOverrides, vaultService } from '../../src/vault.service';

/** The started vault and clients of its gRPC services. */
export type StartedVault = StartedService<VaultConfig, VaultApi> & {
  vault: PromiseClient<typeof pb.VaultServiceService>;
  federation: PromiseClient<typeof fpb.FederationServiceService>;
  noteSigning: PromiseClient<typeof pb.NoteSigningServiceService>;
};

export async function startVault(o: { prefix?: string; env?: Record<string, string>; config?: Partial<VaultConfig>; overrides?: ServiceOverrides<VaultOverrides>; deadlineMs?: number } = {}): Promise<StartedVault> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
  await migrateToLatest(databaseUrl);
  const loaded = loadVaultConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    AGW_STREAM_PREFIX: o.prefix ?? process.env.AGW_STREAM_PREFIX ?? '',
    AGW_PROFILE: 'local',
    LOG_LEVEL: 'silent',
    VAULT_GRPC_HOST: '127.0.0.1',
    VAULT_GRPC_PORT: '0',
    VAULT_HSM_BACKEND: 'pkcs11',
    PKCS11_TOKEN_LABEL: 'agw-test',
    FEDERATION_CALL_TIMEOUT_MS: '5000',
    FEDERATION_CONNECT_TIMEOUT_MS: '5000',
    ...o.env,
  });
  const config: VaultConfig = { ...loaded, ...o.config };
  const started = await startService(vaultService(), { config, logger: createLogger('test', 'silent'), registry: createMetricsRegistry('test'), overrides: o.overrides });
  const address = `127.0.0.1:${started.grpcPort}`;
  const deadline = { deadlineMs: o.deadlineMs ?? 30_000 };
  const vault = createClient(pb.VaultServiceClient, address, 'vault service', deadline);
  const federation = createClient(fpb.FederationServiceClient, address, 'federation service', deadline);
  const noteSigning = createClient(pb.NoteSigningServiceClient, address, 'note signing service', deadline);
  return {
    ...started,
    vault,
    federation,
    noteSigning,
    close: async () => {
      vault.close();
      federation.close();
      noteSigning.close();
      await started.close();
    },
  };
}
