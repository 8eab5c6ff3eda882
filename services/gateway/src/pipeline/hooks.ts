/**
 * The pipeline's steps that live outside it, as interfaces: gateway.ts wires the real implementations
 * (Redis constraints, the vault's PII guard and broker); the pipeline depends on these shapes only.
 */
import type { ToolCallRequest } from './tool-call.schema';

/** Step 2: hard safety blocks evaluated before any policy. */
export interface GatewayConstraints {
  /** The violation that blocks the call, or null. */
  check(tenantId: string, call: ToolCallRequest, settings: Record<string, unknown>): Promise<ConstraintHit | null>;
  /** Called after every decision (to count violations for cooldowns and actions for daily caps). */
  record(tenantId: string, call: ToolCallRequest, outcome: { decision: string; violations: string[] }): Promise<void>;
}

export interface ConstraintHit {
  violation: string;
  severity: 'high' | 'critical';
  message: string;
}

/** PII detection and per-subject encryption of params before they are stored. */
export interface PiiGuard {
  protect(tenantId: string, actionId: string, params: Record<string, unknown>): Promise<ProtectedParams>;
}

export interface ProtectedParams {
  piiDetected: boolean;
  /** what audit records and the approval queue store (PII replaced by ciphertext envelopes) */
  storedParams: Record<string, unknown>;
  subjectIds: string[];
}

/** Step 7: agent-blind execution when a credential is registered for the tool. */
export interface ToolBroker {
  /**
   * Optional fast look-up, started at the beginning of the pipeline in parallel with the policy: false
   * when the tenant has no credential for the tool, so an allowed call skips `execute` altogether.
   */
  hasCredential?(tenantId: string, tool: string): Promise<boolean>;
  /**
   * Optional, started with `hasCredential`: whether the call's tool is one of the tenant's upstream MCP
   * servers (docs/federation.md) and whether its tool `method` may run (a quarantined or unknown tool is
   * refused before any policy with the violation named here).
   */
  federatedTarget?(tenantId: string, tool: string, method: string): Promise<FederatedTarget>;
  /** null when no credential is registered for the tool (the agent executes). */
  execute(
    tenantId: string,
    actionId: string,
    /** a live call carries its plaintext params; an approved action only its stored params (PII envelopes the vault opens) */
    call: ToolCallRequest & { storedParams?: Record<string, unknown>; origin: 'tool_call' | 'approval'; /** the human the agent acts for (a per_user upstream uses their connection) */ userId?: string; upstreamRound?: UpstreamRound },
  ): Promise<BrokeredExecution | null>;
}

/**
 * A live federated tools/call of an MCP client (mcp-calls.ts): the caller's cancellation (its HTTP request
 * closed: the vault cancels the upstream call), and a relayed multi round-trip (SEP-2322): the upstream's
 * own `input_required` comes back as the execution's body, and the client's answers to the previous one go
 * to the upstream with its own `requestState`.
 */
export interface UpstreamRound {
  signal?: AbortSignal;
  relay?: boolean;
  /** what the MCP client declared it answers (elicitation, sampling, roots): the upstream is told the same */
  clientCapabilities?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  /** what the upstream sends during the call that the MCP client gets (docs/mcp.md, "Inside a call") */
  notifications?: UpstreamNotifications;
}

/** A notification an upstream sent during a federated call, as the vault relays it (bounded and masked). */
export type UpstreamNotification =
  | { kind: 'progress'; progress: number; total?: number; message?: string }
  | { kind: 'log'; level: string; logger?: string; data: unknown };

/** The MCP client wants its call's progress (it sent a progressToken) and log messages at `logLevel` and above. */
export interface UpstreamNotifications {
  progress: boolean;
  logLevel?: string;
  send(n: UpstreamNotification): void;
}

export interface FederatedTarget {
  upstream: boolean;
  executable: boolean;
  /** an upstream that needs OAuth: one connection for the tenant, or each human's own */
  connection?: 'shared' | 'per_user';
  /** an executable tool: the SHA-256 (hex) of its pinned definition (the record's details.definition_sha256, the receipt's `definition`) */
  definition_sha256?: string;
  violation?: string;
  message?: string;
}

export interface BrokeredExecution {
  status_code: number;
  body: unknown;
  hsm_fetch_ms: number;
  execution_ms: number;
  credential_name: string;
  /** executed | upstream_error | timeout | too_large | ... (the vault's outcome) */
  outcome?: string;
  /** a federated call: body is the upstream's MCP CallToolResult (or {error}) */
  mcp_result?: boolean;
}
