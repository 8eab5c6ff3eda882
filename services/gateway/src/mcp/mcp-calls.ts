/**
 * What one MCP server request does with a tool call, in either protocol era: the call through the
 * governance pipeline (governed-tools.ts), and, when the pipeline queues it, the answer the client can
 * wait on (approval-rounds.ts: a task, an `input_required` round, or the queued text), the retry rounds of
 * such a call, and the Tasks extension's methods.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '@agw/shared';
import { ProtocolError, ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import type { McpDeps } from './mcp-deps';
import { type AnswerReceipt, recordReceipt, withReceiptMeta } from '../pipeline/call-receipt';
import type { UpstreamNotifications, UpstreamRound } from '../pipeline/hooks';
import type { ToolCallOutcome } from '../pipeline/tool-call.pipeline';
import { ApprovalRounds, CONNECT_INPUT_KEY, type RoundCaller, RequestStateSigner, TASKS_EXTENSION, clientAbilitiesOf } from './approval-rounds';
import { type McpToolResult, type McpTools, type SessionScope, callFederatedTool, callGovernedTool, parseGovernedToolArgs, toMcpResult, unlistedFederatedTool } from './governed-tools';
import { type CallRound, ERR_MISSING_CLIENT_CAPABILITY, type RequestMeta, RpcError } from './modern-revision';

/** how long a requestState stays good: a day (an approval's own expiry ends the wait earlier) */
const STATE_TTL_MS = 24 * 3600_000;
/** the polling interval a task suggests */
const TASK_POLL_MS = 2000;

/** The approval rounds of this gateway: its requestState key is derived from JWT_SECRET, so every replica verifies every other's. */
export function approvalRoundsOf(d: McpDeps): ApprovalRounds {
  const key = d.config.jwtSecret ? new TextEncoder().encode(`${d.config.jwtSecret}:mcp-request-state`) : randomBytes(32);
  return new ApprovalRounds(d.approvals, new RequestStateSigner(key), {
    consoleOrigin: new URL(d.config.publicBaseUrl).origin,
    holdMs: d.config.mcpApprovalHoldMs,
    stateTtlMs: STATE_TTL_MS,
    taskPollMs: TASK_POLL_MS,
  });
}

/** Who calls, and how: the credential, the agent, each step's timings. */
export interface McpCaller {
  apiKeyHash?: string;
  agentKey: boolean;
  agentId?: string;
  /** the human the caller acts for (a per_user upstream uses their connection) */
  actsFor?: string;
  timings: Record<string, number>;
  /** aborted when the client's HTTP request closes before its answer: a federated call is cancelled at the upstream */
  signal?: AbortSignal;
}

export interface McpCallHandlers {
  /** `notifications`: the client wants what a federated tool's upstream sends during the call (call-notifications.ts) */
  callTool(name: string, args: Record<string, unknown>, round?: CallRound, notifications?: UpstreamNotifications): Promise<Record<string, unknown>>;
  tasks: { get(taskId: string, meta: RequestMeta): Promise<Record<string, unknown>>; cancel(taskId: string, meta: RequestMeta): Promise<void>; update(taskId: string, meta: RequestMeta): Promise<void> };
}

/** A failed tool call is a tool result with isError, never a transport error (as the SDK's McpServer does). */
function failedResult(e: unknown): McpToolResult {
  return { isError: true, content: [{ type: 'text', text: e instanceof AppError ? `${e.message}${typeof e.detail === 'string' ? '' : `: ${JSON.stringify(e.detail)}`}` : (e as Error).message }] };
}

/**
 * The upstream a federated call was refused for because nobody is connected for it
 * (`upstream_authorization_required`: the policy step's violation before anyone connected, or the
 * vault's 403 after), or undefined for any other outcome.
 */
function connectNeededOf(o: ToolCallOutcome, upstream: string | undefined): string | undefined {
  if (!upstream) return undefined;
  if (o.kind === 'denied' && o.violations.includes('upstream_authorization_required')) return upstream;
  if (o.kind === 'allowed' && o.mcp_result && o.execution_result) {
    const body = o.execution_result.body as { code?: unknown } | null;
    if (body && typeof body === 'object' && body.code === 'upstream_authorization_required') return upstream;
  }
  return undefined;
}

