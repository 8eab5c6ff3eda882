/**
 * Upstream MCP servers (/upstreams/*, docs/federation.md): register (the credential is sealed by the
 * vault's HSM and never comes back), list, read, delete, refresh, the tools of an upstream with their
 * pinned and quarantined definitions, and a human's approval of a quarantined definition. Thin: validate,
 * call the vault's FederationService over gRPC, present. An agent-scoped key reaches none of it (403,
 * key-scope.middleware.ts); approving a definition follows the approvals' rule (approvals_require_human),
 * and so do registering a name that keeps the pins of a deleted upstream and discarding those pins: the
 * gateway tells the vault who asks (`HumanGate`), the vault knows what the name keeps.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { federation as pb } from '@agw/proto';
import { ForbiddenError, InputError, type Json, fromAnswerJson, jsonOf, objectFromAnswerJson } from '@agw/shared';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { UpstreamsFeature } from '../../features/upstreams.feature';
import { addPaths, jsonBody, optionalJsonBody, pathParam, queryParam } from '../../openapi/openapi';
import { errors, reply, replyInTurns, response, timestamp } from '../../openapi/schema';
import { UPSTREAM_NAME, UPSTREAM_NAME_PATTERN } from '../../federation/upstream-names';
import { nameParam, orNull } from '../params';
import { type AuthContext, authOf } from '../request-context';
import { parseWith } from '../validation';
import { assertMayDecide, deciderOf, isHumanSession } from './approvals.routes';
import { callerOf } from './settings.routes';

const glob = z.string().regex(/^[A-Za-z0-9_.*?-]{1,128}$/, 'a pattern is 1-128 of A-Z a-z 0-9 _ . - and the wildcards * ?');
const secret = z.string().min(1).max(8192);

export const upstreamCredentialSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('bearer'), value: secret }).strict(),
    z.object({ type: z.literal('header'), header_name: z.string().min(1).max(128), value: secret }).strict(),
    z
      .object({
        type: z.literal('oauth_client_credentials'),
        token_url: z.string().min(1).max(2048),
        client_id: z.string().min(1).max(512),
        client_secret: secret,
        scope: z.string().max(1024).optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal('oauth'),
        client_id: z.string().min(1).max(512).optional().meta({ description: 'a client registered for the gateway at the upstream\'s authorization server; without it the gateway identifies itself (Client ID Metadata Document, else dynamic registration)' }),
        client_secret: secret.optional(),
        scope: z.string().max(1024).optional(),
      })
      .strict()
      .meta({ description: 'the MCP authorization flow: a human connects (POST /api/upstreams/{name}/connect), the tokens are sealed by the HSM (docs/federation.md, "Upstreams that need OAuth")' }),
  ])
  .meta({ id: 'UpstreamCredential', description: 'write-only: sealed by the HSM, never returned, logged or shown to an agent' });

export const registerUpstreamSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$/, 'name is a-z 0-9 _ - starting and ending with a letter or digit')
      .refine((n) => !n.includes('__'), 'name must not contain "__" (the separator of federated tool names)')
      .meta({ description: 'the prefix of its tools\' federated names `<name>__<tool>`; a name that keeps the pins of a deleted upstream gets them back' }),
    url: z.string().min(1).max(2048),
    transport: z.enum(['streamable_http', 'sse']).optional(),
    credential: upstreamCredentialSchema.optional(),
    tools: z
      .object({ include: z.array(glob).max(64).optional(), exclude: z.array(glob).max(64).optional() })
      .strict()
      .optional(),
    description: z.string().max(1024).optional(),
    timeout_ms: z.number().int().min(100).max(120_000).optional().meta({ description: 'one call\'s timeout (default FEDERATION_CALL_TIMEOUT_MS, 30 s)' }),
    connection: z.enum(['shared', 'per_user']).optional().meta({ description: 'credential oauth: one connection for the tenant (shared, the default) or each human their own (per_user)' }),
  })
  .strict();

const changeSchema = z.object({ path: z.string(), before: z.unknown().optional(), after: z.unknown().optional() });
const markerSchema = z.object({ rule: z.string(), path: z.string(), excerpt: z.string() });

export const upstreamToolSchema = z
  .object({
    name: z.string(),
    federated_name: z.string().meta({ description: '<upstream>__<tool>, the name MCP clients see' }),
    state: z.enum(['active', 'quarantined', 'absent']),
    reason: z.string().nullable().meta({ description: 'quarantined: tool_definition_changed | suspicious_description | approval_required' }),
    definition: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the pinned definition (name, title, description, inputSchema, outputSchema, annotations)' }),
    definition_sha256: z.string().nullable(),
    candidate: z.record(z.string(), z.unknown()).nullable().meta({ description: 'quarantined: the definition the upstream offers now, waiting for a human' }),
    candidate_sha256: z.string().nullable(),
    markers: z.array(markerSchema).meta({ description: 'tool-poisoning markers found in the candidate' }),
    diff: z.array(changeSchema).meta({ description: 'pinned -> candidate, one entry per changed JSON path' }),
    first_seen_at: timestamp(),
    updated_at: timestamp(),
    approved_at: timestamp().nullable(),
    approved_by: z.string().nullable(),
  })
  .meta({ id: 'UpstreamTool' });

export const upstreamSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    transport: z.string(),
    description: z.string().nullable(),
    credential: z.object({ type: z.string(), header_name: z.string().optional() }).nullable().meta({ description: 'the credential\'s type; its value never comes back' }),
    tools_filter: z.object({ include: z.array(z.string()), exclude: z.array(z.string()) }),
    status: z.enum(['connected', 'error', 'needs_authorization']).meta({ description: 'needs_authorization: credential oauth and no usable connection (never made, refused or revoked): a human connects it' }),
    status_reason: z.string().nullable(),
    server: z.object({ name: z.string(), version: z.string(), protocol_version: z.string() }).nullable(),
    tool_count: z.number().int().meta({ description: 'active tools' }),
    quarantined_count: z.number().int(),
    timeout_ms: z.number().int().nullable(),
    created_at: timestamp(),
    refreshed_at: timestamp().nullable(),
    tools: z.array(upstreamToolSchema).optional(),
    connection: z.enum(['shared', 'per_user']),
    authorization: z
      .object({
        server: z.string().meta({ description: 'the authorization server discovered (RFC 9728)' }),
        client_registration: z.string().meta({ description: 'metadata_document | dynamic | pre_registered' }),
        connected: z.boolean().meta({ description: 'shared: the tenant\'s connection exists; per_user: the caller\'s own' }),
        connections: z
          .array(z.object({ user_id: z.string().nullable().meta({ description: 'null: the shared connection' }), connected_by: z.string().nullable(), connected_at: timestamp(), expires_at: timestamp().nullable(), scope: z.string().nullable() }))
          .meta({ description: 'who is connected (never a token); per_user: every human\'s for owners and admins, the caller\'s own otherwise' }),
        connect: z.string().meta({ description: 'POST here (a signed-in human) for the authorization URL' }),
      })
      .nullable()
      .meta({ description: 'credential oauth: the authorization state' }),
  })
  .meta({ id: 'Upstream' });

const listResponse = z.object({ upstreams: z.array(upstreamSchema), count: z.number().int() });
const toolsResponse = z.object({ tools: z.array(upstreamToolSchema), count: z.number().int() });
const deletedResponse = z
  .object({
    status: z.enum(['deleted', 'pins_discarded']).meta({ description: 'pins_discarded: the name was no longer registered; what it kept is gone' }),
    name: z.string(),
    retained_tools: z.number().int().meta({ description: 'tools whose pin or quarantine the name keeps: registering it again applies them (docs/federation.md, "Pins outlive deletion")' }),
    discarded_tools: z.number().int().meta({ description: 'discard_pins=true: the pinned or quarantined tools dropped' }),
  })
  .meta({ id: 'DeletedUpstream' });
const deleteQuery = z.object({ discard_pins: z.enum(['true', 'false']).optional() });
const approveBody = z.object({ definition_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional() }).strict().optional().nullable();

const parsed = (json: Json | undefined, field: string) => (json ? objectFromAnswerJson(json, field) : null);

function presentTool(t: pb.UpstreamTool): z.infer<typeof upstreamToolSchema> {
  return {
    name: t.name,
    federated_name: t.federated_name,
    state: t.state as 'active' | 'quarantined' | 'absent',
    reason: orNull(t.reason),
    definition: parsed(jsonOf(t, 'pinned'), 'pinned'),
    definition_sha256: orNull(t.pinned_sha256),
    candidate: parsed(jsonOf(t, 'candidate'), 'candidate'),
    candidate_sha256: orNull(t.candidate_sha256),
    markers: t.markers.map((m) => ({ rule: m.rule, path: m.path, excerpt: m.excerpt })),
    diff: t.diff.map((c) => {
      const [before, after] = [jsonOf(c, 'before'), jsonOf(c, 'after')];
      return { path: c.path, ...(before ? { before: fromAnswerJson(before, 'before') } : {}), ...(after ? { after: fromAnswerJson(after, 'after') } : {}) };
    }),
    first_seen_at: t.first_seen_at,
    updated_at: t.updated_at,
    approved_at: orNull(t.approved_at),
    approved_by: orNull(t.approved_by),
  };
}

/** Owners and admins see every human's connection of a per_user upstream; the others their own. */
function presentAuthorization(u: pb.Upstream, viewer: AuthContext | undefined): z.infer<typeof upstreamSchema>['authorization'] {
  if (u.credential_type !== 'oauth') return null;
  const perUser = u.connection === 'per_user';
  const seesAll = !viewer?.role || viewer.role === 'owner' || viewer.role === 'admin';
  const mine = (c: pb.UpstreamConnection) => !perUser || c.user_id === viewer?.userId;
  return {
    server: u.authorization_server,
    client_registration: u.client_registration,
    connected: u.connections.some((c) => (perUser ? c.user_id === viewer?.userId : c.user_id === '')),
    connections: u.connections
      .filter((c) => seesAll || mine(c))
      .map((c) => ({ user_id: c.user_id || null, connected_by: orNull(c.connected_by), connected_at: c.connected_at, expires_at: orNull(c.expires_at), scope: orNull(c.scope) })),
    connect: `/api/upstreams/${u.name}/connect`,
  };
}

