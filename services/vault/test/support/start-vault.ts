/**
 * The vault's own definition (vault.service.ts, as main.ts runs it) started in this process against the real
 * Postgres (migrated), NATS and the SoftHSM2 token `agw-test` on a free gRPC port, with clients of its three
 * gRPC services (VaultService, FederationService, NoteSigningService). Tests name what they put in place
 * (`overrides`: the quarantine and connection-event recorders, the catalog change notice) and the settings they
 * need (`env`, on top of the local profile with 5 s federation call and connect timeouts; `config` for a value
 * no env spelling gives in the local profile, such as an empty UPSTREAM_ALLOW_CIDRS).
 */
import { federation as fpb, vault as pb } from '@agw/proto';
import { type PromiseClient, type StartedService, type TestServiceOptions, createClient, startTestService } from '@agw/shared';
import type { VaultConfig } from '../../src/config';
import { type VaultApi, type VaultOverrides, vaultService } from '../../src/vault.service';

/** The started vault and clients of its gRPC services. */
export type StartedVault = StartedService<VaultConfig, VaultApi> & {
  vault: PromiseClient<typeof pb.VaultServiceService>;
  federation: PromiseClient<typeof fpb.FederationServiceService>;
  noteSigning: PromiseClient<typeof pb.NoteSigningServiceService>;
};

export function startVault(o: TestServiceOptions<VaultConfig, VaultOverrides> & { deadlineMs?: number } = {}): Promise<StartedVault> {
  const deadline = { deadlineMs: o.deadlineMs ?? 30_000 };
  return startTestService(vaultService(), {
    ...o,
    env: {
      AGW_PROFILE: 'local',
      VAULT_HSM_BACKEND: 'pkcs11',
      PKCS11_TOKEN_LABEL: 'agw-test',
      FEDERATION_CALL_TIMEOUT_MS: '5000',
      FEDERATION_CONNECT_TIMEOUT_MS: '5000',
      ...o.env,
    },
    clients: (address) => ({
      vault: createClient(pb.VaultServiceClient, address, 'vault service', deadline),
      federation: createClient(fpb.FederationServiceClient, address, 'federation service', deadline),
      noteSigning: createClient(pb.NoteSigningServiceClient, address, 'note signing service', deadline),
    }),
  });
}
