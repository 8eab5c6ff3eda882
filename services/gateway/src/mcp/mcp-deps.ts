/**
 * What the MCP server's modules use (the MCP feature: tools, resources, prompts and completions, approval
 * rounds, a managed session's server), declared beside them so that mcp/ imports nothing from a floor above
 * it. GatewayDeps extends it (deps.ts), so the composition gives the MCP routes what they name.
 */
import type { ApprovalQueue } from '../approvals/approval-queue';
import type { AuditClient, ManagedClient, VaultClient } from '../clients/grpc-clients';
import type { GatewayConfig } from '../config';
import type { FederatedCatalog } from '../federation/federated-catalog';
import type { ToolCallPipeline } from '../pipeline/tool-call.pipeline';
import type { SettingsService } from '../tenants/settings.service';

export interface McpDeps {
  config: GatewayConfig;
  /** every tools/call, resources/read and prompts/get runs the governed pipeline */
  pipeline: ToolCallPipeline;
  settings: SettingsService;
  /** credential tools (their names) */
  vault: VaultClient;
  /** federated tools, resources and prompts of the tenant's upstreams */
  federation: FederatedCatalog;
  /** approval rounds: the queued call a client waits for, and its record */
  approvals: ApprovalQueue;
  audit: AuditClient;
  /** a managed session's MCP server: its governance */
  managed: ManagedClient;
}