function presentUpstream(u: pb.Upstream, withTools: boolean, viewer?: AuthContext): z.infer<typeof upstreamSchema> {
  return {
    name: u.name,
    url: u.url,
    transport: u.transport,
    description: orNull(u.description),
    credential: u.credential_type && u.credential_type !== 'none' ? { type: u.credential_type, ...(u.credential_header_name ? { header_name: u.credential_header_name } : {}) } : null,
    tools_filter: { include: u.include, exclude: u.exclude },
    status: u.status === 'connected' || u.status === 'needs_authorization' ? u.status : 'error',
    status_reason: orNull(u.status_reason),
    server: u.server_name || u.protocol_version ? { name: u.server_name, version: u.server_version, protocol_version: u.protocol_version } : null,
    tool_count: u.tool_count,
    quarantined_count: u.quarantined_count,
    timeout_ms: u.timeout_ms || null,
    created_at: u.created_at,
    refreshed_at: orNull(u.refreshed_at),
    ...(withTools ? { tools: u.tools.map(presentTool) } : {}),
    connection: u.connection === 'per_user' ? 'per_user' : 'shared',
    authorization: presentAuthorization(u, viewer),
  };
}

/** An upstream with its tools, written a tool per turn of the event loop (its definitions may add up to megabytes). */
const replyUpstream = (res: Response, u: pb.Upstream, viewer: AuthContext, status = 200) =>
  replyInTurns(res, upstreamSchema, presentUpstream({ ...u, tools: [] }, true, viewer), 'tools', u.tools, presentTool, status);

