/** gRPC adapter of the vault: translate messages, call the domain modules, nothing else. */
import { vault as pb, unsetAsUndefined } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, MCP_LOG_LEVELS, type McpLogLevel, bindService, encryptResponse, envelopeOfDecryptRequest, fromJson, isMcpLogLevel, jsonField, jsonOf, mcpRoundOfRequest, objectFromJson, requiredField, sealedSecretOfRequest, withPreviousJson } from '@agw/shared';
import type { BrokeredExecutor } from '../broker/brokered-executor';
import type { CallRound } from '../federation/upstream-connections';
import type { CallNotification, NotificationWish } from '../federation/call-notifications';
import type { AccessLogRepository } from '../credentials/access-log.repository';
import type { CredentialMeta } from '../credentials/credential.repository';
import type { CredentialStore } from '../credentials/credential-store';
import type { HsmBackend } from '../hsm/hsm-backend';
import type { Keyring } from '../keys/keyring';
import type { VaultMetrics } from '../metrics';
import type { DataSubjects } from '../pii/data-subjects';
import type { PiiProtector } from '../pii/pii-protector';
import type { SubjectEnvelopes } from '../pii/subject-envelopes';
import type { SubjectRow } from '../pii/subject.repository';
import type { ServiceSecrets } from '../secrets/service-secrets';

export interface VaultDomain {
  hsm: HsmBackend;
  keyring: Keyring;
  pii: PiiProtector;
  subjects: DataSubjects;
  envelopes: SubjectEnvelopes;
  credentials: CredentialStore;
  accessLog: AccessLogRepository;
  broker: BrokeredExecutor;
  secrets: ServiceSecrets;
  metrics?: VaultMetrics;
}

/** The relayed multi round-trip of a federated tools/call (ExecuteRequest.mcp_round), and the caller's cancellation. */
function roundOf(round: pb.McpRound | undefined, cancelled: AbortSignal | undefined, notifications?: NotificationWish): CallRound | undefined {
  if (!round) return cancelled || notifications ? { ...(cancelled ? { signal: cancelled } : {}), ...(notifications ? { notifications } : {}) } : undefined;
  return {
    relay: round.relay,
    ...(round.client_capabilities ? { clientCapabilities: objectFromJson(round.client_capabilities, 'mcp_round.client_capabilities') } : {}),
    ...(round.input_responses ? { inputResponses: objectFromJson(round.input_responses, 'mcp_round.input_responses') } : {}),
    ...(round.request_state !== undefined ? { requestState: round.request_state } : {}),
    ...(cancelled ? { signal: cancelled } : {}),
    ...(notifications ? { notifications } : {}),
  };
}

/** What an ExecuteStream call relays (ExecuteRequest.relay_progress, relay_log_level), written as events. */
function wishOf(req: pb.ExecuteRequest, send: (event: pb.ExecuteEvent) => void): NotificationWish {
  const level = req.relay_log_level;
  if (level && !isMcpLogLevel(level)) throw InputError.at(['relay_log_level'], `must be one of ${MCP_LOG_LEVELS.join(', ')}`, 'enum');
  return {
    progress: req.relay_progress,
    ...(level ? { logLevel: level as McpLogLevel } : {}),
    send: (n: CallNotification) =>
      send(
        n.kind === 'progress'
          ? { progress: { progress: n.progress, ...(n.total !== undefined ? { total: n.total } : {}), ...(n.message !== undefined ? { message: n.message } : {}) } }
          : { log: { level: n.level, ...(n.logger !== undefined ? { logger: n.logger } : {}), ...withPreviousJson('data', n.data) } },
      ),
  };
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : '');

function toCredential(c: CredentialMeta): pb.Credential {
  return {
    tool_id: c.tool_id,
    name: c.name,
    credential_type: c.credential_type,
    upstream_url: c.upstream_url ?? '',
    upstream_method: c.upstream_method,
    header_name: c.header_name ?? '',
    registered_at: iso(c.registered_at),
    key_id: c.key_id,
  };
}

