/**
 * Resources, prompts and completions of the gateway's MCP servers (docs/mcp.md, "Methods"; docs/federation.md,
 * "Resources, prompts and completions"), federated from the tenant's upstreams through the vault's
 * FederationService, in both protocol eras (the SDK's `Server` for 2025-11-25 and earlier, modern-revision.ts
 * for 2026-07-28):
 *
 * - names: a resource, resource template or prompt `n` of upstream `u` is `u__n` (as a tool is);
 * - URIs: a resource's `uri` (and a template's `uriTemplate`, and `contents[].uri` of a read) is
 *   `agw://<upstream>/<the upstream's URI, verbatim>`: reversible by string (the upstream name holds no `/`),
 *   and a template stays a template (`agw://everything/demo://resource/dynamic/text/{resourceId}` expands to
 *   a URI that names its upstream). resources/read also takes an upstream's own URI (a `resource_link` in a
 *   tool result, which the gateway passes on unchanged): it goes to the one upstream that lists that URI or
 *   whose template matches it (refused as ambiguous when several do);
 * - resources/read and prompts/get are governed calls through the pipeline: tool = the upstream, method =
 *   `resources/read` (params `{uri}`, the upstream's own URI) or `prompts/get` (params `{prompt, arguments}`,
 *   the upstream's own prompt name: `prompt`, not `name`, which the PII guard takes for a person's name),
 *   audited as any call; a denial is a JSON-RPC error naming the violations;
 * - completion/complete is passed to the upstream that owns the referenced prompt or template (not an action);
 * - a managed session's server offers only the resources, templates and prompts whose federated name its
 *   config's allowed_tools select; a URI it reads must be one of those (listed, or matching a listed template);
 * - one upstream's own server (/api/mcp/server/upstreams/{name}) offers that upstream's only, under their own
 *   names and URIs (nothing rewritten), every read and get governed as on the tenant-wide server;
 * - resources/subscribe is not offered (the capability says `subscribe` is not supported: -32601).
 */
import { ProtocolErrorCode as ErrorCode, type Server, UriTemplate } from '@modelcontextprotocol/server';
import { jsonField, jsonOf, matchesAnyGlob, objectFromAnswerJson } from '@agw/shared';
import type { McpDeps } from './mcp-deps';
import { UPSTREAM_NAME } from '../federation/upstream-names';
import type { ToolCallOutcome } from '../pipeline/tool-call.pipeline';
import { type SessionScope, callGovernedTool } from './governed-tools';
import { type ApprovalRounds, type RoundCaller, clientAbilitiesOf } from './approval-rounds';
import { type CallRound, type RequestMeta, RpcError } from './modern-revision';

/** What the servers advertise beside tools (no resource subscriptions, no list_changed notifications: stateless). */
export const FEDERATED_CAPABILITIES = { resources: {}, prompts: {}, completions: {} };

export const URI_SCHEME = 'agw://';
const SEPARATOR = '__';
/** how long a client may reuse a list (revision 2026-07-28's ttlMs): resources are live data, prompts the catalog's */
const LIST_TTL_MS = 30_000;

export const federatedUri = (upstream: string, uri: string) => `${URI_SCHEME}${upstream}/${uri}`;

