/** gRPC adapter of federation (federation.proto): translate messages, call `Federation`, nothing else. */
import { federation as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
import { type DeletedUpstream, type Federation, type HumanGate, UNKNOWN_CALLER, type UpstreamView, diffOf, federatedName } from '../federation/federation';
import type { ToolRow } from '../federation/upstream.repository';
import { PROMPT_PREFIX, isPromptName } from '../federation/federated-mcp';

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : '');
const json = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));

function toTool(t: ToolRow): pb.UpstreamTool {
  return {
    upstream: t.upstream,
    name: t.name,
    // a prompt's row (`prompt:<name>`, federated-mcp.ts): the name prompts/list shows
    federatedName: federatedName(t.upstream, isPromptName(t.name) ? t.name.slice(PROMPT_PREFIX.length) : t.name),
    state: t.state,
    reason: t.reason ?? '',
    pinnedJson: json(t.pinned),
    pinnedSha256: t.pinned_sha256 ?? '',
    candidateJson: json(t.candidate),
    candidateSha256: t.candidate_sha256 ?? '',
    markers: (t.markers ?? []).map((m) => ({ rule: m.rule, path: m.path, excerpt: m.excerpt })),
    diff: diffOf(t).map((c) => ({ path: c.path, beforeJson: c.before === undefined ? '' : JSON.stringify(c.before), afterJson: c.after === undefined ? '' : JSON.stringify(c.after) })),
    firstSeenAt: iso(t.first_seen_at),
    updatedAt: iso(t.updated_at),
    approvedAt: iso(t.approved_at),
    approvedBy: t.approved_by ?? '',
  };
}

/** The gateway's word on who asks; none: not a human, the gate on. */
const gateOf = (g: pb.HumanGate | undefined): HumanGate => (g ? { human: g.human, requireHuman: g.requireHuman, caller: g.caller || UNKNOWN_CALLER.caller } : UNKNOWN_CALLER);

/** A deleted upstream as it was (only its name when a human discarded what a deleted one kept), with the counts. */
function toDeleted(d: DeletedUpstream): pb.Upstream {
  return pb.Upstream.fromPartial({ ...(d.view ? toUpstream(d.view) : { name: d.name }), retainedTools: d.retained_tools, discardedTools: d.discarded_tools });
}

function toUpstream(u: UpstreamView): pb.Upstream {
  return {
    name: u.name,
    url: u.url,
    transport: u.transport,
    description: u.description ?? '',
    credentialType: u.credential_type,
    credentialHeaderName: u.credential_meta?.header_name ?? '',
    include: u.tool_filter?.include ?? [],
    exclude: u.tool_filter?.exclude ?? [],
    status: u.status,
    statusReason: u.status_reason ?? '',
    serverName: u.server_info?.name ?? '',
    serverVersion: u.server_info?.version ?? '',
    protocolVersion: u.server_info?.protocol_version ?? '',
    toolCount: u.tool_count,
    quarantinedCount: u.quarantined_count,
    createdAt: iso(u.created_at),
    refreshedAt: iso(u.refreshed_at),
    tools: (u.tools ?? []).map(toTool),
    timeoutMs: u.timeout_ms ?? 0,
    retainedTools: 0,
    discardedTools: 0,
    connection: u.connection ?? 'shared',
    connections: (u.connections ?? []).map((g) => ({ userId: g.user_id, connectedBy: g.connected_by ?? '', connectedAt: iso(g.connected_at), expiresAt: iso(g.expires_at), scope: g.scope ?? '' })),
    authorizationServer: u.credential_type === 'oauth' ? (u.credential_meta?.authorization_server ?? '') : '',
    clientRegistration: u.credential_type === 'oauth' ? (u.credential_meta?.client_registration ?? '') : '',
  };
}