const upstreamParam = (v: string | undefined) => nameParam(v, 'Upstream', UPSTREAM_NAME);
const toolParam = (v: string | undefined) => nameParam(v, 'Tool', /^[A-Za-z0-9_.-]{1,128}$/);

export function upstreamRoutes(d: UpstreamsFeature): Router {
  const r = Router();
  const f = d.federation.client;
  /** what this replica changed is dropped here at once (the vault tells the other replicas over NATS) */
  const changed = <T>(tenantId: string, v: T) => {
    d.federation.invalidate(tenantId);
    return v;
  };
  const toolApproval = async (tenantId: string) => (await d.settings.stored(tenantId)).upstream_tool_approval ?? 'auto';
  /** who asks, for the vault's human-only steps (a name's kept pins) */
  const gateOf = async (auth: AuthContext): Promise<pb.HumanGate> => ({
    human: isHumanSession(auth),
    require_human: Boolean((await d.settings.stored(auth.tenantId)).approvals_require_human),
    caller: callerOf(auth),
  });

  r.post('/upstreams', async (req, res) => {
    const b = parseWith(registerUpstreamSchema, req.body, 'body');
    const auth = authOf(req);
    const { tenantId } = auth;
    const c = b.credential;
    const u = await f.registerUpstream({
      tenant_id: tenantId,
      name: b.name,
      url: b.url,
      transport: b.transport ?? '',
      credential: c
        ? {
            type: c.type,
            value: 'value' in c ? c.value : '',
            header_name: c.type === 'header' ? c.header_name : '',
            token_url: c.type === 'oauth_client_credentials' ? c.token_url : '',
            client_id: c.type === 'oauth_client_credentials' || c.type === 'oauth' ? (c.client_id ?? '') : '',
            client_secret: c.type === 'oauth_client_credentials' || c.type === 'oauth' ? (c.client_secret ?? '') : '',
            scope: c.type === 'oauth_client_credentials' || c.type === 'oauth' ? (c.scope ?? '') : '',
          }
        : undefined,
      connection: b.connection ?? '',
      oauth_redirect_uri: c?.type === 'oauth' ? callbackUrl(d) : '',
      oauth_client_metadata_url: c?.type === 'oauth' ? clientMetadataUrl(d) : '',
      include: b.tools?.include ?? [],
      exclude: b.tools?.exclude ?? [],
      description: b.description ?? '',
      tool_approval: await toolApproval(tenantId),
      timeout_ms: b.timeout_ms ?? 0,
      gate: await gateOf(auth),
    });
    await replyUpstream(res, changed(tenantId, u), auth, 201);
  });
  r.get('/upstreams', async (req, res) => {
    const auth = authOf(req);
    const { upstreams } = await f.listUpstreams({ tenant_id: auth.tenantId });
    reply(res, listResponse, { upstreams: upstreams.map((u) => presentUpstream(u, false, auth)), count: upstreams.length });
  });
  r.get('/upstreams/:name', async (req, res) => {
    const auth = authOf(req);
    await replyUpstream(res, await f.getUpstream({ tenant_id: auth.tenantId, name: upstreamParam(req.params.name), tool_approval: '' }), auth);
  });
  /**
   * A signed-in human starts connecting an oauth upstream: the authorization URL, and an HttpOnly cookie
   * that binds the callback to this browser (its SHA-256 is kept with the state). shared: owners and
   * admins connect the tenant's; per_user: every member connects their own.
   */
  r.post('/upstreams/:name/connect', async (req, res) => {
    const auth = authOf(req);
    const name = upstreamParam(req.params.name);
    const humanId = humanOf(auth, 'connect an upstream');
    const u = await f.getUpstream({ tenant_id: auth.tenantId, name, tool_approval: '' });
    if (u.credential_type === 'oauth' && u.connection !== 'per_user') mayManage(auth, `connect upstream "${name}" for the whole tenant`);
    const binding = randomBytes(32).toString('base64url');
    const started = await f.startUpstreamAuthorization({ tenant_id: auth.tenantId, name, human_id: humanId, binding_sha256: sha256(binding) });
    res.cookie(BINDING_COOKIE, binding, { httpOnly: true, sameSite: 'lax', secure: d.config.profile !== 'local', path: CALLBACK_PATH, maxAge: 10 * 60_000 });
    reply(res, connectResponse, { authorization_url: started.authorization_url, expires_at: started.expires_at, connection: u.connection === 'per_user' ? 'per_user' : 'shared' });
  });
  /** Removes a connection: the shared one (owners and admins), or the caller's own of a per_user upstream. */
  r.delete('/upstreams/:name/connection', async (req, res) => {
    const auth = authOf(req);
    const name = upstreamParam(req.params.name);
    const q = parseWith(disconnectQuery, { user_id: req.query.user_id }, 'query');
    const u = await f.getUpstream({ tenant_id: auth.tenantId, name, tool_approval: '' });
    let userId = '';
    if (u.connection === 'per_user') {
      userId = q.user_id ?? humanOf(auth, 'disconnect their own connection');
      if (userId !== auth.userId) mayManage(auth, 'remove another human\'s connection');
    } else mayManage(auth, `disconnect upstream "${name}" for the whole tenant`);
    const out = await f.disconnectUpstream({ tenant_id: auth.tenantId, name, user_id: userId, human_id: auth.userId ?? callerOf(auth) });
    reply(res, upstreamSchema, changed(auth.tenantId, presentUpstream(out, false, auth)));
  });
  r.delete('/upstreams/:name', async (req, res) => {
    const auth = authOf(req);
    const name = upstreamParam(req.params.name);
    const q = parseWith(deleteQuery, { discard_pins: req.query.discard_pins }, 'query');
    const u = await f.deleteUpstream({ tenant_id: auth.tenantId, name, discard_pins: q.discard_pins === 'true', gate: await gateOf(auth) });
    reply(
      res,
      deletedResponse,
      changed(auth.tenantId, { status: u.url ? ('deleted' as const) : ('pins_discarded' as const), name: u.name, retained_tools: u.retained_tools, discarded_tools: u.discarded_tools }),
    );
  });
  r.post('/upstreams/:name/refresh', async (req, res) => {
    const auth = authOf(req);
    const { tenantId } = auth;
    const u = await f.refreshUpstream({ tenant_id: tenantId, name: upstreamParam(req.params.name), tool_approval: await toolApproval(tenantId) });
    await replyUpstream(res, changed(tenantId, u), auth);
  });
  r.get('/upstreams/:name/tools', async (req, res) => {
    const { tools } = await f.listUpstreamTools({ tenant_id: authOf(req).tenantId, name: upstreamParam(req.params.name), tool_approval: '' });
    await replyInTurns(res, toolsResponse, { tools: [], count: tools.length }, 'tools', tools, presentTool);
  });
  r.post('/upstreams/:name/tools/:tool/approve', async (req, res) => {
    const auth = authOf(req);
    const upstream = upstreamParam(req.params.name);
    const tool = toolParam(req.params.tool);
    const body = parseWith(approveBody, req.body && Object.keys(req.body).length ? req.body : undefined, 'body');
    await assertMayDecide(d, auth, 'approve a tool definition');
    const t = await f.approveTool({ tenant_id: auth.tenantId, upstream, tool, approved_by: deciderOf(auth), definition_sha256: body?.definition_sha256 ?? '' });
    reply(res, upstreamToolSchema, changed(auth.tenantId, presentTool(t)));
  });
  return r;
}

