/**
 * Creating a managed session, in the spec's order:
 *  1. validate the config against the tenant policy (the policy engine must hold an active bundle for the
 *     tenant: its revision is recorded with the session; unreachable → 502, nothing created);
 *  2. check the concurrent, daily and per-agent limits (429) — atomically with reserving the session row,
 *     so concurrent requests cannot both take the last slot;
 *  3. inject the governance instructions into the system prompt; keep its SHA-256;
 *  4. create the external session with this gateway registered as its remote MCP server (a vault with a
 *     static bearer credential for the session's MCP URL; the toolset's permission policy is always_allow
 *     because the gateway decides, always_ask for the tools that may need a human);
 *  5. attach the event consumer;
 *  6. complete the session record and append its `control_plane` audit record (system_prompt_hash).
 * If the platform fails, the reserved row is marked failed (it no longer counts as active) and the call
 * answers 502. The bearer is handed to the platform and never stored or logged here.
 */
import type { Logger } from '@agw/shared';
import type { AgentConfigRepository } from '../agents/agent-config.repository';
import type { AgentConfigs } from '../agents/agent-configs';
import type { PolicyClient } from '../clients';
import type { AgentPlatform } from '../platform/agent-platform';
import { governedSystemPrompt, promptHash } from './governance-prompt';
import type { SessionRecorder } from './session-recorder';
import type { SessionRepository, SessionRow } from './session.repository';

export const MCP_SERVER_NAME = 'agw-governance';

export interface CreateSessionInput {
  sessionId: string;
  agentId: string;
  userMessage: string;
  environmentId: string;
  metadata: Record<string, unknown>;
  mcpBearer: string;
  mcpServerUrl: string;
  /** the session's MCP tools that may need a human: always_ask on the platform */
  askTools: string[];
}

export interface LauncherDeps {
  configs: AgentConfigs;
  configRepo: AgentConfigRepository;
  repo: SessionRepository;
  platform: AgentPlatform;
  policy: PolicyClient;
  recorder: SessionRecorder;
  attach(s: SessionRow): Promise<boolean>;
  onCreated?(): void;
  limits: { maxConcurrent: number; maxDaily: number };
  logger: Logger;
}

/** Platform metadata: string values only, at most 16 pairs (keys ≤ 64 chars, values ≤ 512). */
function platformMetadata(m: Record<string, unknown>, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m).slice(0, 16 - Object.keys(extra).length)) out[k.slice(0, 64)] = (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 512);
  return { ...out, ...extra };
}

export class SessionLauncher {
  constructor(private readonly d: LauncherDeps) {}

  async create(tenantId: string, input: CreateSessionInput): Promise<SessionRow> {
    const config = await this.d.configs.get(tenantId, input.agentId);
    // 1. the tenant policy must be active (and the policy engine reachable)
    const bundle = await this.d.policy.getBundleStatus({ tenant_id: tenantId });
    // 3 (computed before the reservation: the hash is part of the record)
    const allowedTools = config.allowed_tools;
    const prompt = governedSystemPrompt(config.system_prompt, {
      sessionId: input.sessionId,
      configName: config.name,
      allowedTools,
      requireHumanApproval: config.require_human_approval,
      maxSessionHours: config.max_session_hours,
      mcpServerName: MCP_SERVER_NAME,
    });
    const hash = promptHash(prompt);
    // 2. limits, atomically with the reservation
    const reserved = await this.d.repo.reserve(
      tenantId,
      {
        id: input.sessionId,
        agent_id: config.id,
        system_prompt_hash: hash,
        mcp_server_url: input.mcpServerUrl,
        bundle_revision: bundle.revision,
        metadata: input.metadata,
        expires_at: new Date(Date.now() + config.max_session_hours * 3600_000),
      },
      { ...this.d.limits, maxDailyForAgent: config.max_daily_sessions },
    );
    // 4. the external session
    let platformSession: { id: string };
    let vaultId: string;
    let environmentId: string;
    try {
      let platformAgentId = config.platform_agent_id;
      if (!platformAgentId || !(await this.d.platform.agentExists(platformAgentId))) {
        platformAgentId = await this.d.platform.createAgent({ name: config.name, model: config.anthropic_model, system: config.system_prompt, metadata: { agw_config_id: config.id, agw_tenant_id: tenantId } });
        await this.d.configRepo.setPlatformAgent(tenantId, config.id, platformAgentId);
      }
      environmentId = input.environmentId || (await this.d.platform.ensureEnvironment('agw-default'));
      const ids = { agw_session_id: input.sessionId, agw_tenant_id: tenantId, agw_config_id: config.id };
      vaultId = await this.d.platform.createMcpVault({ displayName: `agw session ${input.sessionId}`, mcpServerUrl: input.mcpServerUrl, bearer: input.mcpBearer, metadata: ids });
      platformSession = await this.d.platform.createSession({
        platformAgentId,
        environmentId,
        vaultId,
        systemPrompt: prompt,
        mcpServerName: MCP_SERVER_NAME,
        mcpServerUrl: input.mcpServerUrl,
        askTools: input.askTools,
        userMessage: input.userMessage || undefined,
        metadata: platformMetadata(input.metadata, ids),
        title: config.name,
      });
    } catch (e) {
      await this.d.repo.end(tenantId, reserved.id, 'failed', { end_reason: `platform: ${(e as Error).message}`.slice(0, 500) });
      throw e;
    }
    // 6. the record (platform ids) and its audit record; 5. the consumer
    const session = await this.d.repo.setPlatform(tenantId, reserved.id, { anthropic_session_id: platformSession.id, platform_vault_id: vaultId, environment_id: environmentId });
    await this.d.recorder.control(session, {
      actionId: session.id,
      tool: 'managed_session',
      method: 'create',
      params: { config_id: config.id, anthropic_session_id: platformSession.id, system_prompt_hash: hash, model: config.anthropic_model, allowed_tools: allowedTools, require_human_approval: config.require_human_approval, ask_tools: input.askTools },
      decision: 'allow',
      severity: 'none',
      violations: [],
      details: { stage: 'session_created', system_prompt_hash: hash, mcp_server_url: input.mcpServerUrl, expires_at: session.expires_at.toISOString() },
      bundleRevision: bundle.revision,
    });
    await this.d.attach(session);
    this.d.onCreated?.();
    this.d.logger.info({ tenant_id: tenantId, session_id: session.id, anthropic_session_id: platformSession.id }, 'managed session created');
    return session;
  }
}