export function federationGrpcService(federation: Federation, logger: Logger): GrpcServiceBinding {
  const tenant = (t: string) => {
    if (!t) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
    return t;
  };
  return {
    definition: pb.FederationServiceService,
    implementation: implement(
      pb.FederationServiceService,
      {
        registerUpstream: async (req) => {
          const c = req.credential;
          return toUpstream(
            await federation.register(tenant(req.tenantId), {
              name: req.name,
              url: req.url,
              transport: req.transport || undefined,
              credential: c
                ? { type: c.type, value: c.value || undefined, header_name: c.headerName || undefined, token_url: c.tokenUrl || undefined, client_id: c.clientId || undefined, client_secret: c.clientSecret || undefined, scope: c.scope || undefined }
                : undefined,
              include: req.include,
              exclude: req.exclude,
              description: req.description || undefined,
              tool_approval: req.toolApproval || undefined,
              timeout_ms: req.timeoutMs || undefined,
              connection: req.connection || undefined,
              oauth_redirect_uri: req.oauthRedirectUri || undefined,
              oauth_client_metadata_url: req.oauthClientMetadataUrl || undefined,
            }, gateOf(req.gate)),
          );
        },
        listUpstreams: async (req) => ({ upstreams: (await federation.list(tenant(req.tenantId))).map(toUpstream) }),
        getUpstream: async (req) => toUpstream(await federation.get(tenant(req.tenantId), req.name)),
        deleteUpstream: async (req) => toDeleted(await federation.delete(tenant(req.tenantId), req.name, { discardPins: req.discardPins, gate: gateOf(req.gate) })),
        refreshUpstream: async (req) => toUpstream(await federation.refresh(tenant(req.tenantId), req.name, req.toolApproval || undefined)),
        listUpstreamTools: async (req) => ({ tools: (await federation.tools(tenant(req.tenantId), req.name)).map(toTool) }),
        approveTool: async (req) => toTool(await federation.approve(tenant(req.tenantId), req.upstream, req.tool, req.approvedBy || 'unknown', req.definitionSha256 || undefined)),
        listFederatedTools: async (req) => ({
          tools: (await federation.federatedTools(tenant(req.tenantId))).map((t) => ({ name: t.name, upstream: t.upstream, tool: t.tool, definitionJson: JSON.stringify(t.definition) })),
        }),
        getToolTarget: async (req) => {
          const t = await federation.target(tenant(req.tenantId), req.tool, req.method);
          return { upstream: t.upstream, executable: t.executable, violation: t.violation ?? '', message: t.message ?? '', connection: t.connection ?? '', definitionSha256: t.definition_sha256 ?? '' };
        },
        listFederatedEntries: async (req) => {
          const kind = req.kind;
          if (kind !== 'resources' && kind !== 'resource_templates' && kind !== 'prompts') throw InputError.at(['kind'], 'kind is resources, resource_templates or prompts', 'enum');
          const r = await federation.mcp.entries(tenant(req.tenantId), kind);
          return { entries: r.entries.map((e) => ({ upstream: e.upstream, entryJson: JSON.stringify(e.entry) })), unavailable: r.unavailable };
        },
        completeFederated: async (req) => {
          let params: unknown;
          try {
            params = JSON.parse(req.paramsJson || '{}');
          } catch {
            throw InputError.at(['params_json'], 'params_json is not JSON', 'json_invalid');
          }
          const result = await federation.mcp.complete(tenant(req.tenantId), req.upstream, (params ?? {}) as Record<string, unknown>);
          return { resultJson: JSON.stringify(result) };
        },
        startUpstreamAuthorization: async (req) => {
          const r = await federation.startAuthorization(tenant(req.tenantId), req.name, req.humanId, req.bindingSha256);
          return { authorizationUrl: r.authorization_url, expiresAt: r.expires_at.toISOString() };
        },
        completeUpstreamAuthorization: async (req) => {
          const r = await federation.completeAuthorization({ state: req.state, code: req.code, bindingSha256: req.bindingSha256, error: req.error || undefined });
          return { tenantId: r.tenantId, userId: r.userId, upstream: toUpstream(r.view) };
        },
        disconnectUpstream: async (req) => toUpstream(await federation.disconnect(tenant(req.tenantId), req.name, req.userId, req.humanId || 'unknown')),
        setToolApproval: async (req) => {
          await federation.setToolApproval(tenant(req.tenantId), req.mode);
          return {};
        },
      },
      logger,
    ),
  };
}
