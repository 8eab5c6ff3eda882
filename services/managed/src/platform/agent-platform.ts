/**
 * The external agent platform as the managed service uses it: a narrow interface over Claude Managed
 * Agents (agents, environments, vaults, sessions, the session event stream). `anthropic-platform.ts` is
 * the one implementation, through the official SDK; tests point it at the local stand-in by base URL.
 */

/** A platform session event, as the stream and the event list deliver it (fields beyond these pass through). */
export interface PlatformEvent {
  id: string;
  type: string;
  processed_at?: string | null;
  name?: string;
  input?: Record<string, unknown>;
  stop_reason?: { type: string } | null;
  error?: { type?: string; message?: string } | null;
  [key: string]: unknown;
}

export interface PlatformSessionSpec {
  platformAgentId: string;
  environmentId: string;
  vaultId: string;
  /** the governance-injected system prompt (overrides the agent's for this session) */
  systemPrompt: string;
  mcpServerName: string;
  mcpServerUrl: string;
  /** MCP tools the platform must ask about before each call (always_ask); the others are always_allow */
  askTools: string[];
  userMessage?: string;
  metadata: Record<string, string>;
  title: string;
}

export interface AgentPlatform {
  createAgent(spec: { name: string; model: string; system: string | null; metadata: Record<string, string> }): Promise<string>;
  /** Does the platform still know this agent (checked once per process and id)? */
  agentExists(id: string): Promise<boolean>;
  /** The environment of this name: the remembered one while the platform still knows it, else a new one. */
  ensureEnvironment(name: string): Promise<string>;
  /** A vault holding one static bearer credential for our MCP server URL; returns the vault id. */
  createMcpVault(spec: { displayName: string; mcpServerUrl: string; bearer: string; metadata: Record<string, string> }): Promise<string>;
  createSession(spec: PlatformSessionSpec): Promise<{ id: string; status: string }>;
  interrupt(sessionId: string): Promise<void>;
  /** Answer a tool use the session is blocked on (`user.tool_confirmation`; `denyMessage` only with deny). */
  confirmToolUse(sessionId: string, c: { toolUseId: string; result: 'allow' | 'deny'; denyMessage?: string }): Promise<void>;
  /** Every event of the session so far, oldest first (backfill after (re)connecting). */
  listEvents(sessionId: string): Promise<PlatformEvent[]>;
  /**
   * Open the live stream (resolves once the platform answered): events appended after it opened. The
   * iterable ends or throws when the connection drops.
   */
  openStream(sessionId: string, o: { lastEventId?: string | null; signal: AbortSignal }): Promise<AsyncIterable<PlatformEvent>>;
}
