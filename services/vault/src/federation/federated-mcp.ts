/**
 * Resources, prompts and completions of a tenant's upstream MCP servers (docs/federation.md, "Resources,
 * prompts and completions"), beside the tools of federation.ts:
 *
 * - prompts are pinned and scanned like tools: each prompt an upstream lists is stored in the tool catalog
 *   as the definition `prompt:<name>` (a name no tool can have: `:` is not a tool-name character): the
 *   whole prompt as the upstream wrote it (description, arguments, icons, `_meta`, every field in its key
 *   order; only its name prefixed in place, and an `inputSchema` the catalog's rows carry), so the
 *   pinning plan, the poisoning scanner, the
 *   quarantine and a human's approval (POST /api/upstreams/{name}/tools/prompt:{prompt}/approve) are the
 *   tools' own; only active prompts are listed, and only an active prompt may be got;
 * - resources and resource templates are the upstream's data, not instructions a model is given as a
 *   tool's definition is: they are read live from every connected upstream that offers them, not pinned;
 * - `resources/read` and `prompts/get` are governed calls (tool = the upstream, method = `resources/read`
 *   with params `{uri}` / `prompts/get` with params `{prompt, arguments}`, docs/policy.md) executed here
 *   through the upstream's connection, masked as tool results. The prompt's name is `prompt`, not MCP's
 *   `name`: a field called `name` is a person's name to the PII guard (encrypted in the audit, and
 *   `pii_detected` for the policy, which would deny every prompts/get where PII is not allowed);
 * - `completion/complete` is passed to the tenant's upstream that owns the ref (not an action).
 */
import { type Logger, NotFoundError } from '@agw/shared';
import type { Prompt } from '@modelcontextprotocol/client';
import { type ToolDefinition, isJsonObject } from './tool-definition';
import { MAX_TOOL_DEPTH, type UpstreamConnections, type UpstreamEndpoint, nestsDeeperThan } from './upstream-connections';
import type { UpstreamRepository, UpstreamRow } from './upstream.repository';

/** The catalog name of an upstream's prompt (a tool name never holds `:`). */
export const PROMPT_PREFIX = 'prompt:';
/** The governed methods of a federated upstream other than its tools (docs/policy.md). */
export const RESOURCE_READ = 'resources/read';
export const PROMPT_GET = 'prompts/get';
/** what a catalog row carries beside the prompt (a tool definition's required field), dropped when it is listed */
const ROW_SCHEMA = { type: 'object' };

/**
 * At most this many pages of one list are read, at most this many entries kept per upstream and list, at
 * most FEDERATION_MAX_SYNC_BYTES of one upstream's list (its entries' JSON), and at most TOTAL_BYTES of a
 * tenant's list across its upstreams (the gRPC answer to the gateway stays well under its 16 MB cap).
 */
const MAX_PAGES = 20;
const MAX_ENTRIES = 1000;
export const TOTAL_BYTES = 8 * 1024 * 1024;
/** A prompt's federated name follows the tool rule (MCP name characters, 1-128). */
const FEDERATED_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export type EntryKind = 'resources' | 'resource_templates' | 'prompts';

/** A prompt as the definition the catalog pins: the whole prompt, its name `prompt:<name>` in place. */
export function promptDefinition(p: Prompt): ToolDefinition {
  return { ...(p as Record<string, unknown>), name: `${PROMPT_PREFIX}${p.name}`, inputSchema: ROW_SCHEMA } as ToolDefinition;
}

/** The prompt a pinned definition describes, as the upstream wrote it (its own name, in place). */
export function promptOf(def: Record<string, unknown>): Prompt {
  const { inputSchema: _row, ...prompt } = def;
  return { ...prompt, name: String(def.name ?? '').slice(PROMPT_PREFIX.length) } as Prompt;
}

export const isPromptName = (catalogName: string) => catalogName.startsWith(PROMPT_PREFIX);

/**
 * The prompts an upstream lists, as definitions for the pinning plan (empty when it has no prompts
 * capability, or the list fails: the prompts it had become absent until the next read, as tools do).
 * A prompt whose federated name would not be an MCP name, or would be ambiguous (a leading `_`), is skipped.
 */
export async function listedPromptDefinitions(connections: UpstreamConnections, e: UpstreamEndpoint, logger: Logger): Promise<ToolDefinition[]> {
  try {
    const prompts = await connections.request(e, async (client, options) => {
      if (!client.getServerCapabilities()?.prompts) return [] as Prompt[];
      return pages((cursor) => client.listPrompts(cursor ? { cursor } : {}, options).then((r) => ({ items: r.prompts, next: r.nextCursor })), connections.definitionLimits.maxSyncBytes);
    });
    // a prompt's pinned definition is bounded as a tool's (FEDERATION_MAX_TOOL_BYTES, MAX_TOOL_DEPTH): a larger or deeper one is not kept
    return prompts
      .filter((p) => typeof p.name === 'string' && !p.name.startsWith('_') && FEDERATED_NAME.test(`${e.name}__${p.name}`) && !nestsDeeperThan(p, MAX_TOOL_DEPTH))
      .map(promptDefinition)
      .filter((def) => Buffer.byteLength(JSON.stringify(def)) <= connections.definitionLimits.maxToolBytes);
  } catch (err) {
    logger.warn({ tenantId: e.tenantId, upstream: e.name, err: (err as Error).message }, 'prompts/list of an upstream failed');
    return [];
  }
}