const BINDING_COOKIE = 'agw_upstream_oauth';
/** the callback's path (the binding cookie is sent there only) */
const CALLBACK_PATH = '/api/upstreams/oauth/callback';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const callbackUrl = (d: Pick<UpstreamsFeature, 'config'>) => `${d.config.publicBaseUrl.replace(/\/+$/, '')}/upstreams/oauth/callback`;
const clientMetadataUrl = (d: Pick<UpstreamsFeature, 'config'>) => `${d.config.publicBaseUrl.replace(/\/+$/, '')}/upstreams/oauth/client-metadata.json`;
const consoleToolsUrl = (d: Pick<UpstreamsFeature, 'config'>) => `${new URL(d.config.publicBaseUrl).origin}/tools`;

const connectResponse = z
  .object({
    authorization_url: z.string().meta({ description: 'open it in the browser that made this request (it carries the binding cookie): the upstream\'s sign-in and consent, then back to the gateway\'s callback' }),
    expires_at: timestamp(),
    connection: z.enum(['shared', 'per_user']),
  })
  .meta({ id: 'UpstreamConnect' });
const disconnectQuery = z.object({ user_id: z.string().min(1).max(128).optional() });
const callbackQuery = z.object({ state: z.string().max(512).optional(), code: z.string().max(4096).optional(), error: z.string().max(256).optional() });
const clientMetadataSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.string(),
  })
  .meta({ id: 'UpstreamClientMetadata' });