/** The upstream and its own URI of a federated URI, or undefined when `uri` is not one. */
export function parseFederatedUri(uri: string): { upstream: string; uri: string } | undefined {
  if (!uri.startsWith(URI_SCHEME)) return undefined;
  const rest = uri.slice(URI_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  const upstream = rest.slice(0, slash);
  const original = rest.slice(slash + 1);
  return UPSTREAM_NAME.test(upstream) && !upstream.includes(SEPARATOR) && original ? { upstream, uri: original } : undefined;
}

/** `<upstream>__<name>` split at its first `__` (as tools are), or undefined. */
export function splitFederatedName(name: string): { upstream: string; name: string } | undefined {
  const i = name.indexOf(SEPARATOR);
  if (i <= 0) return undefined;
  const upstream = name.slice(0, i);
  const own = name.slice(i + SEPARATOR.length);
  return UPSTREAM_NAME.test(upstream) && own ? { upstream, name: own } : undefined;
}

type Kind = 'resources' | 'resource_templates' | 'prompts';
type Entry = { upstream: string; entry: Record<string, unknown> };

/** One MCP server's view: the tenant, a session's allowed_tools, the caller (as tools/call has it). */
export interface FederatedScope {
  d: McpDeps;
  tenantId: string;
  /** a managed session's allowed_tools: only entries whose federated name they select */
  allowed?: string[];
  /** one upstream's own server: its entries only, under their own names and URIs */
  upstream?: string;
  session?: SessionScope;
  caller: { apiKeyHash?: string; agentKey?: boolean; agentId?: string; actsFor?: string; timings?: Record<string, number> };
  /** approvals a 2026-07-28 client can wait for (a queued read or get answers input_required) */
  rounds?: ApprovalRounds;
}

const invalid = (message: string) => new RpcError(ErrorCode.InvalidParams, message);

/** `_meta` key of a list: the upstreams left out of it because their own list failed ("<upstream>: <why>") */
export const UNAVAILABLE_META = 'io.agw/unavailable_upstreams';

export class FederatedMethods {
  private readonly lists = new Map<Kind, Promise<Entry[]>>();
  private readonly unavailable = new Map<Kind, string[]>();

  constructor(private readonly s: FederatedScope) {}

  /** The tenant's entries of one kind (once per request), a session's filtered by its allowed_tools. */
  private entries(kind: Kind): Promise<Entry[]> {
    let list = this.lists.get(kind);
    if (!list) {
      list = this.s.d.federation.client.listFederatedEntries({ tenant_id: this.s.tenantId, kind }).then((r) => {
        const selected = (upstream: string) => !this.s.allowed || matchesAnyGlob(this.s.allowed, `${upstream}${SEPARATOR}*`) || this.s.allowed.some((g) => g.startsWith(`${upstream}${SEPARATOR}`));
        if (r.unavailable.length) this.unavailable.set(kind, r.unavailable.filter((u) => selected(u.slice(0, u.indexOf(':'))) && (!this.s.upstream || u.startsWith(`${this.s.upstream}:`))));
        return r.entries
          .map((e) => ({ upstream: e.upstream, entry: objectFromAnswerJson(jsonOf(e, 'entry'), 'entry') }))
          .filter((e) => typeof e.entry.name === 'string' && (!this.s.upstream || e.upstream === this.s.upstream) && (!this.s.allowed || matchesAnyGlob(this.s.allowed, `${e.upstream}${SEPARATOR}${e.entry.name}`)));
      });
      this.lists.set(kind, list);
    }
    return list;
  }

  /** An entry's name and URI as this server shows them: federated, or the upstream's own on its own server. */
  private nameOf(upstream: string, name: unknown): string {
    return this.s.upstream ? String(name) : `${upstream}${SEPARATOR}${String(name)}`;
  }

  private uriOf(upstream: string, uri: string): string {
    return this.s.upstream ? uri : federatedUri(upstream, uri);
  }

  /** A name this server showed, as (upstream, the upstream's own name). */
  private splitName(name: string): { upstream: string; name: string } | undefined {
    return this.s.upstream ? (name ? { upstream: this.s.upstream, name } : undefined) : splitFederatedName(name);
  }

  async listResources(): Promise<Record<string, unknown>> {
    const resources = (await this.entries('resources')).map(({ upstream, entry }) => ({ ...entry, name: this.nameOf(upstream, entry.name), uri: this.uriOf(upstream, String(entry.uri)) }));
    return { resources, ...this.metaOf('resources') };
  }

  async listResourceTemplates(): Promise<Record<string, unknown>> {
    const resourceTemplates = (await this.entries('resource_templates')).map(({ upstream, entry }) => ({
      ...entry,
      name: this.nameOf(upstream, entry.name),
      uriTemplate: this.uriOf(upstream, String(entry.uriTemplate)),
    }));
    return { resourceTemplates, ...this.metaOf('resource_templates') };
  }

  /** `_meta` naming the upstreams whose list failed (left out of this answer), when there are any. */
  private metaOf(kind: Kind): { _meta?: Record<string, unknown> } {
    const unavailable = this.unavailable.get(kind);
    return unavailable?.length ? { _meta: { [UNAVAILABLE_META]: unavailable } } : {};
  }

  async listPrompts(): Promise<Record<string, unknown>> {
    return { prompts: (await this.entries('prompts')).map(({ upstream, entry }) => ({ ...entry, name: this.nameOf(upstream, entry.name) })) };
  }

  /**
   * The upstream a URI is read from, and its own URI: a federated URI names it; an upstream's own URI goes to
   * the one upstream that lists it or has a template matching it. In a session, only what it lists.
   */
  async resolveUri(uri: string): Promise<{ upstream: string; uri: string }> {
    // one upstream's own server: every URI is that upstream's (its own templates may be unlisted ones)
    if (this.s.upstream) return { upstream: this.s.upstream, uri };
    const federated = parseFederatedUri(uri);
    if (federated && !this.s.allowed) {
      const target = await this.s.d.federation.target(this.s.tenantId, federated.upstream, 'resources/read');
      if (!target.upstream) throw invalid(`Resource ${uri} not found: this tenant has no upstream "${federated.upstream}"`);
      return federated;
    }
    const [resources, templates] = await Promise.all([this.entries('resources'), this.entries('resource_templates')]);
    const owns = (e: Entry, own: string) => e.entry.uri === own || (typeof e.entry.uriTemplate === 'string' && matchesTemplate(e.entry.uriTemplate, own));
    const candidates = [...resources, ...templates].filter((e) => (federated ? e.upstream === federated.upstream && owns(e, federated.uri) : owns(e, uri)));
    const owners = [...new Set(candidates.map((e) => e.upstream))];
    if (owners.length === 1) return { upstream: owners[0], uri: federated?.uri ?? uri };
    if (owners.length > 1) throw invalid(`Resource ${uri} is offered by several upstreams (${owners.join(', ')}): read ${URI_SCHEME}<upstream>/${uri}`);
    throw invalid(`Resource ${uri} not found${this.s.allowed ? ' among the resources this managed session may read (its allowed_tools)' : ' (read a URI resources/list or a template of resources/templates/list gives)'}`);
  }

  /** resources/read: governed (tool = the upstream, method resources/read, params {uri}); contents' URIs federated. */
  async readResource(uri: string, round?: CallRound): Promise<Record<string, unknown>> {
    if (typeof uri !== 'string' || !uri) throw invalid('resources/read needs params.uri (a string)');
    const at = await this.resolveUri(uri);
    const result = await this.governed(at.upstream, 'resources/read', { uri: at.uri }, round);
    if (result.resultType === 'input_required') return result;
    const contents = Array.isArray(result.contents) ? (result.contents as Array<Record<string, unknown>>).map((c) => (typeof c.uri === 'string' ? { ...c, uri: this.uriOf(at.upstream, c.uri) } : c)) : result.contents;
    return { ...result, contents };
  }

  /** prompts/get: a listed (active) prompt, governed (method prompts/get, params {prompt, arguments}). */
  async getPrompt(name: string, args: Record<string, unknown> | undefined, round?: CallRound): Promise<Record<string, unknown>> {
    if (typeof name !== 'string' || !name) throw invalid('prompts/get needs params.name (a string)');
    const split = this.splitName(name);
    const listed = split && (await this.entries('prompts')).some((e) => e.upstream === split.upstream && e.entry.name === split.name);
    if (!split || !listed) throw invalid(`Prompt ${name} not found (an unknown or quarantined prompt is not listed by prompts/list)`);
    return this.governed(split.upstream, 'prompts/get', { prompt: split.name, arguments: args ?? {} }, round);
  }

  /** completion/complete: passed to the upstream owning the ref, in its own names (not an action). */
  async complete(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const ref = (params.ref ?? {}) as Record<string, unknown>;
    let upstream: string;
    let own: Record<string, unknown>;
    if (ref.type === 'ref/prompt') {
      const split = typeof ref.name === 'string' ? this.splitName(ref.name) : undefined;
      if (!split || !(await this.entries('prompts')).some((e) => e.upstream === split.upstream && e.entry.name === split.name)) throw invalid(`Prompt ${String(ref.name)} not found`);
      upstream = split.upstream;
      own = { type: 'ref/prompt', name: split.name };
    } else if (ref.type === 'ref/resource') {
      const uri = String(ref.uri ?? '');
      const federated = this.s.upstream ? { upstream: this.s.upstream, uri } : parseFederatedUri(uri);
      const templates = await this.entries('resource_templates');
      const owner = templates.filter((e) => (federated ? e.upstream === federated.upstream && e.entry.uriTemplate === federated.uri : e.entry.uriTemplate === uri));
      if (owner.length !== 1) throw invalid(owner.length ? `Resource template ${uri} is offered by several upstreams: use ${URI_SCHEME}<upstream>/${uri}` : `Resource template ${uri} not found`);
      upstream = owner[0].upstream;
      own = { type: 'ref/resource', uri: owner[0].entry.uriTemplate };
    } else {
      throw invalid('completion/complete needs params.ref of type ref/prompt or ref/resource');
    }
    const r = await this.s.d.federation.client.completeFederated({ tenant_id: this.s.tenantId, upstream, ...jsonField('params', { ...params, ref: own }) });
    return objectFromAnswerJson(jsonOf(r, 'result'), 'result');
  }

  /**
   * One governed call of the upstream, as the pipeline decides it; anything but an executed answer is a
   * JSON-RPC error, except a queued one for a 2026-07-28 client that can open a URL: `input_required`
   * (approval-rounds.ts), whose retry gets the result of the approved read or get.
   */
  private async governed(upstream: string, method: string, params: Record<string, unknown>, round?: CallRound): Promise<Record<string, unknown>> {
    const { d, tenantId, session, caller, rounds } = this.s;
    const { agentId, ...key } = caller;
    const who = { tenantId, keyHash: caller.apiKeyHash ?? null, agentId: session?.agentId ?? agentId ?? 'mcp-client' };
    const bound = `${method} ${upstream}`;
    if (rounds && round?.requestState !== undefined) return this.retried(rounds, who, bound, method, params, round.requestState, round.inputResponses);
    const call = { method, params, agent_id: agentId ?? 'mcp-client', agent_type: 'mcp', agent_version: '1.0.0' };
    const o = await callGovernedTool(d, tenantId, upstream, call, session, key);
    if (o.kind === 'pending' && rounds && round && clientAbilitiesOf(round.meta).urlElicitation) return rounds.inputRequired(who, bound, params, o.action_id);
    return resultOf(method, o);
  }

  /** The retry of a queued read or get: its result once approved, input_required while it waits, else an error. */
  private async retried(rounds: ApprovalRounds, who: RoundCaller, bound: string, method: string, params: Record<string, unknown>, state: string, inputResponses?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const standing = await rounds.retried(who, state, bound, params, inputResponses);
    if (standing.kind === 'dismissed') throw new RpcError(ErrorCode.InvalidRequest, rounds.queuedText(standing.actionId), { status: 'pending', action_id: standing.actionId });
    if (standing.kind === 'waiting') return rounds.inputRequired(who, bound, params, standing.row.action_id, true);
    const id = standing.row.action_id;
    if (standing.kind === 'approved_direct') throw new RpcError(ErrorCode.InternalError, `The gateway approved ${method} (action ${id}) but did not run it`, { status: 'approved', action_id: id });
    if (standing.result.isError === true) {
      const text = (standing.result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? `Action ${id} did not run`;
      throw new RpcError(ErrorCode.InvalidRequest, text, { status: standing.row.status, action_id: id });
    }
    return standing.result;
  }

  /** The answer of a method this module serves (modern-revision.ts), or undefined for another method. */
  async answer(method: string, params: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const list = (r: Record<string, unknown>) => ({ ...r, ttlMs: LIST_TTL_MS, cacheScope: 'private' });
    switch (method) {
      case 'resources/list':
        return list(await this.listResources());
      case 'resources/templates/list':
        return list(await this.listResourceTemplates());
      case 'prompts/list':
        return list(await this.listPrompts());
      case 'resources/read':
        return this.readResource(params.uri as string, roundOf(params));
      case 'prompts/get':
        return this.getPrompt(params.name as string, params.arguments as Record<string, unknown> | undefined, roundOf(params));
      case 'completion/complete':
        return this.complete(params);
      default:
        return undefined;
    }
  }

  /** The same methods on the SDK's Server (revisions 2025-11-25 and earlier). */
  register(server: Server): void {
    server.setRequestHandler('resources/list', async () => (await this.listResources()) as never);
    server.setRequestHandler('resources/templates/list', async () => (await this.listResourceTemplates()) as never);
    server.setRequestHandler('prompts/list', async () => (await this.listPrompts()) as never);
    server.setRequestHandler('resources/read', async (r) => (await this.readResource(r.params.uri)) as never);
    server.setRequestHandler('prompts/get', async (r) => (await this.getPrompt(r.params.name, r.params.arguments)) as never);
    server.setRequestHandler('completion/complete', async (r) => (await this.complete(r.params as unknown as Record<string, unknown>)) as never);
  }
}

/** What a 2026-07-28 request carries besides its params: its `_meta`, and a retry's state and answers. */
function roundOf(params: Record<string, unknown>): CallRound {
  const { requestState, inputResponses } = params;
  if (requestState !== undefined && typeof requestState !== 'string') throw invalid('params.requestState must be the string an earlier answer gave');
  if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) throw invalid('params.inputResponses must be an object');
  return { meta: params._meta as RequestMeta, ...(requestState !== undefined ? { requestState } : {}), ...(inputResponses ? { inputResponses: inputResponses as Record<string, unknown> } : {}) };
}

function matchesTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

/**
 * A decision as a JSON-RPC answer: allowed and executed -> the upstream's result (the action id in `_meta`);
 * allowed but failed -> -32603 with the upstream's reason; pending -> -32600 saying it waits for a human
 * (GET /api/actions/{id}); denied -> -32600 naming the violations (data: status, action_id, violations).
 */
export function resultOf(method: string, o: ToolCallOutcome): Record<string, unknown> {
  const meta = { 'io.agw/action_id': o.action_id };
  if (o.kind === 'allowed') {
    const r = o.execution_result;
    const body = (r?.body ?? null) as Record<string, unknown> | null;
    if (o.mcp_result && r?.status_code === 200 && body && typeof body === 'object' && !('error' in body && Object.keys(body).length === 1)) {
      return { ...body, _meta: { ...((body._meta as object) ?? {}), ...meta } };
    }
    const why = typeof body?.error === 'string' ? body.error : `status ${r?.status_code ?? 'none'}`;
    throw new RpcError(ErrorCode.InternalError, `The gateway allowed ${method} (action ${o.action_id}) but the upstream failed: ${why}`, { status: 'allowed', action_id: o.action_id });
  }
  if (o.kind === 'pending') {
    throw new RpcError(ErrorCode.InvalidRequest, `${o.message} Once a human approves it, the gateway runs it; its status and result: GET /api/actions/${o.action_id}.`, { status: 'pending', action_id: o.action_id });
  }
  throw new RpcError(ErrorCode.InvalidRequest, `Denied by the gateway (action ${o.action_id}): ${o.violations.join('; ')}${o.message ? ` (${o.message})` : ''}`, {
    status: 'denied',
    action_id: o.action_id,
    violations: o.violations,
    severity: o.severity,
    alert_tier: o.alert_tier,
  });
}
