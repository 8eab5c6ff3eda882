/**
 * Approvals a standard MCP client can wait for (docs/mcp.md, "Approvals over MCP"). When the pipeline
 * queues a call made over revision 2026-07-28, the answer depends on what the client declared in its
 * request's `_meta["io.modelcontextprotocol/clientCapabilities"]`:
 * - the Tasks extension (`extensions["io.modelcontextprotocol/tasks"]`): a task (`resultType: "task"`) whose
 *   id is the queued action's id; `tasks/get` reads the approval row (Postgres, so any replica answers):
 *   `working` while it waits, `completed` with the upstream's result once approved (or an `isError` result
 *   when rejected or expired), `cancelled` once the client withdrew it with `tasks/cancel`;
 * - URL-mode elicitation (`elicitation.url`): a multi round-trip answer (`resultType: "input_required"`)
 *   whose one input request sends the user to the console page of that exact action, and whose
 *   `requestState` is signed by the gateway (HMAC-SHA256) and bound to the tenant, the calling credential,
 *   the tool, the SHA-256 of the arguments (RFC 8785) and an expiry. The client's retry with that state
 *   gets the upstream's result once approved, a refusal when rejected, expired or declined, or
 *   `input_required` again while nobody decided (after holding the retry up to MCP_APPROVAL_HOLD_MS);
 * - neither (and every client of the 2025 revisions): a complete result whose text says the call is queued
 *   and where its status and result are read (`GET /api/actions/{id}`), with the action id in `_meta`.
 *
 * A call refused with `upstream_authorization_required` (nobody connected for the human it acts for) gets,
 * for a client that declared URL-mode elicitation, `input_required` too: a URL elicitation to the upstream's
 * console page (Connect) and a signed state naming the upstream; the retry with it runs the call anew.
 *
 * The call runs once, when a human approves it (brokered calls run at approval: approval-queue.ts); a retry
 * only reads what that run answered, so a changed argument can never ride on an approval: the state of
 * another call is refused, and the call without it is a new action.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type ApprovalRow, PLATFORM_CONFIRMATION, paramsSha256 } from '@agw/shared';
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { RpcError } from './modern-revision';
import type { McpToolResult } from './governed-tools';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** the key of the gateway's one input request (an MRTR key is the server's own name for its request) */
export const APPROVAL_INPUT_KEY = 'agw_approval';
/** the key of the input request that sends the user to connect a per_user or unconnected OAuth upstream */
export const CONNECT_INPUT_KEY = 'agw_connect';
/** who a client's own withdrawal (tasks/cancel, a declined elicitation) is recorded as: `mcp-client:<agent>` */
export const CLIENT_WITHDRAWAL = 'mcp-client:';
const ACTION_META = 'io.agw/action_id';
/** the longest requestState taken (a relayed round's holds the upstream's own, up to MAX_UPSTREAM_STATE_CHARS) */
const MAX_STATE_CHARS = 16_384;
/** the longest upstream requestState a relayed round carries */
export const MAX_UPSTREAM_STATE_CHARS = 8192;

/** What the calling client declared it can do, from the request's `_meta` (2026-07-28). */
export interface ClientAbilities {
  tasks: boolean;
  urlElicitation: boolean;
}

