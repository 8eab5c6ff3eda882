/** The stand-in's in-memory platform: agents, environments, vaults with credentials, sessions. */
import { SessionLog, newId } from './session-log';

export interface McpServerDef {
  type: 'url';
  name: string;
  url: string;
}

export interface Agent {
  id: string;
  type: 'agent';
  version: number;
  name: string;
  model: { id: string };
  system: string | null;
  tools: unknown[];
  mcp_servers: McpServerDef[];
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
  archived_at: null;
}

export interface Credential {
  id: string;
  type: 'vault_credential';
  vault_id: string;
  display_name: string | null;
  /** the secret never leaves the stand-in's memory (responses omit it) */
  token: string;
  mcp_server_url: string;
  created_at: string;
}

export interface Session {
  id: string;
  status: 'idle' | 'running' | 'rescheduling' | 'terminated';
  agent: Agent;
  environment_id: string;
  vault_ids: string[];
  metadata: Record<string, string>;
  title: string | null;
  created_at: string;
  log: SessionLog;
  interrupts: string[];
  /** bumped by every interrupt: a running script stops at its next step */
  interruptEpoch: number;
}

export class PlatformState {
  readonly agents = new Map<string, Agent>();
  readonly environments = new Map<string, Record<string, unknown>>();
  readonly vaults = new Map<string, { id: string; type: 'vault'; display_name: string; metadata: Record<string, string>; created_at: string; credentials: Credential[] }>();
  readonly sessions = new Map<string, Session>();

  createAgent(b: Record<string, any>): Agent {
    const now = new Date().toISOString();
    const agent: Agent = {
      id: newId('agent'),
      type: 'agent',
      version: 1,
      name: String(b.name),
      model: typeof b.model === 'string' ? { id: b.model } : { id: String(b.model?.id ?? 'unknown') },
      system: b.system ?? null,
      tools: b.tools ?? [],
      mcp_servers: b.mcp_servers ?? [],
      metadata: b.metadata ?? {},
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    this.agents.set(agent.id, agent);
    return agent;
  }

  /** The bearer for an MCP server URL among a session's vaults, if one is registered. */
  tokenFor(s: Session, url: string): string | undefined {
    for (const vid of s.vault_ids) {
      const c = this.vaults.get(vid)?.credentials.find((x) => x.mcp_server_url === url);
      if (c) return c.token;
    }
    return undefined;
  }
}

/** A session as the API returns it (no log, no tokens). */
export function presentSession(s: Session) {
  return {
    id: s.id,
    type: 'session',
    status: s.status,
    agent: s.agent,
    environment_id: s.environment_id,
    vault_ids: s.vault_ids,
    metadata: s.metadata,
    title: s.title,
    created_at: s.created_at,
    updated_at: new Date().toISOString(),
    archived_at: null,
    resources: [],
    outcome_evaluations: [],
    stats: {},
    usage: {},
  };
}

export function presentCredential(c: Credential) {
  return { id: c.id, type: c.type, vault_id: c.vault_id, display_name: c.display_name, auth: { type: 'static_bearer', mcp_server_url: c.mcp_server_url }, created_at: c.created_at, archived_at: null, metadata: {} };
}
