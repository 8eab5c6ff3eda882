/** gRPC adapter of federation (federation.proto): translate messages, call `Federation`, nothing else. */
import { encodeInTurns, federation as pb, unsetAsUndefined } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, bindService, jsonField, jsonOf, objectFromJson, requiredField } from '@agw/shared';
import { type DeletedUpstream, type Federation, type HumanGate, UNKNOWN_CALLER, type UpstreamView, diffOf, federatedName } from '../federation/federation';
import type { ToolRow } from '../federation/upstream.repository';
import { PROMPT_PREFIX, isPromptName } from '../federation/federated-mcp';

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : '');

function toTool(t: ToolRow): pb.UpstreamTool {
  return {
    upstream: t.upstream,
    name: t.name,
    // a prompt's row (`prompt:<name>`, federated-mcp.ts): the name prompts/list shows
    federated_name: federatedName(t.upstream, isPromptName(t.name) ? t.name.slice(PROMPT_PREFIX.length) : t.name),
    state: t.state,
    reason: t.reason ?? '',
    ...jsonField('pinned', t.pinned ?? undefined),
    pinned_sha256: t.pinned_sha256 ?? '',
    ...jsonField('candidate', t.candidate ?? undefined),
    candidate_sha256: t.candidate_sha256 ?? '',
    markers: (t.markers ?? []).map((m) => ({ rule: m.rule, path: m.path, excerpt: m.excerpt })),
    diff: diffOf(t).map((c) => ({ path: c.path, ...jsonField('before', c.before), ...jsonField('after', c.after) })),
    first_seen_at: iso(t.first_seen_at),
    updated_at: iso(t.updated_at),
    approved_at: iso(t.approved_at),
    approved_by: t.approved_by ?? '',
  };
}

/** The gateway's word on who asks; none: not a human, the gate on. */
const gateOf = (g: pb.HumanGate | undefined): HumanGate => (g ? { human: g.human, requireHuman: g.require_human, caller: g.caller || UNKNOWN_CALLER.caller } : UNKNOWN_CALLER);

/** A deleted upstream as it was (only its name when a human discarded what a deleted one kept), with the counts. */
function toDeleted(d: DeletedUpstream): pb.Upstream {
  return pb.Upstream.fromPartial({ ...(d.view ? toUpstream(d.view) : { name: d.name }), retained_tools: d.retained_tools, discarded_tools: d.discarded_tools });
}

/**
 * An upstream with its tools, encoded a tool per turn of the event loop: an upstream's definitions may add up
 * to megabytes (FEDERATION_MAX_SYNC_BYTES per read, each one pinned, its candidate and their diff), and
 * encoded at once they would hold the vault's loop, and every other tenant's call, for a few hundred
 * milliseconds (the fault suite's R9).
 */
const upstreamInTurns = (u: UpstreamView) => encodeInTurns(pb.Upstream, toUpstream({ ...u, tools: [] }), 'tools', u.tools ?? [], toTool);

function toUpstream(u: UpstreamView): pb.Upstream {
  return {
    name: u.name,
    url: u.url,
    transport: u.transport,
    description: u.description ?? '',
    credential_type: u.credential_type,
    credential_header_name: u.credential_meta?.header_name ?? '',
    include: u.tool_filter?.include ?? [],
    exclude: u.tool_filter?.exclude ?? [],
    status: u.status,
    status_reason: u.status_reason ?? '',
    server_name: u.server_info?.name ?? '',
    server_version: u.server_info?.version ?? '',
    protocol_version: u.server_info?.protocol_version ?? '',
    tool_count: u.tool_count,
    quarantined_count: u.quarantined_count,
    created_at: iso(u.created_at),
    refreshed_at: iso(u.refreshed_at),
    tools: (u.tools ?? []).map(toTool),
    timeout_ms: u.timeout_ms ?? 0,
    retained_tools: 0,
    discarded_tools: 0,
    connection: u.connection ?? 'shared',
    connections: (u.connections ?? []).map((g) => ({ user_id: g.user_id, connected_by: g.connected_by ?? '', connected_at: iso(g.connected_at), expires_at: iso(g.expires_at), scope: g.scope ?? '' })),
    authorization_server: u.credential_type === 'oauth' ? (u.credential_meta?.authorization_server ?? '') : '',
    client_registration: u.credential_type === 'oauth' ? (u.credential_meta?.client_registration ?? '') : '',
  };
}

