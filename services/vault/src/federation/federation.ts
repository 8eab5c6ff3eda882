/**
 * Federation of a tenant's upstream MCP servers (docs/federation.md): registration (the credential sealed
 * in the HSM), discovery of the tools with their pinned definitions (tool-pinning.ts), the catalog the
 * gateway's MCP server lists, the target check of a governed call, and the execution of an allowed call on
 * the upstream. Transport-free; the gRPC adapter is grpc/federation.grpc.ts.
 *
 * Every change of a tenant's catalog calls `changed(tenantId)` (the gateway's caches follow it over NATS);
 * every quarantine is recorded by `quarantines` (a control_plane audit record, the webhook
 * `tool.quarantined`).
 */
import { ConflictError, ForbiddenError, InputError, type Logger, NotFoundError, RateLimitError, TENANT_CACHE_MS, TenantCache, matchesAnyGlob } from '@agw/shared';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { SealedData } from '../hsm/hsm-backend';
import type { Quarantine } from './tool-pinning';
import { approvalWrite, planPinning } from './tool-pinning';
import { type ToolDefinition, definitionDiff, definitionOf, offeredForm, taskSupportOf } from './tool-definition';
import type { UpstreamCredentials } from './upstream-credentials';
import { type CredentialInput, UpstreamAuthError, validateCredential } from './upstream-credentials';
import { type CallRound, type InputRequiredAnswer, MAX_TOOL_DEPTH, UpstreamCallError, type UpstreamConnections, type UpstreamEndpoint } from './upstream-connections';
import type { RetainedTools, ToolRow, UpstreamMeta, UpstreamRepository, UpstreamRow } from './upstream.repository';
import { SyncBudget } from './sync-budget';
import { AuthorizationRequired, type UpstreamOAuth } from './upstream-oauth';
import type { GrantMeta } from './oauth-grants.repository';
import { FederatedMcp, PROMPT_GET, PROMPT_PREFIX, RESOURCE_READ, isPromptName, listedPromptDefinitions } from './federated-mcp';

/**
 * A registered upstream's name: 1-64 of `a-z 0-9 _ -`, starting and ending with a letter or digit, and
 * (checked beside it) without `__`. With tool names that never start with `_` (`federatedToolProblem`), a federated
 * name `<upstream>__<tool>` is unique and splits at its first `__`: the upstream holds no `__` and does not
 * end with `_`, and the tool does not start with `_`, so no `__` begins before the separator, nor at its
 * second character. The same rule makes the glob `a__*` select upstream `a` only (docs/federation.md,
 * "Naming"). Upstreams registered before it may end with `_` or `-`; their tools still cannot collide
 * (the tool rule alone already prevents it).
 */
export const UPSTREAM_NAME = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/;
/** A federated tool's MCP name: MCP's tool-name characters, 1-128 (SEP-986). */
const FEDERATED_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
export const SEPARATOR = '__';
const TRANSPORTS = ['streamable_http', 'sse'] as const;
const MAX_GLOBS = 64;

export const federatedName = (upstream: string, tool: string) => `${upstream}${SEPARATOR}${tool}`;

/** Why `name` cannot name a new upstream, or undefined when it can. */
export function upstreamNameProblem(name: string): string | undefined {
  if (UPSTREAM_NAME.test(name) && !name.includes(SEPARATOR)) return undefined;
  return 'name is 1-64 characters of a-z 0-9 _ -, starting and ending with a letter or digit, without "__" (the separator of federated tool names)';
}

/** Why an upstream's tool is not federated under `upstream`, or undefined when it is. */
export function federatedToolProblem(upstream: string, tool: string): 'leading_underscore' | 'invalid_name' | undefined {
  if (tool.startsWith('_')) return 'leading_underscore'; // `a` + `_b` would read as `a_` + `b`
  if (!FEDERATED_NAME.test(federatedName(upstream, tool))) return 'invalid_name';
  return undefined;
}

/**
 * Who asks for a step that only a human may take where the tenant's `approvals_require_human` is on, as
 * the gateway authenticated the caller (federation.proto `HumanGate`).
 */
export interface HumanGate {
  /** a signed-in user's session, not one made from an API key */
  human: boolean;
  /** the tenant's approvals_require_human */
  requireHuman: boolean;
  /** how a refusal names the caller */
  caller: string;
}

/** A caller nobody described: not a human, and the gate on. */
export const UNKNOWN_CALLER: HumanGate = { human: false, requireHuman: true, caller: 'this caller' };

/** What DELETE answers: the upstream as it was, and what its name keeps (or what a human discarded). */
export interface DeletedUpstream {
  name: string;
  view?: UpstreamView;
  retained_tools: number;
  discarded_tools: number;
}

export interface RegisterUpstreamInput {
  name: string;
  url: string;
  transport?: string;
  credential?: CredentialInput;
  include?: string[];
  exclude?: string[];
  description?: string;
  tool_approval?: string;
  timeout_ms?: number;
  /** an oauth upstream: shared (one connection for the tenant, the default) or per_user */
  connection?: string;
  /** an oauth upstream: the gateway's callback, and the URL of its Client ID Metadata Document */
  oauth_redirect_uri?: string;
  oauth_client_metadata_url?: string;
}

/** What a federated call acts for: the human behind the agent (a per_user upstream uses their connection). */
export interface CallContext {
  userId?: string;
  /** a tools/call of an MCP client: a relayed multi round-trip, the caller's cancellation (upstream-connections.ts) */
  round?: CallRound;
}

/** An upstream as the API shows it (never its credential's value). */
export interface UpstreamView extends UpstreamMeta {
  /** an oauth upstream: its connections (who, when, until when; never a token) */
  connections?: GrantMeta[];
  tool_count: number;
  quarantined_count: number;
  tools?: ToolRow[];
}

