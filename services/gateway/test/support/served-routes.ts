/**
 * Gateway routes over real HTTP in a test: an express app with JSON bodies, the routes a test mounts and the
 * gateway's error handler, listening on a free loopback port. `asTestCaller` sets the caller as
 * auth.middleware.ts attaches it, picked by the headers `x-test-tenant` and `x-test-caller`; `testSettings`
 * is the real SettingsService over the real Postgres with the policy service stubbed.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { type Db, createLogger } from '@agw/shared';
import type { PolicyClient } from '../../src/clients/grpc-clients';
import { errorHandler } from '../../src/http/error-handler';
import type { AuthContext } from '../../src/http/request-context';
import { SettingsRepository } from '../../src/tenants/settings.repository';
import { SettingsService } from '../../src/tenants/settings.service';

export interface ServedRoutes {
  /** e.g. http://127.0.0.1:40123 */
  base: string;
  close(): Promise<void>;
}

/** Serve the routes `mount` adds (in its order), then the gateway's error handler. */
export async function serveRoutes(mount: (app: Express) => void): Promise<ServedRoutes> {
  const app = express();
  app.use(express.json());
  mount(app);
  app.use(errorHandler(createLogger('test', 'silent')));
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The callers of a tenant, as auth.middleware.ts attaches them. */
export const testCallers = (tenantId: string): Record<string, AuthContext> => ({
  tenant_key: { tenantId, method: 'api_key', keyScope: 'tenant', isAdmin: false },
  agent_key: { tenantId, method: 'api_key', keyScope: 'agent', isAdmin: false },
  oauth: { tenantId, method: 'oauth', agentName: 'claude', oauthClientId: 'c', isAdmin: false },
  key_session: { tenantId, method: 'jwt', userId: randomUUID(), email: 'owner@example.com', viaApiKey: true, isAdmin: false },
  human: { tenantId, method: 'jwt', userId: randomUUID(), email: 'owner@example.com', isAdmin: false },
});

/** Sets `req.auth` to the caller the header `x-test-caller` names, of the tenant `x-test-tenant` names. */
export const asTestCaller: RequestHandler = (req, _res, next) => {
  req.auth = testCallers(String(req.header('x-test-tenant')))[String(req.header('x-test-caller'))];
  next();
};

/** A policy service that answers every tenant with the general template. */
export const stubPolicy = { getTenantPolicy: async () => ({ policyTemplate: 'general', policyConfigJson: '{}', customPolicy: '' }) } as unknown as PolicyClient;

/** The real SettingsService over `db`, the policy service stubbed. */
export const testSettings = (db: Db) => new SettingsService(new SettingsRepository(db), stubPolicy, { rps: 50, burst: 100 });
