/**
 * AgentPlatform through the official `@anthropic-ai/sdk` (beta `managed-agents-2026-04-01`, which the
 * SDK's beta resources send by themselves), typed calls only. The gateway is registered per session as a
 * remote MCP server whose toolset's default permission policy is `always_allow` (the gateway decides every
 * governed call), with `always_ask` for the tools a `require_human_approval` pattern may match: the
 * platform then stops before such a call and the answer (`user.tool_confirmation`) comes from the tenant's
 * approval queue (docs/managed.md, "Tools that ask a human").
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaManagedAgentsMCPToolsetParams } from '@anthropic-ai/sdk/resources/beta/agents/agents';
import type { BetaManagedAgentsUserToolConfirmationEventParams } from '@anthropic-ai/sdk/resources/beta/sessions/events';
import { DependencyUnavailableError } from '@agw/shared';
import type { AgentPlatform, PlatformEvent, PlatformSessionSpec } from './agent-platform';

export interface AnthropicPlatformOptions {
  apiKey: string;
  baseURL?: string;
  /** created once per name and remembered (e.g. in Postgres) so restarts reuse it; `put` replaces */
  environments: { get(key: string): Promise<string | undefined>; put(key: string, id: string): Promise<void> };
}

/** Platform errors to the taxonomy: the platform is a dependency, so its failure is a 502 at the edge. */
async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const status = (e as { status?: number }).status;
    const message = (e as { message?: string }).message ?? String(e);
    throw new DependencyUnavailableError(`Agent platform ${what} failed${status ? ` (HTTP ${status})` : ''}: ${message.slice(0, 300)}`, { cause: e });
  }
}

const isNotFound = (e: unknown) => (e as { status?: number }).status === 404;

export function createAnthropicPlatform(o: AnthropicPlatformOptions): AgentPlatform {
  const client = new Anthropic({ apiKey: o.apiKey, baseURL: o.baseURL, maxRetries: 2, timeout: 30_000 });
  const beta = client.beta;
  // ids this process has seen the platform answer for (a remembered id can outlive the platform's copy)
  const confirmed = new Set<string>();
  /** true when the platform knows `id`; a 404 is false, anything else an error */
  const exists = async (id: string, what: string, get: () => Promise<unknown>) => {
    if (confirmed.has(id)) return true;
    try {
      await get();
    } catch (e) {
      if (isNotFound(e)) return false;
      throw new DependencyUnavailableError(`Agent platform ${what} lookup failed: ${(e as Error).message}`, { cause: e });
    }
    confirmed.add(id);
    return true;
  };
  return {
    createAgent: (spec) =>
      call('agent creation', async () => {
        const id = (await beta.agents.create({ name: spec.name, model: spec.model, system: spec.system, metadata: spec.metadata })).id;
        confirmed.add(id);
        return id;
      }),

    agentExists: (id) => exists(id, 'agent', () => beta.agents.retrieve(id)),

    async ensureEnvironment(name) {
      const key = `environment:${name}`;
      const known = await o.environments.get(key);
      if (known && (await exists(known, 'environment', () => beta.environments.retrieve(known)))) return known;
      const env = await call('environment creation', () => beta.environments.create({ name }));
      confirmed.add(env.id);
      await o.environments.put(key, env.id);
      return env.id;
    },

    createMcpVault: (spec) =>
      call('vault creation', async () => {
        const vault = await beta.vaults.create({ display_name: spec.displayName, metadata: spec.metadata });
        await beta.vaults.credentials.create(vault.id, {
          display_name: 'agw-governance-gateway',
          auth: { type: 'static_bearer', token: spec.bearer, mcp_server_url: spec.mcpServerUrl },
        });
        return vault.id;
      }),

    createSession: (spec: PlatformSessionSpec) =>
      call('session creation', async () => {
        const toolset: BetaManagedAgentsMCPToolsetParams = {
          type: 'mcp_toolset',
          mcp_server_name: spec.mcpServerName,
          default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
          ...(spec.askTools.length ? { configs: spec.askTools.map((name) => ({ name, permission_policy: { type: 'always_ask' as const } })) } : {}),
        };
        const session = await beta.sessions.create({
          agent: {
            type: 'agent_with_overrides',
            id: spec.platformAgentId,
            system: spec.systemPrompt,
            mcp_servers: [{ type: 'url', name: spec.mcpServerName, url: spec.mcpServerUrl }],
            tools: [{ type: 'agent_toolset_20260401' }, toolset],
          },
          environment_id: spec.environmentId,
          vault_ids: [spec.vaultId],
          metadata: spec.metadata,
          title: spec.title,
          ...(spec.userMessage ? { initial_events: [{ type: 'user.message', content: [{ type: 'text', text: spec.userMessage }] }] } : {}),
        });
        return { id: session.id, status: session.status };
      }),

    interrupt: (sessionId) =>
      call('interrupt', async () => {
        await beta.sessions.events.send(sessionId, { events: [{ type: 'user.interrupt' }] });
      }),

    confirmToolUse: (sessionId, c) =>
      call('tool confirmation', async () => {
        const event: BetaManagedAgentsUserToolConfirmationEventParams = {
          type: 'user.tool_confirmation',
          tool_use_id: c.toolUseId,
          result: c.result,
          ...(c.result === 'deny' && c.denyMessage ? { deny_message: c.denyMessage } : {}),
        };
        await beta.sessions.events.send(sessionId, { events: [event] });
      }),

    listEvents: (sessionId) =>
      call('event list', async () => {
        const out: PlatformEvent[] = [];
        for await (const e of beta.sessions.events.list(sessionId, { limit: 1000 })) out.push(e as unknown as PlatformEvent);
        return out;
      }),

    openStream: (sessionId, so) =>
      call('event stream', async () => {
        // the platform has no replay (the consumer backfills from the event list); Last-Event-ID is sent for proxies that do
        const headers = so.lastEventId ? { 'Last-Event-ID': so.lastEventId } : undefined;
        const stream = await beta.sessions.events.stream(sessionId, {}, { signal: so.signal, headers, timeout: 24 * 3600_000, maxRetries: 0 });
        return stream as unknown as AsyncIterable<PlatformEvent>;
      }),
  };
}

/** The platform when no ANTHROPIC_API_KEY is configured: configs work, sessions answer 502 saying why. */
export function unconfiguredPlatform(): AgentPlatform {
  const no = async (): Promise<never> => {
    throw new DependencyUnavailableError('Agent platform not configured: set ANTHROPIC_API_KEY (npm start runs a local stand-in when it is unset)');
  };
  return { createAgent: no, agentExists: no, ensureEnvironment: no, createMcpVault: no, createSession: no, interrupt: no, confirmToolUse: no, listEvents: no, openStream: no };
}