export interface ConnectionRecorder {
  record(tenantId: string, upstream: string, e: { event: 'connected' | 'authorization_required' | 'disconnected'; user_id: string; by?: string; reason?: string }): Promise<void>;
}

export interface QuarantineRecorder {
  /** `suppressed`: quarantines of this tool not recorded since its last record (the alert window) */
  record(tenantId: string, upstream: string, q: Quarantine, suppressed?: number): Promise<void>;
}

/** What one tenant's upstreams may make the vault do (docs/federation.md, "Connections and limits"). */
export interface FederationLimits {
  /** most upstreams one tenant registers */
  maxUpstreams: number;
  /** reads of one upstream's tools: a burst of this many, then one per syncIntervalMs */
  syncBurst: number;
  syncIntervalMs: number;
  /** at most one quarantine record (and webhook) per tool in this window; the others are counted */
  quarantineAlertWindowMs: number;
}

/** What a governed call of (tool, method) meets. */
export interface ToolTarget {
  upstream: boolean;
  executable: boolean;
  /** an upstream that needs OAuth: shared | per_user */
  connection?: string;
  /** an executable tool: the SHA-256 (hex) of its pinned definition, which the call's record names */
  definition_sha256?: string;
  violation?: string;
  message?: string;
}

/** A governed call's upstream, read once: the row (with its sealed credential), the tool, what it meets. */
export interface FederatedTarget {
  row: UpstreamRow;
  method: string;
  target: ToolTarget;
}

export interface FederatedCallResult {
  /** executed: the upstream answered (its isError included); otherwise why nothing came back */
  outcome: 'executed' | 'quarantined' | UpstreamCallError['outcome'];
  /** a relayed round (ctx.round.relay): the upstream's own `input_required` answer */
  result: CallToolResult | InputRequiredAnswer | { error: string; code?: string; connect_url?: string };
  statusCode: number;
  executionMs: number;
}

export interface FederationDeps {
  repo: UpstreamRepository;
  credentials: UpstreamCredentials;
  connections: UpstreamConnections;
  /** URL rules of an upstream or token endpoint (scheme, no userinfo, https outside local): the URL or an Error */
  parseUrl(url: string): string;
  /** the tenant's egress rule on the URL's host: throws with the reason when refused */
  checkAddress(tenantId: string, url: string): Promise<void>;
  quarantines: QuarantineRecorder;
  /** upstream OAuth connections (docs/federation.md, "Upstreams that need OAuth") */
  oauth: UpstreamOAuth;
  /** a connection was made, lost (refused or revoked by the upstream) or removed: a control_plane record (and the webhook of a lost one) */
  connectionEvents: ConnectionRecorder;
  changed(tenantId: string): void;
  logger: Logger;
  limits: FederationLimits;
}

/** At most this many tools' alert windows are remembered (the oldest dropped first). */
const MAX_ALERT_KEYS = 100_000;

export class Federation {
  /** list_changed reads due per upstream: running (a notification during it asks for one more) or waiting for a token */
  private readonly due = new Map<string, { again: boolean; timer?: NodeJS.Timeout }>();

  /** how often each upstream's tools may be read */
  private readonly syncBudget: SyncBudget;

  /** the last quarantine record of each tool (`tenant|upstream|tool`), and how many were not recorded since */
  private readonly alerted = new Map<string, { at: number; suppressed: number }>();

  /** governed calls' targets, per tenant; dropped on every catalog change here and, over NATS, in other replicas */
  private readonly targets = new TenantCache<FederatedTarget | undefined>(TENANT_CACHE_MS);

  /** resources, prompts and completions of the upstreams (federated-mcp.ts) */
  readonly mcp: FederatedMcp;

  constructor(private readonly d: FederationDeps) {
    this.mcp = new FederatedMcp({ repo: d.repo, connections: d.connections, endpoint: (tenantId, row) => this.endpoint(tenantId, row), logger: d.logger });
    this.syncBudget = new SyncBudget({ burst: d.limits.syncBurst, intervalMs: d.limits.syncIntervalMs });
  }

  /** Another replica changed the tenant's catalog (the NATS change topic `upstreams`). */
  invalidate(tenantId: string | undefined): void {
    this.targets.invalidate(tenantId);
  }

  private changed(tenantId: string): void {
    this.targets.invalidate(tenantId);
    this.d.changed(tenantId);
  }

