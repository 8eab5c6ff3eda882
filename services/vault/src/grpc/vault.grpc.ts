/** gRPC adapter of the vault: translate messages, call the domain modules, nothing else. */
import { vault as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
import type { BrokeredExecutor } from '../broker/brokered-executor';
import type { CallRound } from '../federation/upstream-connections';
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

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw InputError.at([field], 'must be JSON', 'json_invalid');
  }
}

function paramsOf(text: string): Record<string, unknown> {
  const v = text ? parseJson(text, 'params_json') : {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw InputError.at(['params_json'], 'params must be a JSON object', 'dict_type');
  return v as Record<string, unknown>;
}

/** The relayed multi round-trip of a federated tools/call (ExecuteRequest.mcp_round_json), and the caller's cancellation. */
function roundOf(text: string | undefined, cancelled: AbortSignal | undefined): CallRound | undefined {
  if (!text) return cancelled ? { signal: cancelled } : undefined;
  const v = parseJson(text, 'mcp_round_json') as Record<string, unknown> | null;
  const object = (x: unknown) => !!x && typeof x === 'object' && !Array.isArray(x);
  if (
    !object(v) ||
    (v!.inputResponses !== undefined && !object(v!.inputResponses)) ||
    (v!.clientCapabilities !== undefined && !object(v!.clientCapabilities)) ||
    (v!.requestState !== undefined && typeof v!.requestState !== 'string')
  ) {
    throw InputError.at(['mcp_round_json'], 'must be {relay, clientCapabilities?: object, inputResponses?: object, requestState?: string}', 'value_error');
  }
  return {
    relay: v!.relay === true,
    ...(v!.clientCapabilities !== undefined ? { clientCapabilities: v!.clientCapabilities as Record<string, unknown> } : {}),
    ...(v!.inputResponses !== undefined ? { inputResponses: v!.inputResponses as Record<string, unknown> } : {}),
    ...(v!.requestState !== undefined ? { requestState: v!.requestState as string } : {}),
    ...(cancelled ? { signal: cancelled } : {}),
  };
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : '');

function toCredential(c: CredentialMeta): pb.Credential {
  return {
    toolId: c.tool_id,
    name: c.name,
    credentialType: c.credential_type,
    upstreamUrl: c.upstream_url ?? '',
    upstreamMethod: c.upstream_method,
    headerName: c.header_name ?? '',
    registeredAt: iso(c.registered_at),
    keyId: c.key_id,
  };
}

function toSubject(s: SubjectRow): pb.Subject {
  return {
    subjectId: s.subject_id,
    keyId: s.key_id,
    status: s.erased_at ? 'erased' : 'active',
    createdAt: iso(s.created_at),
    erasedAt: iso(s.erased_at),
    actionCount: s.action_count,
    piiKinds: s.pii_kinds,
    source: s.source,
  };
}

export function vaultGrpcService(d: VaultDomain, logger: Logger): GrpcServiceBinding {
  const tenant = (t: string) => {
    if (!t) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
    return t;
  };
  return {
    definition: pb.VaultServiceService,
    implementation: implement(
      pb.VaultServiceService,
      {
        protectParams: async (req) => {
          const r = await d.pii.protect(tenant(req.tenantId), req.actionId, paramsOf(req.paramsJson));
          d.metrics?.protectedCalls.inc({ pii_detected: String(r.piiDetected) });
          return { piiDetected: r.piiDetected, storedParamsJson: JSON.stringify(r.storedParams), subjectIds: r.subjectIds, piiKinds: r.kinds };
        },
        revealParams: async (req) => {
          const r = await d.pii.reveal(tenant(req.tenantId), req.paramsJson ? parseJson(req.paramsJson, 'params_json') : {});
          return { paramsJson: JSON.stringify(r.params), erasedSubjects: r.erasedSubjects };
        },
        execute: async (req, _metadata, cancelled) => {
          const round = roundOf(req.mcpRoundJson, cancelled);
          const r = await d.broker.execute(tenant(req.tenantId), {
            actionId: req.actionId,
            agentId: req.agentId,
            tool: req.tool,
            method: req.method,
            params: paramsOf(req.paramsJson),
            origin: req.origin === 'approval' ? 'approval' : 'tool_call',
            userId: req.userId || undefined,
            ...(round ? { round } : {}),
          });
          if (r.brokered) {
            d.metrics?.brokered.inc({ outcome: r.outcome });
            d.metrics?.hsmFetchSeconds.observe(r.hsmFetchMs / 1000);
            if (r.executionMs) d.metrics?.brokeredSeconds.observe(r.executionMs / 1000);
          }
          return {
            brokered: r.brokered,
            statusCode: r.statusCode,
            bodyJson: r.brokered ? JSON.stringify(r.body ?? null) : '',
            hsmFetchMs: r.hsmFetchMs,
            executionMs: r.executionMs,
            credentialName: r.credentialName,
            outcome: r.outcome,
            mcpResult: r.mcpResult ?? false,
          };
        },
        registerCredential: async (req) =>
          toCredential(
            await d.credentials.register(tenant(req.tenantId), {
              tool_id: req.toolId,
              name: req.name,
              value: req.value,
              credential_type: req.credentialType || undefined,
              upstream_url: req.upstreamUrl || undefined,
              upstream_method: req.upstreamMethod || undefined,
              header_name: req.headerName || undefined,
            }),
          ),
        listCredentials: async (req) => ({ credentials: (await d.credentials.list(tenant(req.tenantId))).map(toCredential) }),
        getCredentialStatus: async (req) => {
          const c = await d.credentials.status(tenant(req.tenantId), req.toolId);
          return c
            ? { toolId: req.toolId, registered: true, name: c.name, credentialType: c.credential_type, registeredAt: iso(c.registered_at) }
            : { toolId: req.toolId, registered: false, name: '', credentialType: '', registeredAt: '' };
        },
        deleteCredential: async (req) => toCredential(await d.credentials.delete(tenant(req.tenantId), req.toolId, req.name)),
        listAccessLog: async (req) => ({
          entries: (await d.accessLog.list(tenant(req.tenantId), { limit: Math.min(Math.max(req.limit || 200, 1), 1000), toolId: req.toolId || undefined })).map((e) => ({
            id: e.id,
            at: iso(e.at),
            agentId: e.agent_id,
            toolId: e.tool_id,
            credentialName: e.credential_name,
            actionId: e.action_id ?? '',
            origin: e.origin,
            outcome: e.outcome,
            statusCode: e.status_code ?? 0,
            hsmFetchMs: e.hsm_fetch_ms ?? 0,
            executionMs: e.execution_ms ?? 0,
            error: e.error ?? '',
          })),
        }),
        listSubjects: async (req) => ({ subjects: (await d.subjects.listSubjects(tenant(req.tenantId))).map(toSubject) }),
        lookupSubject: async (req) => {
          const r = await d.subjects.lookup(tenant(req.tenantId), req.identifier, req.kind || undefined);
          return r.known
            ? toSubject(r.known)
            : { subjectId: r.subject_id, keyId: '', status: 'unknown', createdAt: '', erasedAt: '', actionCount: 0, piiKinds: [r.kind], source: 'derived' };
        },
        eraseSubject: async (req) => {
          const r = await d.subjects.erase(tenant(req.tenantId), req.subjectId);
          if (!r.alreadyErased) d.metrics?.erasures.inc();
          return { subjectId: req.subjectId, actionIds: r.actionIds, alreadyErased: r.alreadyErased, erasedAt: iso(r.erasedAt) };
        },
        getSubjectStatus: async (req) => {
          const { row, keyExists } = await d.subjects.status(tenant(req.tenantId), req.subjectId);
          return {
            subjectId: row.subject_id,
            erased: row.erased_at !== null,
            keyExists,
            keyId: row.key_id,
            status: row.erased_at ? 'erased' : 'active',
            createdAt: iso(row.created_at),
            erasedAt: iso(row.erased_at),
          };
        },
        filterErasedSubjects: async (req) => ({
          tenantId: req.tenantId,
          subjectIds: [...(await d.subjects.erasedAmong(tenant(req.tenantId), req.subjectIds.slice(0, 10_000)))],
        }),
        createKey: async (req) => {
          const { row, created } = await d.subjects.createSubjectKey(tenant(req.tenantId), { subjectId: req.subjectId || undefined, identifier: req.identifier || undefined });
          return {
            keyId: row.key_id,
            purpose: 'pii_subject',
            subjectId: row.subject_id,
            status: 'active',
            createdAt: iso(row.created_at),
            destroyedAt: '',
            algorithm: 'AES-256-GCM',
            backend: d.hsm.name,
            created,
          };
        },
        listKeys: async (req) => ({
          keys: (await d.keyring.list(tenant(req.tenantId))).map((k) => ({
            keyId: k.key_id,
            purpose: k.purpose,
            subjectId: k.subject_id ?? '',
            status: k.destroyed_at ? 'destroyed' : 'active',
            createdAt: iso(k.created_at),
            destroyedAt: iso(k.destroyed_at),
            algorithm: k.purpose === 'subject_hmac' ? 'HMAC-SHA-256' : 'AES-256-GCM',
            backend: k.backend,
            created: false,
          })),
        }),
        encrypt: async (req) => {
          const env = await d.envelopes.encrypt(tenant(req.tenantId), req.subjectId, req.plaintextJson ? parseJson(req.plaintextJson, 'plaintext_json') : null);
          return { subjectId: req.subjectId, envelopeJson: JSON.stringify(env) };
        },
        decrypt: async (req) => {
          const r = await d.envelopes.decrypt(tenant(req.tenantId), req.envelopeJson ? parseJson(req.envelopeJson, 'envelope_json') : null);
          return { subjectId: r.subjectId, plaintextJson: JSON.stringify(r.value) };
        },
        sealSecret: async (req) => ({ sealedJson: await d.secrets.seal(tenant(req.tenantId), req.purpose, req.plaintext) }),
        openSecret: async (req) => ({ plaintext: await d.secrets.open(tenant(req.tenantId), req.purpose, req.sealedJson) }),
        getHsmStatus: async () => {
          const i = d.hsm.info();
          return { backend: i.backend, tokenLabel: i.tokenLabel, ready: i.ready, library: i.library };
        },
      },
      logger,
    ),
  };
}