/** The pages of one list, within MAX_PAGES, MAX_ENTRIES and `budget` bytes of entries' JSON (the entry that would go over is the first left out). */
async function pages<T>(read: (cursor?: string) => Promise<{ items: T[]; next?: string }>, budget: number): Promise<T[]> {
  const out: T[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await read(cursor);
    for (const item of r.items ?? []) {
      bytes += Buffer.byteLength(JSON.stringify(item) ?? '');
      if (bytes > budget || out.length === MAX_ENTRIES) return out;
      out.push(item);
    }
    cursor = r.next;
    if (!cursor) break;
  }
  return out;
}

export interface FederatedMcpDeps {
  repo: UpstreamRepository;
  connections: UpstreamConnections;
  /** the connection endpoint of an upstream row (Federation.endpoint) */
  endpoint(tenantId: string, row: UpstreamRow): UpstreamEndpoint;
  logger: Logger;
}

export class FederatedMcp {
  constructor(private readonly d: FederatedMcpDeps) {}

  /** The tenant's resources, resource templates (live from each connected upstream) or active prompts (the catalog). */
  async entries(tenantId: string, kind: EntryKind): Promise<{ entries: Array<{ upstream: string; entry: unknown }>; unavailable: string[] }> {
    if (kind === 'prompts') {
      const rows = await this.d.repo.activeTools(tenantId);
      return { entries: rows.filter((r) => isPromptName(r.name) && r.pinned).map((r) => ({ upstream: r.upstream, entry: promptOf(r.pinned as Record<string, unknown>) })), unavailable: [] };
    }
    const upstreams = (await this.d.repo.list(tenantId)).filter((u) => u.status === 'connected');
    const unavailable: string[] = [];
    const lists = await Promise.all(
      upstreams.map(async (u) => {
        const row = await this.d.repo.forConnection(tenantId, u.name);
        if (!row) return [];
        try {
          const items = await this.d.connections.request(this.d.endpoint(tenantId, row), async (client, options) => {
            if (!client.getServerCapabilities()?.resources) return [] as unknown[];
            const budget = this.d.connections.definitionLimits.maxSyncBytes;
            return kind === 'resources'
              ? pages<unknown>((cursor) => client.listResources(cursor ? { cursor } : {}, options).then((r) => ({ items: r.resources, next: r.nextCursor })), budget)
              : pages<unknown>((cursor) => client.listResourceTemplates(cursor ? { cursor } : {}, options).then((r) => ({ items: r.resourceTemplates, next: r.nextCursor })), budget);
          });
          return items.map((entry) => ({ upstream: u.name, entry }));
        } catch (err) {
          unavailable.push(`${u.name}: ${(err as Error).message}`.slice(0, 500));
          return [];
        }
      }),
    );
    // the tenant's list within TOTAL_BYTES: an upstream whose entries would go over is left out, and named
    const entries: Array<{ upstream: string; entry: unknown }> = [];
    let total = 0;
    for (const list of lists) {
      const size = list.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.entry) ?? ''), 0);
      if (list.length && total + size > TOTAL_BYTES) {
        unavailable.push(`${list[0].upstream}: left out, the tenant's ${kind} are larger than ${TOTAL_BYTES} bytes together`);
        continue;
      }
      total += size;
      entries.push(...list);
    }
    return { entries, unavailable };
  }

  /** completion/complete on the tenant's upstream (a prompt ref must name an active prompt). */
  async complete(tenantId: string, upstream: string, params: Record<string, unknown>): Promise<unknown> {
    const ref = isJsonObject(params.ref) ? params.ref : {};
    const row = ref.type === 'ref/prompt' ? await this.d.repo.forCall(tenantId, upstream, `${PROMPT_PREFIX}${String(ref.name ?? '')}`) : await this.d.repo.forConnection(tenantId, upstream);
    if (!row) throw new NotFoundError(`Upstream "${upstream}" not found`);
    if (ref.type === 'ref/prompt' && (row as { tool_state?: string | null }).tool_state !== 'active') throw new NotFoundError(`Upstream ${upstream} has no active prompt "${String(ref.name ?? '')}"`);
    // the agent's client's `_meta` (its revision envelope, a progress token) is its request's, not the vault's
    const { _meta: _clientMeta, ...own } = params;
    return this.d.connections.request(this.d.endpoint(tenantId, row), (client, options) => client.complete(own as never, options));
  }

  /** An allowed resources/read or prompts/get on the upstream (params as the policy saw them). */
  run(tenantId: string, row: UpstreamRow, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const e = this.d.endpoint(tenantId, row);
    return this.d.connections.request(e, async (client, options) =>
      method === RESOURCE_READ
        ? ((await client.readResource({ uri: String(params.uri ?? '') }, options)) as Record<string, unknown>)
        : ((await client.getPrompt({ name: String(params.prompt ?? ''), ...(isJsonObject(params.arguments) ? { arguments: params.arguments as Record<string, string> } : {}) }, options)) as Record<string, unknown>),
    );
  }
}