  /**
   * Registers an upstream and reads its tools. A name that keeps tools of a deleted upstream gets them
   * back before that read, so their pins apply (a changed tool is quarantined); where the tenant's
   * approvals_require_human is on, only a signed-in human may do that (`gate`, 403 otherwise).
   */
  async register(tenantId: string, input: RegisterUpstreamInput, gate: HumanGate = UNKNOWN_CALLER): Promise<UpstreamView> {
    const name = input.name ?? '';
    const nameProblem = upstreamNameProblem(name);
    if (nameProblem) throw InputError.at(['name'], nameProblem, 'string_pattern_mismatch');
    const transport = input.transport || 'streamable_http';
    if (!(TRANSPORTS as readonly string[]).includes(transport)) throw InputError.at(['transport'], `transport must be one of ${TRANSPORTS.join(', ')}`, 'enum');
    let url: string;
    try {
      url = this.d.parseUrl(input.url ?? '');
      await this.d.checkAddress(tenantId, url);
    } catch (e) {
      throw InputError.at(['url'], (e as Error).message, 'value_error');
    }
    const include = checkGlobs(input.include, 'include');
    const exclude = checkGlobs(input.exclude, 'exclude');
    if (input.description && input.description.length > 1024) throw InputError.at(['description'], 'description is at most 1,024 characters', 'string_too_long');
    if (input.timeout_ms !== undefined && input.timeout_ms !== 0 && (!Number.isInteger(input.timeout_ms) || input.timeout_ms < 100 || input.timeout_ms > 120_000)) {
      throw InputError.at(['timeout_ms'], 'timeout_ms is 100-120000', 'value_error');
    }
    // refused before anything is spent; checked again in the insert's transaction (a deletion may land between)
    if (!(await this.d.repo.get(tenantId, name))) admitRetained(name, await this.d.repo.retained(tenantId, name), gate);
    await this.checkRoomFor(tenantId, name);
    const connection = input.connection || 'shared';
    if (connection !== 'shared' && connection !== 'per_user') throw InputError.at(['connection'], 'connection must be shared or per_user', 'enum');
    const oauth = input.credential?.type === 'oauth';
    if (connection === 'per_user' && !oauth) throw InputError.at(['connection'], 'connection per_user needs credential {type: "oauth"}: each human connects their own account', 'value_error');
    let credential: { type: string; meta: Record<string, string>; secret: string } | null = null;
    if (oauth) {
      const c = input.credential as CredentialInput;
      if (!input.oauth_redirect_uri) throw InputError.at(['credential', 'type'], 'this gateway has no callback URL for OAuth (PUBLIC_BASE_URL)', 'value_error');
      if (c.client_secret && !c.client_id) throw InputError.at(['credential', 'client_id'], 'client_secret needs its client_id', 'missing');
      const setup = await this.d.oauth.prepare(tenantId, url, {
        client_id: c.client_id || undefined,
        client_secret: c.client_secret || undefined,
        scope: c.scope || undefined,
        redirect_uri: input.oauth_redirect_uri,
        client_metadata_url: input.oauth_client_metadata_url || undefined,
      });
      credential = { type: 'oauth', meta: setup.meta, secret: setup.secret };
    } else if (input.credential) credential = validateCredential(input.credential, (u) => this.d.parseUrl(u));
    const sealed = credential?.secret ? await this.d.credentials.seal(tenantId, name, credential.secret) : null;
    const row = await this.d.repo.insert(
      tenantId,
      {
        name,
        url,
        transport,
        description: input.description || null,
        credential_type: credential?.type ?? 'none',
        credential_meta: credential?.meta ?? {},
        key_id: sealed?.key_id ?? null,
        sealed: (sealed?.sealed as unknown as Record<string, string>) ?? null,
        tool_filter: { ...(include.length ? { include } : {}), ...(exclude.length ? { exclude } : {}) },
        tool_approval: input.tool_approval === 'manual' ? 'manual' : 'auto',
        timeout_ms: input.timeout_ms || null,
        status: oauth ? 'needs_authorization' : 'error',
        status_reason: oauth ? notConnected(name, connection) : 'not connected yet',
        connection,
      },
      (kept) => admitRetained(name, kept, gate),
    );
    if (!row) throw new ConflictError(`An upstream named "${name}" is already registered`);
    if (!oauth) await this.sync(tenantId, name);
    return this.view(tenantId, name, true);
  }

  async list(tenantId: string): Promise<UpstreamView[]> {
    const [rows, counts] = await Promise.all([this.d.repo.list(tenantId), this.d.repo.countsByState(tenantId)]);
    return rows.map((r) => ({ ...r, tool_count: counts.get(r.name)?.active ?? 0, quarantined_count: counts.get(r.name)?.quarantined ?? 0 }));
  }

  get(tenantId: string, name: string): Promise<UpstreamView> {
    return this.view(tenantId, name, true);
  }

  /**
   * Deletes an upstream: its credential and connection go, its tools leave every list. Its tools with a
   * pinned definition or a quarantine stay with its name and apply when the name is registered again
   * (docs/federation.md, "Pins outlive deletion"). `discardPins` drops them instead, and on a name that is
   * no longer registered drops what it keeps; where approvals_require_human is on only a signed-in human
   * may ask for that (`gate`, 403 otherwise).
   */
  async delete(tenantId: string, name: string, o: { discardPins?: boolean; gate?: HumanGate } = {}): Promise<DeletedUpstream> {
    const discard = o.discardPins === true;
    if (discard) mayDiscard(name, o.gate ?? UNKNOWN_CALLER);
    if (!(await this.d.repo.get(tenantId, name))) {
      const kept = await this.d.repo.retained(tenantId, name);
      if (discard && kept.tools > 0) return { name, retained_tools: 0, discarded_tools: await this.d.repo.discardRetained(tenantId, name) };
      throw new NotFoundError(
        kept.tools
          ? `Upstream "${name}" not found; its name keeps ${describeKept(kept)} of a deleted upstream, applied when it is registered again (a signed-in human discards them: DELETE /api/upstreams/${name}?discard_pins=true)`
          : `Upstream "${name}" not found`,
      );
    }
    const view = await this.view(tenantId, name, false);
    const deleted = await this.d.repo.delete(tenantId, name, !discard);
    if (!deleted) throw new NotFoundError(`Upstream "${name}" not found`);
    this.d.connections.drop(tenantId, name);
    this.changed(tenantId);
    return { name, view, retained_tools: discard ? 0 : deleted.kept, discarded_tools: discard ? deleted.kept : 0 };
  }

  async refresh(tenantId: string, name: string, toolApproval?: string): Promise<UpstreamView> {
    await this.existing(tenantId, name);
    this.takeSync(tenantId, name);
    if (toolApproval === 'auto' || toolApproval === 'manual') await this.d.repo.setToolApproval(tenantId, toolApproval, name);
    await this.sync(tenantId, name);
    return this.view(tenantId, name, true);
  }

  async tools(tenantId: string, name: string): Promise<ToolRow[]> {
    await this.existing(tenantId, name);
    return this.d.repo.tools(tenantId, name);
  }