export function federationGrpcService(federation: Federation, logger: Logger): GrpcServiceBinding {
  const tenant = (t: string) => requiredField(t, 'tenant_id');
  return bindService(
    pb.FederationServiceService,
    {
      registerUpstream: async (req) => {
        const c = req.credential;
        return upstreamInTurns(
          await federation.register(tenant(req.tenant_id), {
            name: req.name,
            url: req.url,
            include: req.include,
            exclude: req.exclude,
            ...unsetAsUndefined(req, ['transport', 'description', 'tool_approval', 'timeout_ms', 'connection', 'oauth_redirect_uri', 'oauth_client_metadata_url']),
            credential: c ? { type: c.type, ...unsetAsUndefined(c, ['value', 'header_name', 'token_url', 'client_id', 'client_secret', 'scope']) } : undefined,
          }, gateOf(req.gate)),
        );
      },
      listUpstreams: async (req) => ({ upstreams: (await federation.list(tenant(req.tenant_id))).map(toUpstream) }),
      getUpstream: async (req) => upstreamInTurns(await federation.get(tenant(req.tenant_id), req.name)),
      deleteUpstream: async (req) => toDeleted(await federation.delete(tenant(req.tenant_id), req.name, { discardPins: req.discard_pins, gate: gateOf(req.gate) })),
      refreshUpstream: async (req) => upstreamInTurns(await federation.refresh(tenant(req.tenant_id), req.name, req.tool_approval || undefined)),
      listUpstreamTools: async (req) => encodeInTurns(pb.ListUpstreamToolsResponse, { tools: [] }, 'tools', await federation.tools(tenant(req.tenant_id), req.name), toTool),
      approveTool: async (req) => toTool(await federation.approve(tenant(req.tenant_id), req.upstream, req.tool, req.approved_by || 'unknown', req.definition_sha256 || undefined)),
      listFederatedTools: async (req) => ({
        tools: (await federation.federatedTools(tenant(req.tenant_id))).map((t) => ({ name: t.name, upstream: t.upstream, tool: t.tool, ...jsonField('definition', t.definition) })),
      }),
      getToolTarget: async (req) => {
        const t = await federation.target(tenant(req.tenant_id), req.tool, req.method);
        return { upstream: t.upstream, executable: t.executable, violation: t.violation ?? '', message: t.message ?? '', connection: t.connection ?? '', definition_sha256: t.definition_sha256 ?? '' };
      },
      listFederatedEntries: async (req) => {
        const kind = req.kind;
        if (kind !== 'resources' && kind !== 'resource_templates' && kind !== 'prompts') throw InputError.at(['kind'], 'kind is resources, resource_templates or prompts', 'enum');
        const r = await federation.mcp.entries(tenant(req.tenant_id), kind);
        return { entries: r.entries.map((e) => ({ upstream: e.upstream, ...jsonField('entry', e.entry) })), unavailable: r.unavailable };
      },
      completeFederated: async (req) => {
        const result = await federation.mcp.complete(tenant(req.tenant_id), req.upstream, objectFromJson(jsonOf(req, 'params'), 'params'));
        return { ...jsonField('result', result) };
      },
      startUpstreamAuthorization: async (req) => {
        const r = await federation.startAuthorization(tenant(req.tenant_id), req.name, req.human_id, req.binding_sha256);
        return { authorization_url: r.authorization_url, expires_at: r.expires_at.toISOString() };
      },
      completeUpstreamAuthorization: async (req) => {
        const r = await federation.completeAuthorization({ state: req.state, code: req.code, bindingSha256: req.binding_sha256, error: req.error || undefined });
        return { tenant_id: r.tenantId, user_id: r.userId, upstream: toUpstream(r.view) };
      },
      disconnectUpstream: async (req) => toUpstream(await federation.disconnect(tenant(req.tenant_id), req.name, req.user_id, req.human_id || 'unknown')),
      setToolApproval: async (req) => {
        await federation.setToolApproval(tenant(req.tenant_id), req.mode);
        return {};
      },
    },
    logger,
  );
}
