/**
 * The managed-session service's own definition (managed.service.ts, as main.ts runs it) started in this process
 * against the real Postgres and NATS on a free gRPC port, with a client of its ManagedService. Tests name what
 * they put in place (`overrides`: the agent platform, peer clients) and the settings they need (`env`); the
 * confirmation sweep waits an hour (a test sweeps through `api.confirmations`). Like every replica, the started
 * service adopts the database's active sessions whose lease is free: a test whose sessions must stay unclaimed
 * (its own consumer, its own ToolConfirmations) builds those parts itself.
 */
import { managed as pb } from '@agw/proto';
import { type PromiseClient, type StartedService, type TestServiceOptions, createClient, startTestService } from '@agw/shared';
import type { ManagedConfig } from '../../src/config';
import { type ManagedApi, type ManagedOverrides, managedService } from '../../src/managed.service';

/** The started service and a client of its ManagedService. */
export type StartedManaged = StartedService<ManagedConfig, ManagedApi> & { client: PromiseClient<typeof pb.ManagedServiceService> };

export function startManaged(o: TestServiceOptions<ManagedConfig, ManagedOverrides> = {}): Promise<StartedManaged> {
  return startTestService(managedService(), {
    ...o,
    env: { MANAGED_CONFIRMATION_SWEEP_MS: '3600000', ...o.env },
    clients: (address) => ({ client: createClient(pb.ManagedServiceClient, address, 'managed service') }),
  });
}