  async approve(tenantId: string, upstream: string, tool: string, by: string, sha?: string): Promise<ToolRow> {
    await this.existing(tenantId, upstream);
    const row = await this.d.repo.tool(tenantId, upstream, tool);
    if (!row) throw new NotFoundError(`Upstream ${upstream} has no tool "${tool}"`);
    const write = approvalWrite(row, by);
    if (!write) throw new ConflictError(`Tool ${upstream}/${tool} is ${row.state}: there is no quarantined definition to approve`);
    if (sha && sha !== row.candidate_sha256) {
      throw new ConflictError(`The candidate definition of ${upstream}/${tool} is ${row.candidate_sha256}, not ${sha}: it changed since it was reviewed; review it again`);
    }
    await this.d.repo.writeTools(tenantId, upstream, [write]);
    // a change after a human's approval is news: it is recorded even inside the last alert's window (with the count of those not recorded)
    const alerted = this.alerted.get(`${tenantId}|${upstream}|${tool}`);
    if (alerted) alerted.at = Number.NEGATIVE_INFINITY;
    this.changed(tenantId);
    return (await this.d.repo.tool(tenantId, upstream, tool)) as ToolRow;
  }

  /**
   * The tenant's active tools of connected upstreams, by federated name, each with its pinned definition as
   * the upstream wrote it (every field, in its key order) and as the gateway offers it: a tool that
   * requires task-augmented execution is left out (the gateway cannot run it; a call of it is refused with
   * the reason, `targetOf`), one that supports it optionally is offered with `taskSupport: "forbidden"`.
   */
  async federatedTools(tenantId: string): Promise<Array<{ name: string; upstream: string; tool: string; definition: ToolDefinition }>> {
    const rows = await this.d.repo.activeTools(tenantId);
    return rows
      .filter((r) => r.pinned && !isPromptName(r.name) && taskSupportOf(r.pinned) !== 'required')
      .map((r) => ({ name: federatedName(r.upstream, r.name), upstream: r.upstream, tool: r.name, definition: offeredForm(definitionOf(r.pinned)) }));
  }

  async target(tenantId: string, tool: string, method: string): Promise<ToolTarget> {
    const row = await this.d.repo.forCall(tenantId, tool, method);
    return row ? { ...targetOf(row, method), ...(row.credential_type === 'oauth' ? { connection: row.connection } : {}) } : { upstream: false, executable: false };
  }

  /** The upstream a governed call of (tool, method) goes to, in one query; undefined when `tool` names none. */
  lookup(tenantId: string, tool: string, method: string): Promise<FederatedTarget | undefined> {
    return this.targets.get(tenantId, `${tool}\u0000${method}`, async () => {
      const row = await this.d.repo.forCall(tenantId, tool, method);
      return row ? { row, method, target: targetOf(row, method) } : undefined;
    });
  }

  async setToolApproval(tenantId: string, mode: string): Promise<void> {
    if (mode !== 'auto' && mode !== 'manual') throw InputError.at(['mode'], 'mode must be auto or manual', 'enum');
    await this.d.repo.setToolApproval(tenantId, mode);
  }

  /** Runs an allowed call on the upstream: only an active tool, the credential injected, secrets masked. */
  async call(tenantId: string, at: FederatedTarget, args: Record<string, unknown>, ctx: CallContext = {}): Promise<FederatedCallResult> {
    const t0 = performance.now();
    const upstream = at.row.name;
    const fail = (outcome: FederatedCallResult['outcome'], message: string): FederatedCallResult => ({
      outcome,
      // a connection to make: the refusal names the route a signed-in human connects with
      result: outcome === 'authorization_required' ? { error: message, code: 'upstream_authorization_required', connect_url: `/api/upstreams/${upstream}/connect` } : { error: message },
      // 499: the agent cancelled the call (nginx's "client closed request"); nobody reads the answer
      statusCode: outcome === 'timeout' ? 504 : outcome === 'quarantined' ? 409 : outcome === 'authorization_required' ? 403 : outcome === 'cancelled' ? 499 : 502,
      executionMs: performance.now() - t0,
    });
    if (!at.target.executable) return fail('quarantined', at.target.message ?? 'the tool is not executable');
    const oauth = at.row.credential_type === 'oauth';
    // the connection the call uses: the tenant's, or the one of the human the agent acts for
    const userId = oauth && at.row.connection === 'per_user' ? (ctx.userId ?? '') : '';
    if (oauth && at.row.connection === 'per_user' && !userId) {
      return fail('authorization_required', `upstream_authorization_required: upstream ${upstream} is connected per user and this agent acts for no human (an API key without an owner); a human connects their own account (Connect on the console's Tools page, POST /api/upstreams/${upstream}/connect) and calls with their session or a key they issued`);
    }
    if (oauth && !(await this.d.oauth.hasConnection(tenantId, upstream, userId))) {
      return fail('authorization_required', userId ? `upstream_authorization_required: upstream ${upstream} is connected per user and the human this agent acts for has not connected their account (Connect on the console's Tools page, POST /api/upstreams/${upstream}/connect)` : notConnected(upstream, at.row.connection));
    }
    if (at.method === PROMPT_GET) {
      const prompt = await this.d.repo.forCall(tenantId, upstream, `${PROMPT_PREFIX}${String(args.prompt ?? '')}`);
      if (prompt?.tool_state !== 'active') {
        const quarantined = prompt?.tool_state === 'quarantined';
        return fail(quarantined ? 'quarantined' : 'upstream_error', quarantined ? `Prompt ${upstream}/${String(args.prompt)} is quarantined (${prompt?.tool_reason}); a human must approve it (POST /api/upstreams/${upstream}/tools/${PROMPT_PREFIX}${String(args.prompt)}/approve)` : `Upstream ${upstream} offers no prompt "${String(args.prompt ?? '')}"`);
      }
    }
    try {
      if (at.method === RESOURCE_READ || at.method === PROMPT_GET) {
        const result = await this.mcp.run(tenantId, at.row, at.method, args);
        return { outcome: 'executed', result: result as CallToolResult, statusCode: 200, executionMs: performance.now() - t0 };
      }
      // masked by the connection with every secret its requests carried (upstream-connections.ts)
      const { result } = await this.d.connections.callTool(this.endpoint(tenantId, at.row, userId), at.method, args, ctx.round);
      return { outcome: 'executed', result, statusCode: 200, executionMs: performance.now() - t0 };
    } catch (e) {
      const lost = await this.lostConnection(tenantId, at.row, userId, e);
      if (lost) return fail('authorization_required', lost);
      if (e instanceof UpstreamCallError) return fail(e.outcome, e.message);
      if (e instanceof UpstreamAuthError) return fail('auth_failed', `upstream ${upstream}: ${e.message}`);
      throw e;
    }
  }