export function clientAbilitiesOf(meta: Record<string, unknown> | undefined): ClientAbilities {
  const caps = meta?.['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown>; elicitation?: { url?: unknown } } | undefined;
  return {
    tasks: !!caps && typeof caps.extensions === 'object' && caps.extensions !== null && TASKS_EXTENSION in caps.extensions,
    urlElicitation: !!caps?.elicitation && typeof caps.elicitation === 'object' && caps.elicitation.url !== undefined,
  };
}

/** Who sent a call: its tenant and the credential (API key hash, or `oauth-grant:<id>`) that queued it. */
export interface RoundCaller {
  tenantId: string;
  keyHash: string | null;
  agentId: string;
}

/** What a signed requestState holds (short keys: it travels on every retry). */
interface StatePayload {
  v: 1;
  /** tenant */
  t: string;
  /** the queued action */
  a: string;
  /** the credential that queued it */
  k: string | null;
  /** the MCP tool name */
  n: string;
  /** RFC 8785 SHA-256 of the arguments */
  h: string;
  /** expiry (ms since the epoch) */
  x: number;
  /** a connect round (upstream_authorization_required): the upstream to connect; `a` is the refused call */
  c?: string;
  /** a relayed round (the upstream's own input_required): 1; `a` is the round's action */
  r?: 1;
  /** a relayed round: the upstream's own requestState, echoed to it on the retry */
  u?: string;
}

/** HMAC-SHA256 signed, base64url `payload.mac` strings: the gateway's requestState. */
export class RequestStateSigner {
  constructor(private readonly key: Uint8Array) {}

  sign(p: StatePayload): string {
    const body = Buffer.from(JSON.stringify(p)).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The payload of a state this gateway signed, or null (forged, altered, malformed). */
  verify(state: string): StatePayload | null {
    if (state.length > MAX_STATE_CHARS) return null;
    const [body, mac, extra] = state.split('.');
    if (!body || !mac || extra !== undefined) return null;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as StatePayload;
      return p.v === 1 &&
        typeof p.t === 'string' &&
        typeof p.a === 'string' &&
        typeof p.n === 'string' &&
        typeof p.h === 'string' &&
        typeof p.x === 'number' &&
        (p.c === undefined || typeof p.c === 'string') &&
        (p.r === undefined || p.r === 1) &&
        (p.u === undefined || typeof p.u === 'string')
        ? p
        : null;
    } catch {
      return null;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/** The approval rows the rounds read, and the one decision a client may take: withdrawing its own call. */
export interface ApprovalReads {
  get(tenantId: string, actionId: string): Promise<ApprovalRow | undefined>;
  decide(tenantId: string, actionId: string, status: 'approved' | 'rejected', by: string, note: string | null): Promise<unknown>;
}

export interface ApprovalRoundsOptions {
  /** where the console is served (the action's page is `<origin>/approvals/<id>`) */
  consoleOrigin: string;
  /** how long a retry is held for a decision before `input_required` is answered again */
  holdMs: number;
  /** how often a held retry reads the row */
  pollMs?: number;
  /** how long a requestState is good for */
  stateTtlMs: number;
  /** suggested task polling interval */
  taskPollMs: number;
  clock?: () => number;
}

/** Where a queued call stands, as a client sees it. */
export type Standing =
  | { kind: 'waiting'; row: ApprovalRow }
  | { kind: 'approved_direct'; row: ApprovalRow }
  | { kind: 'cancelled'; row: ApprovalRow; result: McpToolResult }
  | { kind: 'done'; row: ApprovalRow; result: McpToolResult };

const text = (t: string) => [{ type: 'text' as const, text: t }];
const invalid = (message: string) => new RpcError(ErrorCode.InvalidParams, message);

export class ApprovalRounds {
  private readonly clock: () => number;
  constructor(
    private readonly approvals: ApprovalReads,
    private readonly signer: RequestStateSigner,
    private readonly o: ApprovalRoundsOptions,
  ) {
    this.clock = o.clock ?? Date.now;
  }

  /** The console page where a signed-in approver sees this action and decides. */
  consoleUrl(actionId: string): string {
    return `${this.o.consoleOrigin}/approvals/${actionId}`;
  }

  /** The note a queued call's answer gives a client that cannot wait for it (2025 revisions, or no elicitation/tasks). */
  queuedText(actionId: string): string {
    return (
      `Action ${actionId} requires human approval and is queued; it will not run until approved. An approver decides at ${this.consoleUrl(actionId)}. ` +
      `Once approved, the gateway runs it; its status and result: GET /api/actions/${actionId} (with the credential that made this call).`
    );
  }

  /** A complete result for a queued call, for a client that cannot wait: the text, and the action id in `_meta`. */
  queuedResult(actionId: string): McpToolResult {
    return { content: text(this.queuedText(actionId)), _meta: { [ACTION_META]: actionId, 'io.agw/status': 'pending' } };
  }

  /**
   * The `input_required` answer for a queued call: a URL elicitation to its console page, and the signed
   * state. `name` is what the state binds besides the arguments: the tool's MCP name, or the method and
   * upstream of a resources/read or prompts/get.
   */
  inputRequired(caller: RoundCaller, name: string, args: Record<string, unknown>, actionId: string, again = false): Record<string, unknown> {
    const state = this.signer.sign({ v: 1, t: caller.tenantId, a: actionId, k: caller.keyHash, n: name, h: paramsSha256(args), x: this.clock() + this.o.stateTtlMs });
    const message = again
      ? `Still waiting for a human's decision on ${name} (action ${actionId}). Open the page to see it, then continue.`
      : `${name} needs a human's approval before it runs (action ${actionId}). An approver reviews the exact call at this page; continue once it is decided.`;
    return {
      resultType: 'input_required',
      inputRequests: { [APPROVAL_INPUT_KEY]: { method: 'elicitation/create', params: { mode: 'url', message, url: this.consoleUrl(actionId) } } },
      requestState: state,
      _meta: { [ACTION_META]: actionId },
    };
  }

  /** The console page where a signed-in human connects their account of an upstream (its Connect button). */
  connectUrl(upstream: string): string {
    return `${this.o.consoleOrigin}/tools/${encodeURIComponent(upstream)}`;
  }

  /**
   * The `input_required` answer for a call refused with `upstream_authorization_required`, for a client
   * that declared URL-mode elicitation: a URL elicitation to the upstream's page on the console, where the
   * human clicks Connect, and a signed state naming the upstream. The retry with that state (the human has
   * connected) runs the call anew, through the whole pipeline.
   */
  connectRequired(caller: RoundCaller, name: string, args: Record<string, unknown>, upstream: string, actionId: string, again = false): Record<string, unknown> {
    const state = this.signer.sign({ v: 1, t: caller.tenantId, a: actionId, k: caller.keyHash, n: name, h: paramsSha256(args), x: this.clock() + this.o.stateTtlMs, c: upstream });
    const message = again
      ? `${upstream} is still not connected for the human this agent acts for. Open the page, click Connect and sign in, then continue.`
      : `${name} needs an account at ${upstream} that is not connected yet. Open the page, click Connect and sign in at ${upstream}, then continue: the call runs then.`;
    return {
      resultType: 'input_required',
      inputRequests: { [CONNECT_INPUT_KEY]: { method: 'elicitation/create', params: { mode: 'url', message, url: this.connectUrl(upstream) } } },
      requestState: state,
      _meta: { [ACTION_META]: actionId, 'io.agw/connect_upstream': upstream },
    };
  }

  /**
   * The `input_required` answer relaying an upstream's own (SEP-2322: it needs the user's input, or a
   * sampling or roots answer, before its tool answers): the upstream's input requests as it sent them, and
   * a state signed here that binds this caller, tool and arguments and carries the upstream's own
   * requestState, echoed to it on the retry. Each retry is a new governed call (relayStateOf).
   */
  relayInput(caller: RoundCaller, name: string, args: Record<string, unknown>, actionId: string, upstream: { inputRequests?: unknown; requestState?: unknown }): Record<string, unknown> {
    const u = typeof upstream.requestState === 'string' ? upstream.requestState : undefined;
    if (u !== undefined && u.length > MAX_UPSTREAM_STATE_CHARS) {
      return { isError: true, content: text(`${name} asks for input, but its upstream's requestState is longer than ${MAX_UPSTREAM_STATE_CHARS} characters, which the gateway does not relay (action ${actionId}).`), _meta: { [ACTION_META]: actionId } };
    }
    const state = this.signer.sign({ v: 1, t: caller.tenantId, a: actionId, k: caller.keyHash, n: name, h: paramsSha256(args), x: this.clock() + this.o.stateTtlMs, r: 1, ...(u !== undefined ? { u } : {}) });
    return {
      resultType: 'input_required',
      ...(upstream.inputRequests && typeof upstream.inputRequests === 'object' ? { inputRequests: upstream.inputRequests } : {}),
      requestState: state,
      _meta: { [ACTION_META]: actionId, 'io.agw/relayed': true },
    };
  }

  /**
   * A relayed round's state (relayInput), checked as verifyState does: `{upstreamState}` (the upstream's
   * own, when it sent one); undefined for a state of another kind (approval, connect).
   */
  relayStateOf(state: unknown, caller: RoundCaller, name: string, args: Record<string, unknown>): { upstreamState?: string } | undefined {
    const p = this.verified(state, caller, name, args);
    if (p.r === undefined) return undefined;
    return p.u !== undefined ? { upstreamState: p.u } : {};
  }

  /**
   * The upstream a retry's requestState asks to connect (a connect round), after checking it as
   * verifyState does; undefined for an approval round's state.
   */
  connectStateOf(state: unknown, caller: RoundCaller, name: string, args: Record<string, unknown>): string | undefined {
    return this.verified(state, caller, name, args).c;
  }

  /**
   * The action a retry's requestState names, after checking it was signed here, for this caller, this
   * tool and these arguments, and is not past its time; a state that fails is an InvalidParams error.
   */
  verifyState(state: unknown, caller: RoundCaller, name: string, args: Record<string, unknown>): string {
    const p = this.verified(state, caller, name, args);
    if (p.c !== undefined) throw invalid('Invalid requestState: it asks to connect an upstream, not for an approval; send the call without it');
    if (p.r !== undefined) throw invalid('Invalid requestState: it answers an upstream\'s own input request, not an approval; send the call without it');
    return p.a;
  }

  private verified(state: unknown, caller: RoundCaller, name: string, args: Record<string, unknown>): StatePayload {
    const p = typeof state === 'string' ? this.signer.verify(state) : null;
    if (!p) throw invalid('Invalid requestState: it was not issued by this gateway or was altered; send the call without it');
    if (p.t !== caller.tenantId || p.k !== caller.keyHash) throw invalid('Invalid requestState: it was issued to another caller');
    if (p.x <= this.clock()) throw invalid('Invalid requestState: it expired; send the call without it');
    if (p.n !== name || p.h !== paramsSha256(args)) {
      throw invalid(`requestState belongs to another call: action ${p.a} was queued for other arguments. A changed argument is a new call: send it without requestState`);
    }
    return p;
  }

  /** The row of a caller's own action (a task id, or a verified state's action), or an InvalidParams error. */
  async ownAction(caller: RoundCaller, actionId: string, what = 'Task'): Promise<ApprovalRow> {
    const row = /^[0-9a-f-]{36}$/i.test(actionId) ? await this.approvals.get(caller.tenantId, actionId) : undefined;
    if (!row || (row.requested_by_key ?? null) !== caller.keyHash) throw invalid(`${what} not found`);
    return row;
  }

  /** The row, once decided, or as it is after holding up to holdMs (0: read once). */
  async settle(caller: RoundCaller, actionId: string, holdMs = this.o.holdMs): Promise<ApprovalRow> {
    const until = this.clock() + holdMs;
    for (;;) {
      const row = await this.ownAction(caller, actionId);
      if (row.status !== 'pending' || this.clock() >= until || this.isPastTime(row)) return row;
      await new Promise((r) => setTimeout(r, Math.min(this.o.pollMs ?? 250, Math.max(until - this.clock(), 1))));
    }
  }

  /** Where the action stands: waiting, done (with the result a client gets), cancelled, or approved for the agent to run. */
  standing(row: ApprovalRow): Standing {
    const id = row.action_id;
    const meta = { [ACTION_META]: id };
    if (row.status === 'pending' && !this.isPastTime(row)) return { kind: 'waiting', row };
    if (row.status === 'expired' || row.status === 'pending') {
      return { kind: 'done', row, result: { isError: true, content: text(`Action ${id} expired without a human decision; it did not run. Send the call again to queue it anew.`), _meta: meta } };
    }
    if (row.status === 'rejected') {
      if (row.decided_by?.startsWith(CLIENT_WITHDRAWAL)) return { kind: 'cancelled', row, result: { isError: true, content: text(`Action ${id} was withdrawn by the client; it did not run.`), _meta: meta } };
      return { kind: 'done', row, result: { isError: true, content: text(`A human rejected action ${id}; it did not run.${row.note ? ` Reviewer's note: ${row.note}` : ''}`), _meta: meta } };
    }
    const execution = row.execution as { status_code?: unknown; result?: unknown } | null;
    if (!execution) return { kind: 'approved_direct', row };
    const status = Number(execution.status_code);
    const body = execution.result as McpToolResult | undefined;
    // the upstream's own result (a CallToolResult, a ReadResourceResult, a GetPromptResult), unless it is only the vault's {error}
    const onlyError = !!body && typeof body === 'object' && 'error' in body && Object.keys(body).length === 1;
    if (status === 200 && body && typeof body === 'object' && !onlyError) return { kind: 'done', row, result: { ...body, _meta: { ...((body._meta as object) ?? {}), ...meta } } };
    if ('result' in execution) {
      const why = (body as { error?: unknown } | undefined)?.error;
      return { kind: 'done', row, result: { isError: true, content: text(`A human approved action ${id}, but the upstream failed: ${typeof why === 'string' ? why : `status ${status}`}`), _meta: meta } };
    }
    // a credential tool the gateway ran at approval: its status, never the response body (not kept)
    const failed = status < 200 || status > 299;
    return { kind: 'done', row, result: { ...(failed ? { isError: true } : {}), content: text(JSON.stringify({ status: 'allowed', action_id: id, execution_mode: 'gateway_brokered', execution_status_code: status })), _meta: meta } };
  }

  /**
   * A retry with an earlier answer's requestState: the state verified (for this caller, call and
   * arguments), the client's answer to the approval input applied (`decline` withdraws the call; `cancel`
   * leaves it queued: `dismissed`), else the decision held for up to holdMs: where the action stands.
   */
  async retried(caller: RoundCaller, state: string, name: string, args: Record<string, unknown>, inputResponses?: Record<string, unknown>): Promise<Standing | { kind: 'dismissed'; actionId: string }> {
    const actionId = this.verifyState(state, caller, name, args);
    const answer = (inputResponses?.[APPROVAL_INPUT_KEY] as { action?: unknown } | undefined)?.action;
    let row = await this.ownAction(caller, actionId, 'Queued action');
    if (row.status === 'pending' && answer === 'cancel') return { kind: 'dismissed', actionId };
    if (row.status === 'pending' && answer === 'decline') {
      await this.withdraw(caller, row, 'the user declined the approval in the MCP client');
      row = await this.ownAction(caller, actionId, 'Queued action');
    } else {
      row = await this.settle(caller, actionId);
    }
    return this.standing(row);
  }

  /** The client withdraws its own waiting call (tasks/cancel, a declined elicitation): recorded as a rejection by it. */
  async withdraw(caller: RoundCaller, row: ApprovalRow, why: string): Promise<void> {
    if (row.status !== 'pending' || row.queue_reason === PLATFORM_CONFIRMATION) return;
    await this.approvals.decide(caller.tenantId, row.action_id, 'rejected', `${CLIENT_WITHDRAWAL}${caller.agentId}`, why).catch(() => undefined);
  }

  /** A task (Tasks extension) of a queued action, as tools/call creates it and tasks/get reads it. */
  task(row: ApprovalRow, standing: Standing = this.standing(row)): Record<string, unknown> {
    const createdAt = row.queued_at.toISOString();
    const ttlMs = row.expires_at ? Math.max(row.expires_at.getTime() - row.queued_at.getTime(), 0) : null;
    const base = { taskId: row.action_id, createdAt, lastUpdatedAt: (row.decided_at ?? row.queued_at).toISOString(), ttlMs, pollIntervalMs: this.o.taskPollMs };
    switch (standing.kind) {
      case 'waiting':
        return { ...base, status: 'working', statusMessage: `Waiting for a human's approval of ${row.tool}.${row.method}: ${this.consoleUrl(row.action_id)}` };
      case 'cancelled':
        return { ...base, status: 'cancelled', statusMessage: 'Withdrawn by the client; it did not run.' };
      case 'approved_direct':
        return {
          ...base,
          status: 'completed',
          result: { content: text(JSON.stringify({ status: 'allowed', action_id: row.action_id, execution_mode: 'agent_direct', approved_action_id: row.action_id })), _meta: { [ACTION_META]: row.action_id } },
        };
      case 'done':
        return { ...base, status: 'completed', statusMessage: `Action ${row.status}`, result: standing.result };
    }
  }

  private isPastTime(row: ApprovalRow): boolean {
    return row.status === 'pending' && !!row.expires_at && row.expires_at.getTime() <= this.clock();
  }
}
