/** Credentials, the HSM and data subjects (the vault's side of the API): what their routes use. */
import type { AuditClient, VaultClient } from '../clients/grpc-clients';
import type { HealthService } from '../health';

export interface CredentialsFeature {
  vault: VaultClient;
  /** the HSM's section of GET /api/health */
  health: HealthService;
  /** a data subject's records */
  audit: AuditClient;
}