  /**
   * An upstream said notifications/tools/list_changed: read its tools again, now if its sync budget has a
   * token, else when the next one comes. A burst is one read, and a notification during a read asks for
   * one more after it (the read may have seen the old list).
   */
  onToolsChanged(tenantId: string, name: string): void {
    const key = `${tenantId}|${name}`;
    const due = this.due.get(key);
    if (due) {
      if (!due.timer) due.again = true;
      return;
    }
    this.syncWhenAllowed(tenantId, name, key);
  }

  private syncWhenAllowed(tenantId: string, name: string, key: string): void {
    const wait = this.syncBudget.take(key);
    if (wait > 0) {
      const timer = setTimeout(() => {
        this.due.delete(key);
        this.syncWhenAllowed(tenantId, name, key);
      }, wait);
      timer.unref();
      this.due.set(key, { again: false, timer });
      return;
    }
    const entry = { again: false };
    this.due.set(key, entry);
    void this.sync(tenantId, name)
      .catch((e) => this.d.logger.warn({ tenantId, upstream: name, err: (e as Error).message }, 'refresh after tools/list_changed failed'))
      .finally(() => {
        this.due.delete(key);
        if (entry.again) this.syncWhenAllowed(tenantId, name, key);
      });
  }

  /** A registration of `name` is within the tenant's upstream count and the name's sync budget (its first read). */
  private async checkRoomFor(tenantId: string, name: string): Promise<void> {
    // the names of deleted upstreams that keep pins count too: churning names never grows the kept tools without bound
    const [count, kept] = await Promise.all([this.d.repo.list(tenantId).then((l) => l.length), this.d.repo.retainedNames(tenantId, name)]);
    if (count + kept >= this.d.limits.maxUpstreams) {
      throw new ConflictError(
        kept
          ? `This tenant has ${count} upstreams and ${kept} names of deleted upstreams that keep pins, the most it may hold (FEDERATION_MAX_UPSTREAMS, ${this.d.limits.maxUpstreams}); delete an upstream, register a kept name again, or have a signed-in human discard a name's pins (DELETE /api/upstreams/{name}?discard_pins=true)`
          : `This tenant has ${count} upstreams, the most it may register (FEDERATION_MAX_UPSTREAMS, ${this.d.limits.maxUpstreams}); delete one first`,
      );
    }
    this.takeSync(tenantId, name);
  }

