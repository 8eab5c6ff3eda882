/**
 * Managed agent configs: create (with the delegation rules), read, list. A config may name a parent
 * (`parent_agent_id`): configs form a delegation tree per tenant. Depth 0 is a root; a child sits one
 * level below its parent. Every ancestor's `max_delegation_depth` (1-5, default 1) bounds how many levels
 * below itself a delegate may sit, so a default root may have children but no grandchildren.
 */
import { randomUUID } from 'node:crypto';
import { InputError, NotFoundError } from '@agw/shared';
import type { AgentConfigRepository, AgentConfigRow } from './agent-config.repository';

export const CONFIG_DEFAULTS = { max_session_hours: 8, max_delegation_depth: 1 } as const;

export interface NewConfigInput {
  name: string;
  anthropic_model?: string;
  system_prompt?: string | null;
  allowed_tools: string[];
  require_human_approval: string[];
  max_session_hours?: number;
  max_daily_sessions?: number | null;
  max_delegation_depth?: number;
  governance_profile: Record<string, unknown>;
  parent_agent_id?: string | null;
}

export class AgentConfigs {
  constructor(
    private readonly repo: AgentConfigRepository,
    private readonly defaultModel: string,
  ) {}

  async create(tenantId: string, input: NewConfigInput): Promise<AgentConfigRow> {
    let depth = 0;
    if (input.parent_agent_id) {
      const ancestors = await this.repo.chain(tenantId, input.parent_agent_id);
      if (!ancestors.length) throw new NotFoundError(`Parent agent config ${input.parent_agent_id} not found`);
      depth = ancestors[0].depth + 1;
      for (const a of ancestors) {
        if (depth - a.depth > a.max_delegation_depth) {
          throw InputError.field(
            'parent_agent_id',
            `delegation too deep: agent "${a.name}" (${a.id}) allows delegates at most ${a.max_delegation_depth} level(s) below itself (max_delegation_depth), this one would be ${depth - a.depth}`,
            'delegation_depth_exceeded',
          );
        }
      }
    }
    return this.repo.insert(tenantId, {
      id: randomUUID(),
      name: input.name,
      anthropic_model: input.anthropic_model || this.defaultModel,
      system_prompt: input.system_prompt ?? null,
      allowed_tools: [...new Set(input.allowed_tools)],
      require_human_approval: [...new Set(input.require_human_approval)],
      max_session_hours: input.max_session_hours || CONFIG_DEFAULTS.max_session_hours,
      max_daily_sessions: input.max_daily_sessions || null,
      max_delegation_depth: input.max_delegation_depth || CONFIG_DEFAULTS.max_delegation_depth,
      governance_profile: input.governance_profile,
      parent_agent_id: input.parent_agent_id || null,
      depth,
    });
  }

  async get(tenantId: string, id: string): Promise<AgentConfigRow> {
    const row = await this.repo.get(tenantId, id);
    if (!row) throw new NotFoundError(`Managed agent config ${id} not found`);
    return row;
  }

  list(tenantId: string): Promise<AgentConfigRow[]> {
    return this.repo.list(tenantId);
  }
}
