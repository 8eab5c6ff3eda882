/**
 * The gateway's view of a tenant's federated tools (docs/federation.md), read from the vault's
 * FederationService: the active tools with their pinned definitions (what `tools/list` shows) and the
 * target of a governed call (an upstream's active tool, or a refusal such as `tool_definition_changed`).
 *
 * Both are asked on hot paths, so they are cached per tenant and dropped when the tenant's `upstreams`
 * change (the vault publishes `changes.upstreams.<tenant>` after every catalog write; this replica also
 * drops them itself after a change it made), at the latest after TENANT_CACHE_MS. A stale "active" is
 * harmless: the vault checks the target again before it executes.
 */
import { type Bus, type McpToolDefinition, TENANT_CACHE_MS, TenantCache, jsonOf, objectFromAnswerJson, onTenantChange } from '@agw/shared';
import type { FederationClient } from '../clients/grpc-clients';

/**
 * A federated tool as an MCP client sees it: `<upstream>__<tool>` with the upstream's own definition, the
 * whole object as the upstream wrote it (every field, `execution`, `icons` and `_meta` included, in its key
 * order: the vault stores it as text and it crosses gRPC as JSON text, which JSON.parse keeps in order), with
 * the upstream's `name` in it; `execution.taskSupport` is never "required" here, and "forbidden" where the
 * upstream said "optional" (the vault's federatedTools).
 */
export interface FederatedTool {
  name: string;
  upstream: string;
  tool: string;
  definition: McpToolDefinition;
}

export interface ToolTarget {
  upstream: boolean;
  executable: boolean;
  /** an executable tool: the SHA-256 (hex) of its pinned definition */
  definition_sha256?: string;
  violation?: string;
  message?: string;
}

export class FederatedCatalog {
  private readonly lists = new TenantCache<FederatedTool[]>(TENANT_CACHE_MS);
  private readonly targets = new TenantCache<ToolTarget>(TENANT_CACHE_MS);

  constructor(
    readonly client: FederationClient,
    bus: Pick<Bus, 'nc' | 'prefix'>,
  ) {
    onTenantChange(bus, 'upstreams', (tenantId) => this.invalidate(tenantId));
  }

  tools(tenantId: string): Promise<FederatedTool[]> {
    return this.lists.get(tenantId, 'tools', async () => {
      const { tools } = await this.client.listFederatedTools({ tenant_id: tenantId });
      return tools.map((t) => ({ name: t.name, upstream: t.upstream, tool: t.tool, definition: objectFromAnswerJson(jsonOf(t, 'definition'), 'definition') as FederatedTool['definition'] }));
    });
  }

  target(tenantId: string, tool: string, method: string): Promise<ToolTarget> {
    return this.targets.get(tenantId, `${tool}\u0000${method}`, async () => {
      const t = await this.client.getToolTarget({ tenant_id: tenantId, tool, method });
      return {
        upstream: t.upstream,
        executable: t.executable,
        ...(t.violation ? { violation: t.violation, message: t.message } : {}),
        ...(t.connection ? { connection: t.connection as 'shared' | 'per_user' } : {}),
        ...(t.definition_sha256 ? { definition_sha256: t.definition_sha256 } : {}),
      };
    });
  }

  /** Drop a tenant's entries (undefined: everyone's). */
  invalidate(tenantId: string | undefined): void {
    this.lists.invalidate(tenantId);
    this.targets.invalidate(tenantId);
  }
}