  /** Takes a token of the upstream's sync budget, or refuses with the wait (429). */
  private takeSync(tenantId: string, name: string): void {
    const wait = this.syncBudget.take(`${tenantId}|${name}`);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new RateLimitError(
        `Upstream "${name}" was read ${this.d.limits.syncBurst} times recently; its tools may be read again in ${seconds} s (one read every ${Math.round(this.d.limits.syncIntervalMs / 1000)} s)`,
        undefined,
        seconds,
      );
    }
  }

  /** Whether this quarantine of the tool is recorded, or counted as one more within the tool's alert window. */
  private alertable(tenantId: string, upstream: string, tool: string, now = Date.now()): { record: boolean; suppressed: number } {
    const key = `${tenantId}|${upstream}|${tool}`;
    const last = this.alerted.get(key);
    if (last && now - last.at < this.d.limits.quarantineAlertWindowMs) {
      last.suppressed++;
      return { record: false, suppressed: last.suppressed };
    }
    this.alerted.delete(key);
    this.alerted.set(key, { at: now, suppressed: 0 });
    while (this.alerted.size > MAX_ALERT_KEYS) this.alerted.delete(this.alerted.keys().next().value as string);
    return { record: true, suppressed: last?.suppressed ?? 0 };
  }

  /** Reads the upstream's tools, applies the pinning plan, records the quarantines. Never throws for the upstream's faults. */
  private async sync(tenantId: string, name: string, as?: string): Promise<void> {
    const row = await this.d.repo.forConnection(tenantId, name);
    if (!row) return;
    // an oauth upstream is read with its shared connection, or a per_user one with a human's (the one who just connected)
    let userId = '';
    if (row.credential_type === 'oauth' && row.connection === 'per_user') userId = as ?? (await this.d.oauth.anyConnection(tenantId, name)) ?? '';
    if (row.credential_type === 'oauth' && !(await this.d.oauth.hasConnection(tenantId, name, userId))) {
      await this.d.repo.setStatus(tenantId, name, { status: 'needs_authorization', status_reason: notConnected(name, row.connection) });
      this.changed(tenantId);
      return;
    }
    let listed;
    try {
      listed = await this.d.connections.listTools(this.endpoint(tenantId, row, userId));
    } catch (e) {
      const lost = await this.lostConnection(tenantId, row, userId, e);
      if (lost) {
        if (row.connection === 'per_user' && (await this.d.oauth.anyConnection(tenantId, name))) return;
        await this.d.repo.setStatus(tenantId, name, { status: 'needs_authorization', status_reason: lost.slice(0, 500) });
        this.changed(tenantId);
        return;
      }
      // an UpstreamCallError is masked by the connection; an UpstreamAuthError names the token endpoint's answer only
      const reason = e instanceof UpstreamCallError || e instanceof UpstreamAuthError ? e.message : 'unexpected error (see the vault log)';
      if (!(e instanceof UpstreamCallError || e instanceof UpstreamAuthError)) this.d.logger.error({ tenantId, upstream: name, err: (e as Error).message }, 'tools/list of an upstream failed');
      await this.d.repo.setStatus(tenantId, name, { status: 'error', status_reason: reason.slice(0, 500) });
      this.changed(tenantId);
      return;
    }
    const filter = row.tool_filter ?? {};
    const skipped: string[] = [];
    const underscored: string[] = [];
    const offered: ToolDefinition[] = [];
    const taskOnly: string[] = [];
    for (const tool of listed.tools) {
      const def = definitionOf(tool);
      if (filter.include?.length && !matchesAnyGlob(filter.include, def.name)) continue;
      if (filter.exclude?.length && matchesAnyGlob(filter.exclude, def.name)) continue;
      const problem = federatedToolProblem(name, def.name);
      if (problem === 'leading_underscore') {
        underscored.push(def.name.slice(0, 64));
        continue;
      }
      if (problem) {
        skipped.push(def.name.slice(0, 64));
        continue;
      }
      offered.push(def);
      if (taskSupportOf(def) === 'required') taskOnly.push(def.name.slice(0, 64));
    }
    // the upstream's prompts, pinned and scanned as its tools are (federated-mcp.ts)
    offered.push(...(await listedPromptDefinitions(this.d.connections, this.endpoint(tenantId, row, userId), this.d.logger)));
    // the upstream's first successful read keeps server_info empty until now, and finds no tools: only then do
    // new tools follow the mode (a name registered again has the tools kept from its deletion: not a first read)
    const stored = await this.d.repo.tools(tenantId, name);
    const initial = Object.keys(row.server_info ?? {}).length === 0 && stored.length === 0;
    const plan = await planPinning(stored, offered, row.tool_approval === 'manual' ? 'manual' : 'auto', { initial });
    await this.d.repo.writeTools(tenantId, name, plan.writes);
    const notes = [
      ...(listed.truncated ? [listed.truncated] : []),
      ...(listed.refused.length
        ? [
            `${listed.refused.length} tool(s) refused: a definition is larger than FEDERATION_MAX_TOOL_BYTES or nests deeper than ${MAX_TOOL_DEPTH} levels (${listed.refused
              .slice(0, 5)
              .map((t) => `${t.name} ${t.why}`)
              .join(', ')})`,
          ]
        : []),
      ...(skipped.length ? [`${skipped.length} tool(s) skipped: their federated name is not 1-128 of A-Z a-z 0-9 _ . - (${skipped.slice(0, 5).join(', ')})`] : []),
      ...(underscored.length
        ? [`${underscored.length} tool(s) skipped: a tool name starting with "_" would make its federated name ${name}___… ambiguous (${underscored.slice(0, 5).join(', ')})`]
        : []),
      ...(taskOnly.length
        ? [`${taskOnly.length} tool(s) not offered: they require task-augmented execution (execution.taskSupport "required"), which the gateway cannot run on an upstream yet (${taskOnly.slice(0, 5).join(', ')})`]
        : []),
    ];
    await this.d.repo.setStatus(tenantId, name, { status: 'connected', status_reason: notes.join('; ') || null, server_info: { ...listed.info } });
    this.changed(tenantId);
    for (const q of plan.quarantined) {
      // the tool is quarantined either way; an upstream that flaps is recorded once per tool and window
      const alert = this.alertable(tenantId, name, q.tool);
      if (!alert.record) continue;
      await this.d.quarantines
        .record(tenantId, name, q, alert.suppressed)
        .catch((e) => this.d.logger.error({ tenantId, upstream: name, tool: q.tool, err: (e as Error).message }, 'could not record a quarantine'));
    }
  }

  endpoint(tenantId: string, row: UpstreamRow, userId = ''): UpstreamEndpoint {
    const version = `${row.created_at instanceof Date ? row.created_at.toISOString() : String(row.created_at)}|${row.url}|${row.transport}`;
    const u = { name: row.name, credential_type: row.credential_type, credential_meta: row.credential_meta, key_id: row.key_id, sealed: row.sealed as unknown as SealedData | null, version };
    const base = { tenantId, name: row.name, url: row.url, transport: row.transport === 'sse' ? ('sse' as const) : ('streamable_http' as const), version, timeoutMs: row.timeout_ms ?? undefined };
    if (row.credential_type === 'oauth') {
      const o = { name: row.name, url: row.url, credential_meta: row.credential_meta, key_id: row.key_id, sealed: u.sealed };
      // a 401 forces one refresh before the retry; the token is opened from the HSM per request, never cached
      let force = false;
      return {
        ...base,
        userId: userId || undefined,
        credentialHeaders: async () => {
          const token = await this.d.oauth.accessToken(tenantId, o, userId, force);
          force = false;
          return { headers: { authorization: `Bearer ${token}` }, secrets: [token] };
        },
        onUnauthorized: () => {
          force = true;
        },
      };
    }
    return {
      ...base,
      credentialHeaders: () => this.d.credentials.headers(tenantId, u),
      onUnauthorized: row.credential_type === 'oauth_client_credentials' ? () => this.d.credentials.forgetToken(tenantId, u) : undefined,
    };
  }

  private async existing(tenantId: string, name: string): Promise<UpstreamMeta> {
    const row = await this.d.repo.get(tenantId, name);
    if (!row) throw new NotFoundError(`Upstream "${name}" not found`);
    return row;
  }

  /**
   * Whether `e` (a call's or a read's failure) means the connection is lost: no connection, a refresh the
   * server refused, or a 401 after one refresh. The connection is removed, the loss recorded (a
   * control_plane record and the webhook `upstream.authorization_required`); its refusal, or undefined.
   */
  private async lostConnection(tenantId: string, row: UpstreamRow, userId: string, e: unknown): Promise<string | undefined> {
    if (row.credential_type !== 'oauth') return undefined;
    const cause = (e as { cause?: unknown })?.cause;
    let refusal = [e, cause].find((x): x is AuthorizationRequired => x instanceof AuthorizationRequired);
    if (!refusal && e instanceof UpstreamCallError && e.outcome === 'auth_failed') refusal = await this.d.oauth.revoked(tenantId, row.name, userId, 'the upstream refused its token (401)');
    // a refresh refused inside a request removed the connection (the transport may not keep that error as it is)
    if (!refusal && e instanceof UpstreamCallError && !(await this.d.oauth.hasConnection(tenantId, row.name, userId))) {
      refusal = new AuthorizationRequired(row.name, userId, `${notConnected(row.name, row.connection)} (the connection was refused by the upstream's authorization server)`);
    }
    if (!refusal) return undefined;
    if (!userId) await this.d.repo.setStatus(tenantId, row.name, { status: 'needs_authorization', status_reason: refusal.message.slice(0, 500) });
    this.changed(tenantId);
    await this.d.connectionEvents
      .record(tenantId, row.name, { event: 'authorization_required', user_id: userId, reason: refusal.message.slice(0, 300) })
      .catch((err) => this.d.logger.error({ tenantId, upstream: row.name, err: (err as Error).message }, 'could not record a lost upstream connection'));
    this.d.connections.drop(tenantId, row.name, userId || undefined);
    return refusal.message;
  }

  /** A signed-in human starts connecting an oauth upstream (theirs, per_user; the tenant's, shared). */
  async startAuthorization(tenantId: string, name: string, humanId: string, bindingSha256: string): Promise<{ authorization_url: string; expires_at: Date }> {
    const row = await this.d.repo.forConnection(tenantId, name);
    if (!row) throw new NotFoundError(`Upstream "${name}" not found`);
    if (row.credential_type !== 'oauth') throw new ConflictError(`Upstream "${name}" has a ${row.credential_type} credential: there is nothing to connect (only credential type oauth is)`);
    if (!humanId) throw new ForbiddenError(`Connecting upstream "${name}" takes a signed-in human: ${SIGN_IN}`);
    return this.d.oauth.start(tenantId, oauthUpstream(row), row.connection === 'per_user' ? humanId : '', humanId, bindingSha256);
  }

  /** The authorization server's redirect back: the connection is stored, recorded, and the upstream read with it. */
  async completeAuthorization(p: { state: string; code: string; bindingSha256: string; error?: string }): Promise<{ tenantId: string; userId: string; view: UpstreamView }> {
    const done = await this.d.oauth.complete(p, async (tenantId, name) => {
      const row = await this.d.repo.forConnection(tenantId, name);
      return row && row.credential_type === 'oauth' ? oauthUpstream(row) : undefined;
    });
    const grant = (await this.d.oauth.connections(done.tenantId, done.upstream)).find((g) => g.user_id === done.userId);
    await this.d.connectionEvents
      .record(done.tenantId, done.upstream, { event: 'connected', user_id: done.userId, by: grant?.connected_by ?? undefined })
      .catch((err) => this.d.logger.error({ tenantId: done.tenantId, upstream: done.upstream, err: (err as Error).message }, 'could not record an upstream connection'));
    this.d.connections.drop(done.tenantId, done.upstream, done.userId || undefined);
    await this.sync(done.tenantId, done.upstream, done.userId);
    return { tenantId: done.tenantId, userId: done.userId, view: await this.view(done.tenantId, done.upstream, true) };
  }

  /** Removes a connection (revoked at the server where it offers RFC 7009). 404 when there is none. */
  async disconnect(tenantId: string, name: string, userId: string, by: string): Promise<UpstreamView> {
    const row = await this.d.repo.forConnection(tenantId, name);
    if (!row) throw new NotFoundError(`Upstream "${name}" not found`);
    if (row.credential_type !== 'oauth') throw new ConflictError(`Upstream "${name}" has a ${row.credential_type} credential: there is no connection to remove`);
    const who = row.connection === 'per_user' ? userId : '';
    const r = await this.d.oauth.disconnect(tenantId, oauthUpstream(row), who);
    if (!r.removed) throw new NotFoundError(who ? `You have no connection to upstream "${name}"` : `Upstream "${name}" is not connected`);
    this.d.connections.drop(tenantId, name, who || undefined);
    await this.d.connectionEvents
      .record(tenantId, name, { event: 'disconnected', user_id: who, by, reason: r.revoked ? 'revoked at the authorization server' : 'deleted (the server offers no revocation, or did not confirm it)' })
      .catch((err) => this.d.logger.error({ tenantId, upstream: name, err: (err as Error).message }, 'could not record an upstream disconnection'));
    if (!who || !(await this.d.oauth.anyConnection(tenantId, name))) {
      await this.d.repo.setStatus(tenantId, name, { status: 'needs_authorization', status_reason: notConnected(name, row.connection) });
    }
    this.changed(tenantId);
    return this.view(tenantId, name, false);
  }

  private async view(tenantId: string, name: string, withTools: boolean): Promise<UpstreamView> {
    const row = await this.existing(tenantId, name);
    const tools = await this.d.repo.tools(tenantId, name);
    return {
      ...row,
      ...(row.credential_type === 'oauth' ? { connections: await this.d.oauth.connections(tenantId, name) } : {}),
      tool_count: tools.filter((t) => t.state === 'active').length,
      quarantined_count: tools.filter((t) => t.state === 'quarantined').length,
      ...(withTools ? { tools } : {}),
    };
  }
}