/** The upstream's own `input_required` answer of an allowed federated call (relayed: mcp-calls.ts), or undefined. */
function relayedInputOf(o: ToolCallOutcome): { inputRequests?: unknown; requestState?: unknown } | undefined {
  if (o.kind !== 'allowed' || !o.mcp_result || o.execution_result?.status_code !== 200) return undefined;
  const body = o.execution_result.body as { resultType?: unknown } | null;
  return body && typeof body === 'object' && body.resultType === 'input_required' ? (body as { inputRequests?: unknown; requestState?: unknown }) : undefined;
}

/**
 * What a 2026-07-28 call relays to an upstream: that its input_required comes back (not refused), and what
 * the client declared it can answer (elicitation, sampling, roots), so that a conforming upstream asks only that.
 */
function relayOf(round: CallRound): Omit<UpstreamRound, 'signal'> {
  const caps = round.meta?.['io.modelcontextprotocol/clientCapabilities'] as Record<string, unknown> | undefined;
  const declared = caps && typeof caps === 'object' ? Object.fromEntries(['elicitation', 'sampling', 'roots'].filter((k) => caps[k] !== undefined).map((k) => [k, caps[k]])) : {};
  return { relay: true, clientCapabilities: declared };
}

function requireTasks(meta: RequestMeta): void {
  if (!clientAbilitiesOf(meta).tasks) {
    throw new RpcError(ERR_MISSING_CLIENT_CAPABILITY, `Missing required client capability: the ${TASKS_EXTENSION} extension`, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }
}

/** The tool calls of one MCP server request (its tools, tenant, managed session and caller). */
export function mcpCallHandlers(d: McpDeps, rounds: ApprovalRounds, tools: McpTools, tenantId: string, caller: McpCaller, session?: SessionScope): McpCallHandlers {
  const roundCaller: RoundCaller = { tenantId, keyHash: caller.apiKeyHash ?? null, agentId: session?.agentId ?? caller.agentId ?? 'mcp-client' };
  /** the upstream of each federated tool this request called */
  const upstreamOf = new Map<string, string>();
  const run = async (name: string, args: Record<string, unknown>, approvedActionId?: string, relay?: Omit<UpstreamRound, 'signal'>): Promise<ToolCallOutcome> => {
    // a federated tool tools/list does not show (quarantined) goes through the pipeline too, which refuses
    // it with the violation and how a human approves it, as POST /api/mcp/tools/call does
    const federated = tools.federated.get(name) ?? (tools.credential.includes(name) ? undefined : await unlistedFederatedTool(d, tenantId, tools, tools.upstream ? `${tools.upstream}__${name}` : name));
    if (!federated && !tools.credential.includes(name)) throw new RpcError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    if (federated) upstreamOf.set(name, federated.upstream);
    if (federated) return callFederatedTool(d, tenantId, federated, args, session, caller, approvedActionId, relay);
    const call = { ...parseGovernedToolArgs(args), ...(caller.agentId ? { agent_id: caller.agentId, agent_type: 'mcp' } : {}), ...(approvedActionId ? { approved_action_id: approvedActionId } : {}) };
    const { signal: _signal, ...governed } = caller;
    return callGovernedTool(d, tenantId, name, call, session, governed);
  };

  /** The MCP answer to an outcome, with its receipt in `_meta["io.agw/receipt"]` (call-receipt.ts). */
  const answer = async (name: string, args: Record<string, unknown>, o: ToolCallOutcome, round?: CallRound): Promise<Record<string, unknown>> =>
    withReceiptMeta(await answerOf(name, args, o, round), o.receipt);

  /** A queued call by what the client can wait with, any other as a tool result. */
  const answerOf = async (name: string, args: Record<string, unknown>, o: ToolCallOutcome, round?: CallRound): Promise<Record<string, unknown>> => {
    const can = clientAbilitiesOf(round?.meta);
    // the upstream's own input_required (only a 2026-07-28 call relays it: `round`): relayed in a state of ours
    const upstreamInput = relayedInputOf(o);
    if (upstreamInput && round) return rounds.relayInput(roundCaller, name, args, o.action_id, upstreamInput);
    if (o.kind !== 'pending') {
      // no connection for the human it acts for: a client that can open a URL sends them to Connect
      const upstream = connectNeededOf(o, upstreamOf.get(name));
      if (upstream && round && can.urlElicitation) return rounds.connectRequired(roundCaller, name, args, upstream, o.action_id, round.requestState !== undefined);
      return toMcpResult(o);
    }
    if (round && can.tasks) return { ...rounds.task(await rounds.ownAction(roundCaller, o.action_id)), resultType: 'task' };
    if (round && can.urlElicitation) return rounds.inputRequired(roundCaller, name, args, o.action_id);
    return rounds.queuedResult(o.action_id);
  };

  /**
   * The receipt of a human's decision on a queued call (its control-plane record: approved and executed,
   * rejected, expired), issued from the stored record; undefined when there is none (yet) or it cannot be
   * signed now: the result goes out without it.
   */
  const decisionReceipt = async (actionId: string): Promise<AnswerReceipt | undefined> => {
    try {
      const { records } = await d.audit.getByAction({ tenant_id: tenantId, action_id: actionId });
      const decided = [...records].reverse().find((r) => r.entry?.source === 'control_plane');
      return decided ? recordReceipt(await d.audit.getReceipt({ tenant_id: tenantId, record_id: decided.id })) : undefined;
    } catch {
      return undefined;
    }
  };

  /** A retry with an earlier answer's requestState: the decision's result, or input_required again. */
  const retry = async (name: string, args: Record<string, unknown>, round: CallRound & { requestState: string }, notifications?: UpstreamNotifications): Promise<Record<string, unknown>> => {
    // a relayed round: the client's answers go to the upstream with its own state, in a new governed call
    const relayed = rounds.relayStateOf(round.requestState, roundCaller, name, args);
    if (relayed !== undefined) {
      return answer(
        name,
        args,
        await run(name, args, undefined, {
          ...relayOf(round),
          ...(round.inputResponses ? { inputResponses: round.inputResponses } : {}),
          ...(relayed.upstreamState !== undefined ? { requestState: relayed.upstreamState } : {}),
          ...(notifications ? { notifications } : {}),
        }),
        round,
      );
    }
    // a connect round: the human connected (or not) at the page; the call runs anew through the whole pipeline
    const connect = rounds.connectStateOf(round.requestState, roundCaller, name, args);
    if (connect !== undefined) {
      const action = (round.inputResponses?.[CONNECT_INPUT_KEY] as { action?: unknown } | undefined)?.action;
      if (action === 'decline' || action === 'cancel') {
        return { isError: true, content: [{ type: 'text', text: `The user did not connect ${connect}; ${name} did not run (upstream_authorization_required).` }] };
      }
      return answer(name, args, await run(name, args, undefined, notifications ? { notifications } : undefined), round);
    }
    const standing = await rounds.retried(roundCaller, round.requestState, name, args, round.inputResponses);
    if (standing.kind === 'dismissed') return rounds.queuedResult(standing.actionId);
    if (standing.kind === 'waiting') return rounds.inputRequired(roundCaller, name, args, standing.row.action_id, true);
    // approved for the agent to run (no credential): this exact call, once (approved-retry.ts); if the
    // approval was used already, the call is queued anew and answered as any queued call
    if (standing.kind === 'approved_direct') return answer(name, args, await run(name, args, standing.row.action_id), round);
    return withReceiptMeta(standing.result, await decisionReceipt(standing.row.action_id));
  };

  return {
    async callTool(name, args, round, notifications) {
      try {
        if (round?.requestState !== undefined) return await retry(name, args, round as CallRound & { requestState: string }, notifications);
        // a 2026-07-28 call (`round`) relays an upstream's own input_required; an earlier revision's is an error result
        const relay = { ...(round ? relayOf(round) : {}), ...(notifications ? { notifications } : {}) };
        return await answer(name, args, await run(name, args, undefined, Object.keys(relay).length ? relay : undefined), round);
      } catch (e) {
        if (e instanceof ProtocolError) throw e;
        return failedResult(e);
      }
    },
    tasks: {
      async get(taskId, meta) {
        requireTasks(meta);
        const row = await rounds.ownAction(roundCaller, taskId);
        const standing = rounds.standing(row);
        if (standing.kind !== 'done' && standing.kind !== 'cancelled') return rounds.task(row, standing);
        return rounds.task(row, { ...standing, result: withReceiptMeta(standing.result, await decisionReceipt(row.action_id)) });
      },
      async cancel(taskId, meta) {
        requireTasks(meta);
        await rounds.withdraw(roundCaller, await rounds.ownAction(roundCaller, taskId), 'cancelled by the MCP client (tasks/cancel)');
      },
      async update(taskId, meta) {
        // the gateway's tasks ask for no input (a human decides in the console): an acknowledged no-op
        requireTasks(meta);
        await rounds.ownAction(roundCaller, taskId);
      },
    },
  };
}
