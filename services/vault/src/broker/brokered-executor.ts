/**
 * Agent-blind execution: when the tenant registered a credential for the tool, the vault opens it in
 * the HSM, injects it (bearer: `Authorization: Bearer`, api_key: the registered header, basic:
 * `Authorization: Basic base64(user:password)`), sends the call's params as JSON to the registered
 * upstream (GET: as query parameters) through the target guard, and returns status code and body.
 * The secret never leaves this module: any echo of it in the upstream's answer is masked, and every
 * use (with its outcome) lands in the access log.
 */
import type { Logger } from '@agw/shared';
import type { AccessLogRepository } from '../credentials/access-log.repository';
import type { CredentialRow } from '../credentials/credential.repository';
import type { CredentialStore } from '../credentials/credential-store';
import type { FederatedTarget, Federation } from '../federation/federation';
import type { CallRound } from '../federation/upstream-connections';
import type { PiiProtector } from '../pii/pii-protector';
import { type TargetGuard, TargetRejected } from './target-guard';
import { SecretMasker } from '../secrets/secret-masker';
import { UpstreamError, sendUpstream } from './upstream-client';

export interface ExecuteInput {
  actionId: string;
  agentId: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  origin: 'tool_call' | 'approval';
  /** the human the agent acts for (a per_user upstream uses their connection) */
  userId?: string;
  /** a federated tools/call of an MCP client: a relayed multi round-trip, and the caller's cancellation */
  round?: CallRound;
}

export interface ExecuteOutcome {
  brokered: boolean;
  statusCode: number;
  body: unknown;
  hsmFetchMs: number;
  executionMs: number;
  credentialName: string;
  outcome: string;
  /** a federated call: body is the upstream's MCP CallToolResult (or {error}) */
  mcpResult?: boolean;
}


/** The secrets of a credential: the value, and a basic credential's password alone (its base64 form is one of the masker's). */
function secretsOf(c: CredentialRow, value: string): string[] {
  return c.credential_type === 'basic' ? [value, ...value.split(':').slice(1)] : [value];
}

export class BrokeredExecutor {
  constructor(
    private readonly d: {
      credentials: CredentialStore;
      accessLog: AccessLogRepository;
      pii: PiiProtector;
      guard: TargetGuard;
      timeoutMs: number;
      maxBytes: number;
      logger: Logger;
      /** tool = one of the tenant's upstream MCP servers: the call runs there (docs/federation.md) */
      federation?: Federation;
    },
  ) {}