/** The status reason of an oauth upstream nobody connected. */
function notConnected(name: string, connection: string): string {
  return connection === 'per_user'
    ? `upstream_authorization_required: each human connects their own account (Connect on the console's Tools page, POST /api/upstreams/${name}/connect)`
    : `upstream_authorization_required: a human connects it (Connect on the console's Tools page, POST /api/upstreams/${name}/connect)`;
}

function oauthUpstream(row: UpstreamRow) {
  return { name: row.name, url: row.url, credential_meta: row.credential_meta, key_id: row.key_id, sealed: row.sealed as unknown as SealedData | null };
}

/** `3 tool(s) (2 pinned, 1 quarantined)` */
function describeKept(kept: RetainedTools): string {
  return `${kept.tools} tool(s) (${kept.pinned} pinned, ${kept.quarantined} quarantined)`;
}

const SIGN_IN = 'sign in (POST /api/auth/login) and send the session token';

/** Throws 403 when the name keeps tools of a deleted upstream and the gate asks for a human the caller is not. */
function admitRetained(name: string, kept: RetainedTools, gate: HumanGate): void {
  if (kept.tools === 0 || gate.human || !gate.requireHuman) return;
  throw new ForbiddenError(
    `Upstream name "${name}" keeps ${describeKept(kept)} of a deleted upstream; registering it again applies them and, with the tenant's approvals_require_human on, needs a signed-in human: ${SIGN_IN}; ${gate.caller} cannot. A signed-in human may also discard them (DELETE /api/upstreams/${name}?discard_pins=true)`,
  );
}

