/**
 * Audit and evidence: the log, Merkle proofs and checkpoints, anchoring, the compliance export, webhook
 * deliveries: what their routes use.
 */
import type { AnchorClient, AuditClient, MerkleClient, WebhookClient } from '../clients/grpc-clients';
import type { ComplianceExporter } from '../compliance/compliance-export';
import type { GatewayConfig } from '../config';
import type { HealthService } from '../health';
import type { SettingsService } from '../tenants/settings.service';

export interface AuditFeature {
  config: GatewayConfig;
  /** the audit client whose reads mark crypto-shredded PII as erased */
  audit: AuditClient;
  merkle: MerkleClient;
  anchor: AnchorClient;
  /** the compliance export: the audit service's part, the anchors and the policy snapshot put together and rendered */
  complianceExport: ComplianceExporter;
  webhook: WebhookClient;
  /** the sections of GET /api/health the audit services add */
  health: HealthService;
  /** the tenant's anchoring chain */
  settings: SettingsService;
}
