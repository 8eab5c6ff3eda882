/**
 * The gateway's ToolBroker: asks the vault (gRPC) to execute an allowed call with the tool's registered
 * credential. Returns null when no credential is registered (the agent executes). The gateway never sees
 * the secret. If the vault cannot answer the call fails with a 502: nothing executes without the vault.
 */
import { status } from '@grpc/grpc-js';
import type { vault } from '@agw/proto';
import { AppError, DependencyUnavailableError, type TenantCache, fromAnswerJson, isDependencyDown, jsonField, jsonOf, mcpRoundField } from '@agw/shared';
import type { VaultClient } from '../clients/grpc-clients';
import type { FederatedCatalog } from '../federation/federated-catalog';
import type { BrokeredExecution, ToolBroker, UpstreamNotifications } from '../pipeline/hooks';

/** An event of the vault's ExecuteStream before its answer: the upstream's progress or log message, to the MCP client. */
function relayEvent(e: vault.ExecuteEvent, to: UpstreamNotifications): void {
  if (e.progress) {
    const { progress, total, message } = e.progress;
    to.send({ kind: 'progress', progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) });
  } else if (e.log) {
    let data: unknown;
    try {
      data = fromAnswerJson(jsonOf(e.log, 'data'), 'data');
    } catch {
      data = jsonOf(e.log, 'data')?.text; // not JSON: relayed as the text it is
    }
    to.send({ kind: 'log', level: e.log.level, ...(e.log.logger !== undefined ? { logger: e.log.logger } : {}), data });
  }
}

/** The peer does not serve the method (gRPC UNIMPLEMENTED): nothing ran. */
const unimplemented = (e: unknown) => e instanceof AppError && (e.cause as { code?: unknown } | undefined)?.code === status.UNIMPLEMENTED;

const missingAnswer = (): never => {
  throw new AppError('internal', 'the vault ended the execution stream without its answer');
};

/**
 * `credentials`: when given, "has this tool a credential?" is answered from this per-(tenant, tool) cache
 * (see vault/credential-changes.ts for how it is invalidated) instead of a vault round trip per call.
 */
export function createVaultBroker(vault: VaultClient, credentials?: TenantCache<boolean>, federation?: FederatedCatalog): ToolBroker {
  const lookup = async (tenantId: string, tool: string) => (await vault.getCredentialStatus({ tenant_id: tenantId, tool_id: tool })).registered;
  return {
    hasCredential(tenantId, tool) {
      return credentials ? credentials.get(tenantId, tool, () => lookup(tenantId, tool)) : lookup(tenantId, tool);
    },
    ...(federation ? { federatedTarget: (tenantId: string, tool: string, method: string) => federation.target(tenantId, tool, method) } : {}),
    async execute(tenantId, actionId, call): Promise<BrokeredExecution | null> {
      // A live call carries its plaintext params (and storedParams beside them); an approved action only
      // has its stored params, whose PII envelopes the vault opens itself.
      const fromApproval = call.origin === 'approval';
      let r;
      const notifications = call.upstreamRound?.notifications;
      try {
        const request = {
          tenant_id: tenantId,
          action_id: actionId,
          agent_id: call.agent_id,
          tool: call.tool,
          method: call.method,
          ...jsonField('params', call.params),
          origin: fromApproval ? 'approval' : 'tool_call',
          user_id: call.userId ?? '',
          relay_progress: false,
          relay_log_level: '',
          // the message and the previous release's text of it (a rolling update)
          ...mcpRoundField(call.upstreamRound?.relay ? call.upstreamRound : undefined),
        };
        // (its deadline: the vault client's for `execute`, packages/shared/src/peer-clients.ts); the MCP
        // client's request closed: the call is cancelled, and the vault cancels the upstream's
        const cancel = call.upstreamRound?.signal ? { signal: call.upstreamRound.signal } : undefined;
        // a client that wants the upstream's progress or log messages: they come on a stream before the answer
        r = notifications
          ? await vault
              .executeStream({ ...request, relay_progress: notifications.progress, relay_log_level: notifications.logLevel ?? '' }, { ...cancel, onMessage: (e) => relayEvent(e, notifications) })
              .then(
                (last) => last.response ?? missingAnswer(),
                // a vault without ExecuteStream (an older replica during a rolling update): the call runs as before, without them
                (e: unknown) => (unimplemented(e) ? vault.execute(request, cancel) : Promise.reject(e)),
              )
          : await vault.execute(request, cancel);
      } catch (e) {
        // cancelled by the MCP client: recorded as such (the vault cancelled the upstream call and logged it)
        if (call.upstreamRound?.signal?.aborted) {
          return { status_code: 499, body: { error: 'the MCP client cancelled the call (its request closed); the upstream call was cancelled' }, hsm_fetch_ms: 0, execution_ms: 0, credential_name: `upstream:${call.tool}`, outcome: 'cancelled', mcp_result: true };
        }
        if (isDependencyDown(e)) {
          throw new DependencyUnavailableError('Vault service unreachable: brokered execution is unavailable, the call was not executed', { cause: e });
        }
        throw e;
      }
      if (!r.brokered) return null;
      return {
        status_code: r.status_code,
        body: fromAnswerJson(jsonOf(r, 'body'), 'body', null),
        hsm_fetch_ms: r.hsm_fetch_ms,
        execution_ms: r.execution_ms,
        credential_name: r.credential_name,
        outcome: r.outcome,
        mcp_result: r.mcp_result,
      };
    },
  };
}