const completedSchema = z.object({ status: z.literal('connected'), upstream: z.string(), connection: z.enum(['shared', 'per_user']) }).meta({ id: 'UpstreamConnected' });

/** The signed-in human of a request (a console session, not one made from an API key), or 403. */
function humanOf(auth: AuthContext, what: string): string {
  if (!isHumanSession(auth) || !auth.userId) throw new ForbiddenError(`Only a signed-in human may ${what} (sign in with POST /api/auth/login and send the session token; an API key or an agent cannot consent at the upstream)`);
  return auth.userId;
}

/** Owners and admins (and the tenant API key, which acts as the owner) only. */
function mayManage(auth: AuthContext, what: string): void {
  if (auth.role && auth.role !== 'owner' && auth.role !== 'admin') throw new ForbiddenError(`Only an owner or an admin may ${what}; your role is ${auth.role}`);
}

function bindingOf(req: Request): string {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === BINDING_COOKIE) return v.join('=');
  }
  return '';
}

/**
 * The public routes of upstream OAuth (no credentials: the state and the binding cookie are): the
 * authorization server's redirect back, and the gateway's Client ID Metadata Document.
 */
export function upstreamOAuthPublicRoutes(d: UpstreamsFeature): Router {
  const r = Router();
  r.get('/upstreams/oauth/callback', async (req: Request, res: Response) => {
    const q = parseWith(callbackQuery, { state: req.query.state, code: req.query.code, error: req.query.error }, 'query');
    const binding = bindingOf(req);
    res.clearCookie(BINDING_COOKIE, { httpOnly: true, sameSite: 'lax', secure: d.config.profile !== 'local', path: CALLBACK_PATH });
    if (!q.state) throw InputError.at(['query', 'state'], 'The authorization could not be completed: no state came back (open this page from the upstream\'s authorization server)', 'missing');
    const done = await d.federation.client.completeUpstreamAuthorization({ state: q.state, code: q.code ?? '', binding_sha256: binding ? sha256(binding) : '', error: q.error ?? '' });
    const name = done.upstream?.name ?? '';
    d.federation.invalidate(done.tenant_id);
    const connection = done.upstream?.connection === 'per_user' ? 'per_user' : 'shared';
    if ((req.get('accept') ?? '').includes('text/html')) {
      // the console's Tools page, the upstream selected (its session resumes with the refresh cookie)
      res.redirect(302, `${consoleToolsUrl(d)}/${encodeURIComponent(name)}`);
      return;
    }
    reply(res, completedSchema, { status: 'connected', upstream: name, connection });
  });
  r.get('/upstreams/oauth/client-metadata.json', (_req, res) => {
    reply(res, clientMetadataSchema, {
      client_id: clientMetadataUrl(d),
      client_name: 'Agent Governance Gateway',
      redirect_uris: [callbackUrl(d)],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });
  return r;
}

const nameParams = [pathParam('name', { type: 'string', pattern: UPSTREAM_NAME_PATTERN })];
addPaths({
  '/upstreams': {
    post: {
      summary: 'Register an upstream MCP server: the gateway connects, reads its tools and pins their definitions (docs/federation.md)',
      requestBody: jsonBody(registerUpstreamSchema),
      responses: {
        201: response('registered; status says whether it is connected (an unreachable upstream is registered with status error and the reason)', upstreamSchema),
        403: errors[403]('the name keeps the pins of a deleted upstream and approvals_require_human is on: only a signed-in human may register it again'),
        409: errors[409]('the name is taken, or the tenant holds FEDERATION_MAX_UPSTREAMS upstreams and names that keep pins'),
        422: errors[422](),
      },
    },
    get: { summary: 'The tenant\'s upstream MCP servers with their health', responses: { 200: response('upstreams', listResponse) } },
  },
  '/upstreams/{name}': {
    get: { parameters: nameParams, summary: 'One upstream with its tools', responses: { 200: response('the upstream', upstreamSchema), 404: errors[404]() } },
    delete: {
      parameters: [
        ...nameParams,
        {
          name: 'discard_pins',
          in: 'query',
          required: false,
          schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
          description: 'true: drop the pinned and quarantined tools instead of keeping them for the name (also for a name no longer registered)',
        },
      ],
      summary: 'Remove an upstream (its tools leave every tools/list); its pins stay with its name unless a human discards them',
      responses: {
        200: response('deleted', deletedResponse),
        403: errors[403]('discard_pins=true with approvals_require_human on: only a signed-in human may'),
        404: errors[404](),
        422: errors[422](),
      },
    },
  },
  '/upstreams/{name}/connect': {
    post: {
      parameters: nameParams,
      summary: 'A signed-in human starts connecting an oauth upstream: the authorization URL (PKCE S256, resource indicator) and a binding cookie for the callback. shared: owners and admins; per_user: every member, their own',
      responses: {
        200: response('open authorization_url in this browser', connectResponse),
        403: errors[403]('not a signed-in human, or a shared upstream and not an owner or admin'),
        404: errors[404](),
        409: errors[409]('the upstream\'s credential is not oauth'),
      },
    },
  },
  '/upstreams/{name}/connection': {
    delete: {
      parameters: [...nameParams, { name: 'user_id', in: 'query', required: false, schema: { type: 'string' }, description: 'per_user: whose connection (owners and admins); default the caller\'s own' }],
      summary: 'Remove a connection (the shared one, or a human\'s own): its tokens are revoked at the upstream\'s authorization server where it offers revocation (RFC 7009)',
      responses: { 200: response('the upstream', upstreamSchema), 403: errors[403](), 404: errors[404]('no such upstream or connection'), 409: errors[409]('the upstream\'s credential is not oauth') },
    },
  },
  '/upstreams/oauth/callback': {
    get: {
      security: [],
      summary: 'The upstream authorization server\'s redirect back: the state (single use, bound to the browser that started it) and the code; the tokens are sealed by the HSM',
      parameters: [
        queryParam('state'),
        queryParam('code'),
        queryParam('error'),
      ],
      responses: {
        200: response('connected (JSON when the request does not accept text/html)', completedSchema),
        302: { description: 'a browser: to the console\'s Tools page' },
        401: errors[401]('unknown, used, expired or unbound state, or the code exchange failed'),
        422: errors[422]('no state in the query'),
      },
    },
  },
  '/upstreams/oauth/client-metadata.json': {
    get: {
      security: [],
      summary: 'The gateway\'s Client ID Metadata Document as an OAuth client of upstream authorization servers (its URL is the client_id where the server supports them)',
      responses: { 200: response('the client metadata (RFC 7591 fields)', clientMetadataSchema) },
    },
  },
  '/upstreams/{name}/refresh': {
    post: { parameters: nameParams, summary: 'Read the upstream\'s tools again (changed definitions are quarantined)', responses: { 200: response('the upstream', upstreamSchema), 404: errors[404]() } },
  },
  '/upstreams/{name}/tools': {
    get: { parameters: nameParams, summary: 'Every tool seen on the upstream: active, quarantined (with the diff and markers), absent', responses: { 200: response('tools', toolsResponse), 404: errors[404]() } },
  },
  '/upstreams/{name}/tools/{tool}/approve': {
    post: {
      parameters: [...nameParams, pathParam('tool', { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' })],
      summary: 'A human approves a quarantined tool\'s candidate definition: it becomes the pinned one',
      requestBody: optionalJsonBody(approveBody.unwrap().unwrap()),
      responses: {
        200: response('the tool, now active', upstreamToolSchema),
        403: errors[403]('approvals_require_human: only a signed-in human may approve; an agent-scoped key never'),
        404: errors[404](),
        409: errors[409]('not quarantined, or the candidate changed since definition_sha256 was reviewed'),
        422: errors[422](),
      },
    },
  },
});
