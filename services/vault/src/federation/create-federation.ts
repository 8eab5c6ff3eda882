/**
 * The federation wiring (docs/federation.md), one place for the service and its tests: the egress fetch
 * (the address rule of UPSTREAM_ALLOW_CIDRS, the byte caps, the deadlines), the MCP connections, the sealed
 * credentials, the catalog and its change notices.
 */
import { AddressPolicy, createPinnedFetch } from '@agw/egress';
import type { Db, Logger } from '@agw/shared';
import type { VaultConfig } from '../config';
import type { Keyring } from '../keys/keyring';
import { Federation, type QuarantineRecorder } from './federation';
import { UpstreamConnections } from './upstream-connections';
import { UpstreamCredentials } from './upstream-credentials';
import { checkUpstreamAddress, parseUpstreamUrl } from './upstream-url';
import { UpstreamRepository } from './upstream.repository';

type FederationConfig = Pick<
  VaultConfig,
  | 'upstreamAllowCidrs'
  | 'upstreamRequireHttps'
  | 'federationCallTimeoutMs'
  | 'federationConnectTimeoutMs'
  | 'federationMaxResultBytes'
  | 'federationMaxTools'
  | 'federationMaxToolBytes'
  | 'federationMaxSyncBytes'
  | 'federationMaxUpstreams'
  | 'federationSyncBurst'
  | 'federationSyncIntervalMs'
  | 'federationQuarantineAlertWindowMs'
  | 'federationIdleMs'
  | 'federationMaxConnections'
>;

export interface FederationWiring {
  federation: Federation;
  close(): Promise<void>;
}

export function createFederation(o: { config: FederationConfig; db: Db; keyring: Keyring; quarantines: QuarantineRecorder; changed(tenantId: string): void; logger: Logger }): FederationWiring {
  const { config } = o;
  const egress = new AddressPolicy({ allowCidrs: config.upstreamAllowCidrs });
  const upstreamFetch = createPinnedFetch({
    policy: egress,
    // a POST carries one answer (the result cap plus its envelope); a GET is a long-lived notification stream
    maxResponseBytes: (method) => (method === 'POST' ? config.federationMaxResultBytes + 65_536 : 4 * config.federationMaxResultBytes),
    connectTimeoutMs: config.federationConnectTimeoutMs,
    headersTimeoutMs: config.federationCallTimeoutMs,
  });
  let federation: Federation | undefined;
  const connections = new UpstreamConnections({
    fetch: upstreamFetch,
    logger: o.logger,
    connectTimeoutMs: config.federationConnectTimeoutMs,
    callTimeoutMs: config.federationCallTimeoutMs,
    maxResultBytes: config.federationMaxResultBytes,
    maxTools: config.federationMaxTools,
    maxToolBytes: config.federationMaxToolBytes,
    maxSyncBytes: config.federationMaxSyncBytes,
    idleMs: config.federationIdleMs,
    maxConnections: config.federationMaxConnections,
    onToolsChanged: (tenantId, name) => federation?.onToolsChanged(tenantId, name),
  });
  federation = new Federation({
    repo: new UpstreamRepository(o.db),
    credentials: new UpstreamCredentials(o.keyring, upstreamFetch, config.federationConnectTimeoutMs),
    connections,
    parseUrl: (url) => parseUpstreamUrl(url, config.upstreamRequireHttps),
    checkAddress: (url) => checkUpstreamAddress(egress, url),
    quarantines: o.quarantines,
    changed: o.changed,
    logger: o.logger,
    limits: {
      maxUpstreams: config.federationMaxUpstreams,
      syncBurst: config.federationSyncBurst,
      syncIntervalMs: config.federationSyncIntervalMs,
      quarantineAlertWindowMs: config.federationQuarantineAlertWindowMs,
    },
  });
  return {
    federation,
    close: async () => {
      await connections.close();
      upstreamFetch.close();
    },
  };
}