  async execute(tenantId: string, x: ExecuteInput): Promise<ExecuteOutcome> {
    const federated = await this.d.federation?.lookup(tenantId, x.tool, x.method);
    if (federated && this.d.federation) return this.executeFederated(tenantId, x, this.d.federation, federated);
    const cred = await this.d.credentials.forTool(tenantId, x.tool);
    if (!cred) return { brokered: false, statusCode: 0, body: null, hsmFetchMs: 0, executionMs: 0, credentialName: '', outcome: 'no_credential' };
    let hsmFetchMs = 0;
    let executionMs = 0;
    const finish = async (statusCode: number, body: unknown, outcome: string, error: string | null) => {
      await this.d.accessLog.append(tenantId, {
        agent_id: x.agentId,
        tool_id: x.tool,
        credential_name: cred.name,
        action_id: x.actionId || null,
        origin: x.origin,
        outcome,
        status_code: statusCode,
        hsm_fetch_ms: hsmFetchMs,
        execution_ms: executionMs,
        error,
      });
      this.d.logger.info({ tenantId, tool: x.tool, credential: cred.name, actionId: x.actionId, outcome, statusCode }, 'brokered execution');
      return { brokered: true, statusCode, body, hsmFetchMs, executionMs, credentialName: cred.name, outcome };
    };

    // An approved action arrives with its stored params: open the PII envelopes for the upstream. A live
    // call's params are the agent's own plaintext and are sent as they are.
    const params = x.origin === 'approval' ? (await this.d.pii.reveal(tenantId, x.params)).params : x.params;
    const t0 = performance.now();
    const secret = await this.d.credentials.open(tenantId, cred);
    hsmFetchMs = performance.now() - t0;
    const masker = new SecretMasker(secretsOf(cred, secret));

    if (!cred.upstream_url) {
      const error = `no upstream_url is registered with credential "${cred.name}" of tool ${x.tool}`;
      return finish(502, { error }, 'no_upstream', error);
    }
    let target;
    try {
      target = await this.d.guard.check(tenantId, cred.upstream_url);
    } catch (e) {
      if (!(e instanceof TargetRejected)) throw e;
      return finish(502, { error: `upstream blocked: ${e.reason}` }, 'blocked', e.reason);
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'agw-vault-broker/1',
      'x-agw-action-id': x.actionId,
      'x-agw-tool': x.tool,
      'x-agw-method': x.method,
      'x-agw-agent-id': x.agentId,
    };
    if (cred.credential_type === 'bearer') headers.authorization = `Bearer ${secret}`;
    else if (cred.credential_type === 'basic') headers.authorization = `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`;
    else headers[(cred.header_name ?? 'X-API-Key').toLowerCase()] = secret;
    let body: Buffer | undefined;
    if (cred.upstream_method === 'GET' || cred.upstream_method === 'DELETE') {
      for (const [k, v] of Object.entries((params ?? {}) as Record<string, unknown>)) {
        target.url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      }
    } else {
      body = Buffer.from(JSON.stringify(params ?? {}), 'utf8');
      headers['content-type'] = 'application/json';
    }
    const t1 = performance.now();
    try {
      const res = await sendUpstream({ target, method: cred.upstream_method, headers, body, timeoutMs: this.d.timeoutMs, maxBytes: this.d.maxBytes });
      executionMs = performance.now() - t1;
      // masked as sent (an encoded form inside the JSON text), then as parsed (a form the JSON escapes spelled out)
      const text = masker.text(res.body.toString('utf8'));
      let parsed: unknown = text;
      if (/json/i.test(res.contentType) || /^\s*[[{]/.test(text)) {
        try {
          parsed = masker.value(JSON.parse(text));
        } catch {
          parsed = text;
        }
      }
      return finish(res.statusCode, parsed, 'executed', null);
    } catch (e) {
      executionMs = performance.now() - t1;
      if (!(e instanceof UpstreamError)) throw e;
      const error = masker.text(e.message);
      return finish(e.outcome === 'timeout' ? 504 : 502, { error }, e.outcome, error);
    }
  }

  /** An allowed call of a federated tool: method = the upstream's tool, params = its arguments. */
  private async executeFederated(tenantId: string, x: ExecuteInput, federation: Federation, at: FederatedTarget): Promise<ExecuteOutcome> {
    const params = (x.origin === 'approval' ? (await this.d.pii.reveal(tenantId, x.params)).params : x.params) as Record<string, unknown>;
    const r = await federation.call(tenantId, at, params, { userId: x.userId || undefined, round: x.round });
    const error = r.outcome === 'executed' ? null : (r.result as { error: string }).error;
    const credentialName = `upstream:${x.tool}`;
    await this.d.accessLog.append(tenantId, {
      agent_id: x.agentId,
      tool_id: x.tool,
      credential_name: credentialName,
      action_id: x.actionId || null,
      origin: x.origin,
      outcome: r.outcome,
      status_code: r.statusCode,
      hsm_fetch_ms: 0,
      execution_ms: r.executionMs,
      error,
    });
    this.d.logger.info({ tenantId, upstream: x.tool, tool: x.method, actionId: x.actionId, outcome: r.outcome, statusCode: r.statusCode }, 'federated execution');
    return { brokered: true, statusCode: r.statusCode, body: r.result, hsmFetchMs: 0, executionMs: r.executionMs, credentialName, outcome: r.outcome, mcpResult: true };
  }
}
