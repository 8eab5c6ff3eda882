/**
 * The stand-in's in-memory platform: agents, environments, vaults with their credentials, and sessions
 * with their event logs. Request bodies are validated here and objects are built in the shapes of the
 * SDK's types (`BetaManagedAgentsAgent`, `BetaEnvironment`, `BetaManagedAgentsVault`,
 * `BetaManagedAgentsCredential`, `BetaManagedAgentsSession`). Credential tokens stay in this memory, for
 * the MCP client only: no answer ever carries them.
 */
import { invalidRequest, notFound } from './api-errors';
import { EventLog, type PlatformEvent } from './event-log';
import { newId } from './ids';

type Json = Record<string, any>;
type Metadata = Record<string, string>;

export interface McpServerDef {
  type: 'url';
  name: string;
  url: string;
}

/** The agent definition a session runs (`BetaManagedAgentsSessionAgent`). */
export interface SessionAgent {
  id: string;
  type: 'agent';
  version: number;
  name: string;
  description: string | null;
  model: { id: string } & Json;
  system: string | null;
  tools: Json[];
  mcp_servers: McpServerDef[];
  skills: Json[];
  execution_identity: Json;
  multiagent: null;
}

export interface Agent extends SessionAgent {
  metadata: Metadata;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface Environment {
  id: string;
  type: 'environment';
  name: string;
  description: string | null;
  config: Json;
  metadata: Metadata;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface Vault {
  id: string;
  type: 'vault';
  display_name: string;
  metadata: Metadata;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** A stored credential: the token is kept here and left out of every answer ({@link presentCredential}). */
export interface StoredCredential {
  id: string;
  vault_id: string;
  display_name: string | null;
  metadata: Metadata;
  mcp_server_url: string;
  token: string;
  created_at: string;
}

export interface InterruptRecord {
  event_id: string;
  received_at: string;
  /** whether a script was running when it arrived (it stopped at its next step) */
  script_running: boolean;
}

export type SessionStatus = 'idle' | 'running' | 'rescheduling' | 'terminated';

export interface Session {
  id: string;
  status: SessionStatus;
  agent: SessionAgent;
  environment_id: string;
  vault_ids: string[];
  metadata: Metadata;
  title: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  log: EventLog;
  interrupts: InterruptRecord[];
  /** scripts running now */
  scripts: number;
  /** aborted by an interrupt or the end of the session: the scripts that started under it stop */
  stop: AbortController;
  /** tool uses waiting for a `user.tool_confirmation` (permission policy always_ask), by tool-use event id */
  awaiting: Map<string, (c: ToolConfirmation) => void>;
}

/** A `user.tool_confirmation` as a session receives it (`BetaManagedAgentsUserToolConfirmationEventParams`). */
export interface ToolConfirmation {
  result: 'allow' | 'deny';
  deny_message: string | null;
}

export type PermissionPolicy = 'always_allow' | 'always_ask';

const now = () => new Date().toISOString();
const str = (v: unknown, field: string, required = true): string | undefined => {
  if (v === undefined || v === null) {
    if (required) throw invalidRequest(`${field} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw invalidRequest(`${field} must be a string`);
  return v;
};
const metadataOf = (v: unknown): Metadata => {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) throw invalidRequest('metadata must map strings to strings');
  return { ...(v as Metadata) };
};
const modelOf = (v: unknown): SessionAgent['model'] => {
  if (typeof v === 'string' && v) return { id: v, speed: 'standard' };
  if (v && typeof v === 'object' && typeof (v as Json).id === 'string') return { speed: 'standard', ...(v as Json), id: (v as Json).id };
  throw invalidRequest('model must be a model id or {id}');
};
const mcpServersOf = (v: unknown): McpServerDef[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidRequest('mcp_servers must be an array');
  return v.map((s: Json, i) => {
    if (s?.type !== 'url' || typeof s.name !== 'string' || typeof s.url !== 'string') throw invalidRequest(`mcp_servers[${i}] must be {type: 'url', name, url}`);
    try {
      new URL(s.url);
    } catch {
      throw invalidRequest(`mcp_servers[${i}].url is not a URL`);
    }
    return { type: 'url', name: s.name, url: s.url };
  });
};
const POLICIES = ['always_allow', 'always_ask'];

/** Tool params resolved as the API answers them (configs and default_config filled in). */
const toolsOf = (v: unknown, servers: McpServerDef[]): Json[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidRequest('tools must be an array');
  return v.map((t: Json, i) => {
    if (t?.type === 'mcp_toolset' && !servers.some((s) => s.name === t.mcp_server_name)) {
      throw invalidRequest(`tools[${i}].mcp_server_name does not name one of mcp_servers`);
    }
    if (t?.type !== 'mcp_toolset' && t?.type !== 'agent_toolset_20260401') return t;
    const policy = t.type === 'mcp_toolset' ? { type: 'always_ask' } : { type: 'always_allow' };
    const d = t.default_config ?? {};
    const configs = t.configs ?? [];
    if (!Array.isArray(configs)) throw invalidRequest(`tools[${i}].configs must be an array`);
    const resolved = configs.map((c: Json, j: number) => {
      if (typeof c?.name !== 'string' || c.name.length < 1 || c.name.length > 128) throw invalidRequest(`tools[${i}].configs[${j}].name must be 1-128 characters`);
      const p = c.permission_policy;
      if (p !== undefined && p !== null && !POLICIES.includes(p?.type)) throw invalidRequest(`tools[${i}].configs[${j}].permission_policy.type must be one of ${POLICIES.join(', ')}`);
      return { name: c.name, enabled: c.enabled ?? d.enabled ?? true, permission_policy: p ?? d.permission_policy ?? policy };
    });
    return { ...t, configs: resolved, default_config: { enabled: d.enabled ?? true, permission_policy: d.permission_policy ?? policy } };
  });
};

export class PlatformState {
  readonly agents = new Map<string, Agent>();
  readonly environments = new Map<string, Environment>();
  readonly vaults = new Map<string, Vault>();
  readonly credentials = new Map<string, StoredCredential>();
  readonly sessions = new Map<string, Session>();

  createAgent(b: Json): Agent {
    const at = now();
    const mcp_servers = mcpServersOf(b.mcp_servers);
    const agent: Agent = {
      id: newId('agent'),
      type: 'agent',
      version: 1,
      name: str(b.name, 'name')!,
      description: str(b.description, 'description', false) ?? null,
      model: modelOf(b.model),
      system: str(b.system, 'system', false) ?? null,
      tools: toolsOf(b.tools, mcp_servers),
      mcp_servers,
      skills: Array.isArray(b.skills) ? b.skills : [],
      execution_identity: b.execution_identity ?? { type: 'service_account' },
      multiagent: null,
      metadata: metadataOf(b.metadata),
      created_at: at,
      updated_at: at,
      archived_at: null,
    };
    this.agents.set(agent.id, agent);
    return agent;
  }

  createEnvironment(b: Json): Environment {
    const at = now();
    const config = b.config?.type === 'self_hosted' ? { type: 'self_hosted' } : { type: 'cloud', networking: b.config?.networking ?? { type: 'unrestricted' }, packages: { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [], ...(b.config?.packages ?? {}) } };
    const env: Environment = { id: newId('env'), type: 'environment', name: str(b.name, 'name')!, description: str(b.description, 'description', false) ?? null, config, metadata: metadataOf(b.metadata), created_at: at, updated_at: at, archived_at: null };
    this.environments.set(env.id, env);
    return env;
  }

  createVault(b: Json): Vault {
    const at = now();
    const vault: Vault = { id: newId('vlt'), type: 'vault', display_name: str(b.display_name, 'display_name')!, metadata: metadataOf(b.metadata), created_at: at, updated_at: at, archived_at: null };
    this.vaults.set(vault.id, vault);
    return vault;
  }

  addCredential(vaultId: string, b: Json): StoredCredential {
    if (!this.vaults.has(vaultId)) throw notFound('vault', vaultId);
    const auth = b.auth ?? {};
    if (auth.type !== 'static_bearer') throw invalidRequest('the stand-in supports auth.type static_bearer only');
    const c: StoredCredential = {
      id: newId('vcrd'),
      vault_id: vaultId,
      display_name: str(b.display_name, 'display_name', false) ?? null,
      metadata: metadataOf(b.metadata),
      mcp_server_url: str(auth.mcp_server_url, 'auth.mcp_server_url')!,
      token: str(auth.token, 'auth.token')!,
      created_at: now(),
    };
    this.credentials.set(c.id, c);
    return c;
  }

  /** The bearer of the first credential registered for exactly `url` in the session's vaults. */
  bearerFor(s: Session, url: string): string | undefined {
    for (const c of this.credentials.values()) if (s.vault_ids.includes(c.vault_id) && c.mcp_server_url === url) return c.token;
    return undefined;
  }

  createSession(b: Json): Session {
    const agent = this.resolveAgent(b.agent);
    const environmentId = str(b.environment_id, 'environment_id')!;
    if (!this.environments.has(environmentId)) throw notFound('environment', environmentId);
    if (b.vault_ids !== undefined && (!Array.isArray(b.vault_ids) || b.vault_ids.some((v: unknown) => typeof v !== 'string'))) throw invalidRequest('vault_ids must be an array of ids');
    const vaultIds: string[] = b.vault_ids ?? [];
    for (const v of vaultIds) if (!this.vaults.has(v)) throw notFound('vault', v);
    const initial: Json[] = b.initial_events ?? [];
    if (!Array.isArray(initial) || initial.some((e) => e?.type !== 'user.message' || !Array.isArray(e.content))) {
      throw invalidRequest('initial_events must be user.message events with a content array');
    }
    const at = now();
    const s: Session = {
      id: newId('sesn'),
      status: 'idle',
      agent,
      environment_id: environmentId,
      vault_ids: [...vaultIds],
      metadata: metadataOf(b.metadata),
      title: str(b.title, 'title', false) ?? null,
      created_at: at,
      updated_at: at,
      archived_at: null,
      log: new EventLog(),
      interrupts: [],
      scripts: 0,
      stop: new AbortController(),
      awaiting: new Map(),
    };
    this.sessions.set(s.id, s);
    for (const e of initial) this.userMessage(s, e.content);
    return s;
  }

  /** `agent` of a session: an id, `{type: 'agent', id, version}` or `{type: 'agent_with_overrides', …}`. */
  private resolveAgent(ref: unknown): SessionAgent {
    const r: Json = typeof ref === 'string' ? { id: ref } : ((ref ?? {}) as Json);
    const id = str(r.id, 'agent.id')!;
    const base = this.agents.get(id);
    if (!base) throw notFound('agent', id);
    if (r.version !== undefined && r.version !== null && r.version !== base.version) throw notFound('agent version', `${id}@${r.version}`);
    const { metadata: _m, created_at: _c, updated_at: _u, archived_at: _a, ...agent } = base;
    if (r.type !== 'agent_with_overrides') return agent;
    const mcp_servers = r.mcp_servers !== undefined ? mcpServersOf(r.mcp_servers) : agent.mcp_servers;
    return {
      ...agent,
      mcp_servers,
      ...(r.system !== undefined ? { system: str(r.system, 'agent.system', false) ?? null } : {}),
      ...(r.model !== undefined ? { model: modelOf(r.model) } : {}),
      ...(r.skills !== undefined ? { skills: r.skills } : {}),
      tools: r.tools !== undefined ? toolsOf(r.tools, mcp_servers) : agent.tools,
    };
  }

  /** A user message: logged, and an idle session starts running. */
  userMessage(s: Session, content: unknown[]): PlatformEvent {
    const e = s.log.append('user.message', { content });
    if (s.status === 'idle') this.setStatus(s, 'running');
    return e;
  }

  /** The permission policy of an MCP tool in this session: its toolset's config for the tool, else the default. */
  permissionOf(s: Session, serverName: string, tool: string): PermissionPolicy {
    const set = s.agent.tools.find((t) => t.type === 'mcp_toolset' && t.mcp_server_name === serverName);
    if (!set) return 'always_ask';
    const config = (set.configs as Json[]).find((c) => c.name === tool);
    return (config?.permission_policy?.type ?? set.default_config?.permission_policy?.type ?? 'always_ask') as PermissionPolicy;
  }

  /**
   * A `user.tool_confirmation`: logged, and the tool use it names (one the session is blocked on, as the
   * last `requires_action` listed) resumes. Anything else is a 400, as on the platform.
   */
  confirm(s: Session, e: Json): PlatformEvent {
    if (e.result !== 'allow' && e.result !== 'deny') throw invalidRequest("user.tool_confirmation.result must be 'allow' or 'deny'");
    const toolUseId = str(e.tool_use_id, 'user.tool_confirmation.tool_use_id')!;
    const message = str(e.deny_message, 'user.tool_confirmation.deny_message', false) ?? null;
    if (message !== null && e.result !== 'deny') throw invalidRequest("deny_message is only allowed when result is 'deny'");
    const resume = s.awaiting.get(toolUseId);
    if (!resume) throw invalidRequest(`tool_use_id ${toolUseId} is not awaiting a confirmation in this session`);
    s.awaiting.delete(toolUseId);
    const event = s.log.append('user.tool_confirmation', { tool_use_id: toolUseId, result: e.result, deny_message: message });
    resume({ result: e.result, deny_message: message });
    return event;
  }

  /** A user interrupt: recorded, running scripts stop, and the session goes idle (end_turn). */
  interrupt(s: Session, sessionThreadId: string | null): PlatformEvent {
    const e = s.log.append('user.interrupt', { session_thread_id: sessionThreadId });
    s.interrupts.push({ event_id: e.id, received_at: e.processed_at, script_running: s.scripts > 0 });
    this.stopScripts(s);
    this.setStatus(s, 'idle', { type: 'end_turn' });
    return e;
  }

  /**
   * Moves the session to `status` and logs `session.status_<status>` (`stop_reason` for idle).
   * Terminated is final: later status changes are ignored.
   */
  setStatus(s: Session, status: Exclude<SessionStatus, 'rescheduling'>, stopReason?: Json): PlatformEvent | undefined {
    if (s.status === 'terminated') return undefined;
    s.status = status;
    s.updated_at = now();
    if (status === 'terminated') this.stopScripts(s);
    return s.log.append(`session.status_${status}`, status === 'idle' ? { stop_reason: stopReason ?? { type: 'end_turn' }, stop_details: null } : {});
  }

  archive(s: Session): void {
    this.setStatus(s, 'terminated');
    s.archived_at ??= now();
  }

  private stopScripts(s: Session): void {
    // a tool use waiting for a confirmation is denied by the abort (script-runner.ts awaitConfirmation)
    s.awaiting.clear();
    s.stop.abort();
    s.stop = new AbortController();
  }
}

/** A session as the API answers it (no event log, no tokens). */
export function presentSession(s: Session) {
  const seconds = Math.round((Date.now() - Date.parse(s.created_at)) / 1000);
  return {
    id: s.id,
    type: 'session' as const,
    status: s.status,
    agent: s.agent,
    environment_id: s.environment_id,
    vault_ids: s.vault_ids,
    metadata: s.metadata,
    title: s.title,
    budget: null,
    resources: [],
    outcome_evaluations: [],
    stats: { duration_seconds: seconds, active_seconds: 0 },
    usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 } },
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}

/** A credential as the API answers it: `auth` echoes the type and the MCP server URL, never the token. */
export function presentCredential(c: StoredCredential) {
  return {
    id: c.id,
    type: 'vault_credential' as const,
    vault_id: c.vault_id,
    display_name: c.display_name,
    auth: { type: 'static_bearer' as const, mcp_server_url: c.mcp_server_url },
    metadata: c.metadata,
    created_at: c.created_at,
    updated_at: c.created_at,
    archived_at: null,
  };
}
