/**
 * The federation wiring (docs/federation.md), one place for the service and its tests: the egress fetch
 * (each tenant's address rule, UPSTREAM_ALLOW_CIDRS_BY_TENANT, the byte caps, the deadlines), the MCP connections, the sealed
 * credentials, the catalog and its change notices.
 */
import { type AddressPolicy, type PinnedFetch, TenantAddressPolicies, createPinnedFetch } from '@agw/egress';
import type { Db, Logger } from '@agw/shared';
import type { VaultConfig } from '../config';
import type { Keyring } from '../keys/keyring';
import { type ConnectionRecorder, Federation, type QuarantineRecorder } from './federation';
import { OAuthGrantRepository } from './oauth-grants.repository';
import { UpstreamOAuth } from './upstream-oauth';
import { UpstreamConnections } from './upstream-connections';
import { UpstreamCredentials } from './upstream-credentials';
import { checkUpstreamAddress, parseUpstreamUrl } from './upstream-url';
import { UpstreamRepository } from './upstream.repository';

type FederationConfig = Pick<
  VaultConfig,
  | 'upstreamAllowCidrs'
  | 'upstreamAllowCidrsByTenant'
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

export function createFederation(o: { config: FederationConfig; db: Db; keyring: Keyring; quarantines: QuarantineRecorder; connectionEvents?: ConnectionRecorder; changed(tenantId: string): void; logger: Logger }): FederationWiring {
  const { config } = o;
  // each tenant's address rule: public addresses, the local profile's loopback, and the ranges granted to it alone
  const egress = new TenantAddressPolicies({ allowCidrs: config.upstreamAllowCidrs, byTenant: config.upstreamAllowCidrsByTenant });
  const fetchWith = (policy: AddressPolicy): PinnedFetch =>
    createPinnedFetch({
      policy,
      // a POST carries one answer (the result cap plus its envelope); a GET is a long-lived notification stream
      maxResponseBytes: (method) => (method === 'POST' ? config.federationMaxResultBytes + 65_536 : 4 * config.federationMaxResultBytes),
      connectTimeoutMs: config.federationConnectTimeoutMs,
      headersTimeoutMs: config.federationCallTimeoutMs,
    });
  // one pinned fetch (and connection pool) per rule: the shared one, and one per tenant with a grant
  const fetches = new Map<AddressPolicy, PinnedFetch>();
  const fetchOf = (tenantId: string): PinnedFetch => {
    const policy = egress.of(tenantId);
    let f = fetches.get(policy);
    if (!f) fetches.set(policy, (f = fetchWith(policy)));
    return f;
  };
  let federation: Federation | undefined;
  const connections = new UpstreamConnections({
    fetchOf,
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
  const credentials = new UpstreamCredentials(o.keyring, fetchOf, config.federationConnectTimeoutMs);
  const parseUrl = (url: string) => parseUpstreamUrl(url, config.upstreamRequireHttps);
  federation = new Federation({
    repo: new UpstreamRepository(o.db),
    credentials,
    oauth: new UpstreamOAuth({
      keyring: o.keyring,
      grants: new OAuthGrantRepository(o.db),
      fetchOf,
      parseUrl,
      openClientSecret: (tenantId, u) => credentials.open(tenantId, u.name, u.key_id as string, u.sealed as NonNullable<typeof u.sealed>),
      logger: o.logger,
    }),
    connectionEvents: o.connectionEvents ?? { record: async () => undefined },
    connections,
    parseUrl,
    checkAddress: (tenantId, url) => checkUpstreamAddress(egress.of(tenantId), url),
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
      for (const f of fetches.values()) f.close();
    },
  };
}
