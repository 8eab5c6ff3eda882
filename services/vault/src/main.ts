/** Composition root of the vault service: config, HSM, stores, gRPC server, shutdown. No logic here. */
import { createDb, createLogger, createMetricsRegistry, pingPostgres, runService, startGrpcServer } from '@agw/shared';
import { BrokeredExecutor } from './broker/brokered-executor';
import { TargetGuard } from './broker/target-guard';
import { loadVaultConfig } from './config';
import { AccessLogRepository } from './credentials/access-log.repository';
import { CredentialRepository } from './credentials/credential.repository';
import { CredentialStore } from './credentials/credential-store';
import { vaultGrpcService } from './grpc/vault.grpc';
import { createHsm } from './hsm/create-hsm';
import { KeyRepository } from './keys/key.repository';
import { createVaultMetrics } from './metrics';
import { Keyring } from './keys/keyring';
import { PiiProtector } from './pii/pii-protector';
import { SubjectRepository } from './pii/subject.repository';

const config = loadVaultConfig();
const logger = createLogger('vault', config.logLevel);
const registry = createMetricsRegistry('vault');

runService({
  name: 'vault',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: async () => {
    const db = createDb(config.databaseUrl);
    await pingPostgres(db);
    const hsm = createHsm(config);
    const keyring = new Keyring(hsm, new KeyRepository(db));
    const pii = new PiiProtector(keyring, new SubjectRepository(db));
    const guard = new TargetGuard({ allowPrivate: config.allowPrivateUpstreams, requireHttps: config.profile !== 'local' });
    const credentials = new CredentialStore(keyring, new CredentialRepository(db), guard);
    const accessLog = new AccessLogRepository(db);
    const broker = new BrokeredExecutor({ credentials, accessLog, pii, guard, timeoutMs: config.upstreamTimeoutMs, maxBytes: config.upstreamMaxBytes, logger });
    const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, [vaultGrpcService({ hsm, keyring, pii, credentials, accessLog, broker, metrics: createVaultMetrics(registry) }, logger)]);
    logger.info({ port: grpc.port, backend: hsm.name, tokenLabel: hsm.info().tokenLabel }, 'vault gRPC listening');
    return {
      closers: [() => hsm.close(), () => db.destroy(), () => grpc.close()],
      checks: {
        postgres: () => pingPostgres(db),
        hsm: async () => void (await hsm.keyExists('agw:readiness-probe')),
      },
    };
  },
});
