/**
 * The vault service's definition: HSM, keyring, PII, credentials, federation, brokered execution and the gRPC
 * bindings. main.ts runs it; integration tests start the same definition in-process
 * (`startService(vaultService(), { config, overrides })`, test/support/start-vault.ts).
 */
import { type Db, onTenantChange, publishTenantChange, type ServiceDefinition, streamedRecordAppender } from '@agw/shared';
import { BrokeredExecutor } from './broker/brokered-executor';
import { TargetGuard } from './broker/target-guard';
import { type VaultConfig, loadVaultConfig } from './config';
import { AccessLogRepository } from './credentials/access-log.repository';
import { CredentialRepository } from './credentials/credential.repository';
import { CredentialStore } from './credentials/credential-store';
import { vaultGrpcService } from './grpc/vault.grpc';
import { federationGrpcService } from './grpc/federation.grpc';
import { createFederation } from './federation/create-federation';
import type { ConnectionRecorder, Federation, QuarantineRecorder } from './federation/federation';
import { auditConnectionRecorder, auditQuarantineRecorder } from './federation/quarantine-recorder';
import { ServiceSecrets } from './secrets/service-secrets';
import { createHsm } from './hsm/create-hsm';
import type { HsmBackend } from './hsm/hsm-backend';
import { instrumentHsm } from './hsm/hsm.metrics';
import { KeyRepository } from './keys/key.repository';
import { createVaultMetrics } from './metrics';
import { Keyring } from './keys/keyring';
import { DataSubjects } from './pii/data-subjects';
import { PiiProtector } from './pii/pii-protector';
import { SubjectEnvelopes } from './pii/subject-envelopes';
import { SubjectRepository } from './pii/subject.repository';
import { noteSigningGrpcService } from './grpc/note-signing.grpc';
import { EVIDENCE_KEY_LABEL, NoteSigner } from './signing/note-signer';

/** The tenant part of the advisory-lock key of keys that belong to no tenant (the evidence signing key). */
const GLOBAL_KEY_SCOPE = '00000000-0000-0000-0000-000000000000';

/** What an in-process test reaches into. */
export interface VaultApi {
  /** the federation of upstream MCP servers (a test registers upstreams and reads their pins directly) */
  federation: Federation;
  /** the brokered executor behind Execute (with the federation), the credential store it reads and its access log */
  broker: BrokeredExecutor;
  credentials: CredentialStore;
  accessLog: AccessLogRepository;
  /** personal data: the envelopes of each data subject and the subjects' keys */
  pii: PiiProtector;
  subjects: DataSubjects;
  /** the vault's pool, HSM and keyring (a test builds a second federation with other limits over the same stores) */
  db: Db;
  hsm: HsmBackend;
  keyring: Keyring;
}

/**
 * What a test may put in place: where the federation's quarantines and connection events are recorded
 * (default: control_plane records on the AUDIT stream), and what a change of a tenant's upstreams announces
 * (default: a notice on NATS that every replica, this one included, drops its catalog cache on).
 */
export interface VaultOverrides {
  quarantines: QuarantineRecorder;
  connectionEvents: ConnectionRecorder;
  changed: (tenantId: string) => void;
}

export const vaultService = (): ServiceDefinition<VaultConfig, VaultApi, VaultOverrides> => ({
  name: 'vault',
  loadConfig: loadVaultConfig,
  start: async ({ config, logger, registry, postgres, nats, overrides }) => {
    const db = await postgres();
    const hsm = instrumentHsm(createHsm(config), registry);
    const keyring = new Keyring(hsm, new KeyRepository(db));
    const subjects = new DataSubjects(keyring, new SubjectRepository(db));
    const pii = new PiiProtector(keyring, subjects);
    const guard = new TargetGuard({ allowPrivate: config.allowPrivateUpstreams, requireHttps: config.profile !== 'local', allowCidrsByTenant: config.upstreamAllowCidrsByTenant });
    const credentials = new CredentialStore(keyring, new CredentialRepository(db), guard);
    const accessLog = new AccessLogRepository(db);
    // federation of upstream MCP servers (docs/federation.md): their credentials and connections stay here
    const bus = await nats({ readiness: false });
    // its control_plane records go to the audit service over the AUDIT stream, never by a call back to the
    // service that calls this one (packages/shared/src/bus/record-requests.ts)
    const records = streamedRecordAppender(bus);
    const { federation, close: closeFederation } = createFederation({
      config,
      db,
      keyring,
      quarantines: overrides.quarantines ?? auditQuarantineRecorder(records, logger),
      connectionEvents: overrides.connectionEvents ?? auditConnectionRecorder(records, logger),
      changed: overrides.changed ?? ((tenantId) => publishTenantChange(bus, 'upstreams', tenantId)),
      logger,
    });
    onTenantChange(bus, 'upstreams', (tenantId) => federation.invalidate(tenantId));
    const broker = new BrokeredExecutor({ credentials, accessLog, pii, guard, timeoutMs: config.upstreamTimeoutMs, maxBytes: config.upstreamMaxBytes, logger, federation });
    return {
      grpc: [
        noteSigningGrpcService(
          // the evidence key is found or created under the replicas' advisory lock (one key pair, ever)
          new NoteSigner(hsm, config.evidenceLogHost, { lock: (fn) => new KeyRepository(db).withLabelLock(GLOBAL_KEY_SCOPE, EVIDENCE_KEY_LABEL, () => fn()) }),
          logger,
        ),
        federationGrpcService(federation, logger),
        vaultGrpcService({ hsm, keyring, pii, subjects, envelopes: new SubjectEnvelopes(keyring, subjects), credentials, accessLog, broker, secrets: new ServiceSecrets(keyring), metrics: createVaultMetrics(registry) }, logger)],
      closers: [() => hsm.close(), closeFederation],
      checks: { hsm: async () => void (await hsm.keyExists('agw:readiness-probe')) },
      info: { backend: hsm.name, tokenLabel: hsm.info().tokenLabel },
      api: { federation, broker, credentials, accessLog, pii, subjects, db, hsm, keyring },
    };
  },
});