function toSubject(s: SubjectRow): pb.Subject {
  return {
    subject_id: s.subject_id,
    key_id: s.key_id,
    status: s.erased_at ? 'erased' : 'active',
    created_at: iso(s.created_at),
    erased_at: iso(s.erased_at),
    action_count: s.action_count,
    pii_kinds: s.pii_kinds,
    source: s.source,
  };
}

export function vaultGrpcService(d: VaultDomain, logger: Logger): GrpcServiceBinding {
  const tenant = (t: string) => requiredField(t, 'tenant_id');
  /** Execute and ExecuteStream: the call, its access-log entry and metrics. */
  const execute = async (req: pb.ExecuteRequest, cancelled: AbortSignal | undefined, notifications?: NotificationWish): Promise<pb.ExecuteResponse> => {
    const round = roundOf(mcpRoundOfRequest(req), cancelled, notifications);
    const r = await d.broker.execute(tenant(req.tenant_id), {
      actionId: req.action_id,
      agentId: req.agent_id,
      tool: req.tool,
      method: req.method,
      params: objectFromJson(jsonOf(req, 'params'), 'params'),
      origin: req.origin === 'approval' ? 'approval' : 'tool_call',
      userId: req.user_id || undefined,
      ...(round ? { round } : {}),
    });
    if (r.brokered) {
      d.metrics?.brokered.inc({ outcome: r.outcome });
      d.metrics?.hsmFetchSeconds.observe(r.hsmFetchMs / 1000);
      if (r.executionMs) d.metrics?.brokeredSeconds.observe(r.executionMs / 1000);
    }
    return {
      brokered: r.brokered,
      status_code: r.statusCode,
      ...jsonField('body', r.brokered ? (r.body ?? null) : undefined),
      hsm_fetch_ms: r.hsmFetchMs,
      execution_ms: r.executionMs,
      credential_name: r.credentialName,
      outcome: r.outcome,
      mcp_result: r.mcpResult ?? false,
    };
  };
  return bindService(
    pb.VaultServiceService,
    {
      protectParams: async (req) => {
        const r = await d.pii.protect(tenant(req.tenant_id), req.action_id, objectFromJson(jsonOf(req, 'params'), 'params'));
        d.metrics?.protectedCalls.inc({ pii_detected: String(r.piiDetected) });
        return { pii_detected: r.piiDetected, ...jsonField('stored_params', r.storedParams), subject_ids: r.subjectIds, pii_kinds: r.kinds };
      },
      revealParams: async (req) => {
        const r = await d.pii.reveal(tenant(req.tenant_id), fromJson(jsonOf(req, 'params'), 'params', {}));
        return { ...jsonField('params', r.params), erased_subjects: r.erasedSubjects };
      },
      execute: (req, _metadata, cancelled) => execute(req, cancelled),
      // a federated call's progress and log messages as the upstream sends them, then its answer
      executeStream: async (req, _metadata, cancelled, send) => ({ response: await execute(req, cancelled, wishOf(req, send)) }),
      registerCredential: async (req) =>
        toCredential(
          await d.credentials.register(tenant(req.tenant_id), {
            tool_id: req.tool_id,
            name: req.name,
            value: req.value,
            ...unsetAsUndefined(req, ['credential_type', 'upstream_url', 'upstream_method', 'header_name']),
          }),
        ),
      listCredentials: async (req) => ({ credentials: (await d.credentials.list(tenant(req.tenant_id))).map(toCredential) }),
      getCredentialStatus: async (req) => {
        const c = await d.credentials.status(tenant(req.tenant_id), req.tool_id);
        return c
          ? { tool_id: req.tool_id, registered: true, name: c.name, credential_type: c.credential_type, registered_at: iso(c.registered_at) }
          : { tool_id: req.tool_id, registered: false, name: '', credential_type: '', registered_at: '' };
      },
      deleteCredential: async (req) => toCredential(await d.credentials.delete(tenant(req.tenant_id), req.tool_id, req.name)),
      listAccessLog: async (req) => ({
        entries: (await d.accessLog.list(tenant(req.tenant_id), { limit: Math.min(Math.max(req.limit || 200, 1), 1000), toolId: req.tool_id || undefined })).map((e) => ({
          id: e.id,
          at: iso(e.at),
          agent_id: e.agent_id,
          tool_id: e.tool_id,
          credential_name: e.credential_name,
          action_id: e.action_id ?? '',
          origin: e.origin,
          outcome: e.outcome,
          status_code: e.status_code ?? 0,
          hsm_fetch_ms: e.hsm_fetch_ms ?? 0,
          execution_ms: e.execution_ms ?? 0,
          error: e.error ?? '',
        })),
      }),
      listSubjects: async (req) => ({ subjects: (await d.subjects.listSubjects(tenant(req.tenant_id))).map(toSubject) }),
      lookupSubject: async (req) => {
        const r = await d.subjects.lookup(tenant(req.tenant_id), req.identifier, req.kind || undefined);
        return r.known
          ? toSubject(r.known)
          : { subject_id: r.subject_id, key_id: '', status: 'unknown', created_at: '', erased_at: '', action_count: 0, pii_kinds: [r.kind], source: 'derived' };
      },
      eraseSubject: async (req) => {
        const r = await d.subjects.erase(tenant(req.tenant_id), req.subject_id);
        if (!r.alreadyErased) d.metrics?.erasures.inc();
        return { subject_id: req.subject_id, action_ids: r.actionIds, already_erased: r.alreadyErased, erased_at: iso(r.erasedAt) };
      },
      getSubjectStatus: async (req) => {
        const { row, keyExists } = await d.subjects.status(tenant(req.tenant_id), req.subject_id);
        return {
          subject_id: row.subject_id,
          erased: row.erased_at !== null,
          key_exists: keyExists,
          key_id: row.key_id,
          status: row.erased_at ? 'erased' : 'active',
          created_at: iso(row.created_at),
          erased_at: iso(row.erased_at),
        };
      },
      filterErasedSubjects: async (req) => ({
        tenant_id: req.tenant_id,
        subject_ids: [...(await d.subjects.erasedAmong(tenant(req.tenant_id), req.subject_ids.slice(0, 10_000)))],
      }),
      createKey: async (req) => {
        const { row, created } = await d.subjects.createSubjectKey(tenant(req.tenant_id), { subjectId: req.subject_id || undefined, identifier: req.identifier || undefined });
        return {
          key_id: row.key_id,
          purpose: 'pii_subject',
          subject_id: row.subject_id,
          status: 'active',
          created_at: iso(row.created_at),
          destroyed_at: '',
          algorithm: 'AES-256-GCM',
          backend: d.hsm.name,
          created,
        };
      },
      listKeys: async (req) => ({
        keys: (await d.keyring.list(tenant(req.tenant_id))).map((k) => ({
          key_id: k.key_id,
          purpose: k.purpose,
          subject_id: k.subject_id ?? '',
          status: k.destroyed_at ? 'destroyed' : 'active',
          created_at: iso(k.created_at),
          destroyed_at: iso(k.destroyed_at),
          algorithm: k.purpose === 'subject_hmac' ? 'HMAC-SHA-256' : 'AES-256-GCM',
          backend: k.backend,
          created: false,
        })),
      }),
      encrypt: async (req) => {
        const env = await d.envelopes.encrypt(tenant(req.tenant_id), req.subject_id, fromJson(jsonOf(req, 'plaintext'), 'plaintext', null));
        return encryptResponse(req.subject_id, env);
      },
      decrypt: async (req) => {
        const r = await d.envelopes.decrypt(tenant(req.tenant_id), envelopeOfDecryptRequest(req));
        return { subject_id: r.subjectId, ...jsonField('plaintext', r.value) };
      },
      sealSecret: async (req) => d.secrets.seal(tenant(req.tenant_id), req.purpose, req.plaintext),
      openSecret: async (req) => ({ plaintext: await d.secrets.open(tenant(req.tenant_id), req.purpose, sealedSecretOfRequest(req)) }),
      getHsmStatus: async () => {
        const i = d.hsm.info();
        return { backend: i.backend, token_label: i.tokenLabel, ready: i.ready, library: i.library };
      },
    },
    logger,
  );
}