/** Throws 403 when discarding pins needs a human the caller is not. */
function mayDiscard(name: string, gate: HumanGate): void {
  if (gate.human || !gate.requireHuman) return;
  throw new ForbiddenError(
    `Discarding the pins of upstream "${name}" undoes what a human approved and, with the tenant's approvals_require_human on, needs a signed-in human: ${SIGN_IN}; ${gate.caller} cannot (DELETE without discard_pins keeps them)`,
  );
}

/** The refusal of a call of a tool that requires task-augmented execution (docs/federation.md, "Task support"). */
export const TASK_REQUIRED = 'task_execution_required';

/** What a call of `method` on the upstream row meets: unknown, quarantined (and why) or executable. */
function targetOf(
  row: { name: string; tool_state: string | null; tool_reason: string | null; tool_task_support?: string | null; tool_pinned_sha256?: string | null; credential_type?: string; status?: string; connection?: string },
  method: string,
): ToolTarget {
  const tool = row.name;
  // an oauth upstream nobody connected yet has no tools to know: the refusal says what is missing
  if (row.credential_type === 'oauth' && row.status === 'needs_authorization' && (!row.tool_state || row.tool_state === 'absent')) {
    return { upstream: true, executable: false, violation: 'upstream_authorization_required', message: notConnected(tool, row.connection ?? 'shared') };
  }
  // resources/read and prompts/get of an upstream (federated-mcp.ts): a prompt's own state is checked when it runs
  if (method === RESOURCE_READ || method === PROMPT_GET) return { upstream: true, executable: true };
  if (method.startsWith(PROMPT_PREFIX)) return { upstream: true, executable: false, violation: 'upstream_tool_unknown', message: `Upstream ${tool} offers no tool "${method}"` };
  if (!row.tool_state || row.tool_state === 'absent') return { upstream: true, executable: false, violation: 'upstream_tool_unknown', message: `Upstream ${tool} offers no tool "${method}"` };
  if (row.tool_state === 'quarantined') {
    const what =
      row.tool_reason === 'tool_definition_changed'
        ? 'its definition changed since it was pinned'
        : row.tool_reason === 'suspicious_description'
          ? 'its definition carries tool-poisoning markers'
          : 'a new tool waits for a human (one that appeared after the upstream was first read, or any new tool with upstream_tool_approval: manual)';
    return { upstream: true, executable: false, violation: row.tool_reason ?? 'tool_definition_changed', message: `Tool ${tool}/${method} is quarantined: ${what}; a human must approve it (POST /api/upstreams/${tool}/tools/${method}/approve)` };
  }
  if (row.tool_task_support === 'required') {
    return {
      upstream: true,
      executable: false,
      violation: TASK_REQUIRED,
      message: `Tool ${tool}/${method} requires task-augmented execution (its execution.taskSupport is "required"), which the gateway cannot run on an upstream yet; it is not offered in tools/list`,
    };
  }
  return { upstream: true, executable: true, ...(row.tool_pinned_sha256 ? { definition_sha256: row.tool_pinned_sha256 } : {}) };
}

/** The diff a reviewer sees for a stored tool: pinned -> candidate. */
export function diffOf(row: ToolRow): ReturnType<typeof definitionDiff> {
  if (!row.candidate) return [];
  return definitionDiff((row.pinned as never) ?? null, row.candidate as never);
}

function checkGlobs(globs: string[] | undefined, field: string): string[] {
  const list = globs ?? [];
  if (list.length > MAX_GLOBS) throw InputError.at(['tools', field], `at most ${MAX_GLOBS} patterns`, 'too_long');
  list.forEach((g, i) => {
    if (typeof g !== 'string' || !/^[A-Za-z0-9_.*?-]{1,128}$/.test(g)) throw InputError.at(['tools', field, i], 'a pattern is 1-128 of A-Z a-z 0-9 _ . - and the wildcards * ?', 'string_pattern_mismatch');
  });
  return list;
}
