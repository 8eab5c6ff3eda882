/** Managed-session service settings (env validated once at start). */
import { commonSettings, envPort, loadConfig, setting, storeSettings } from '@agw/shared';
import { z } from 'zod';

export const managedSettings = {
  ...commonSettings,
  ...storeSettings,
  grpcHost: setting('MANAGED_GRPC_HOST', z.string().default('127.0.0.1'), 'gRPC listen address (reserved for the managed-sessions API)'),
  grpcPort: setting('MANAGED_GRPC_PORT', envPort(50056), 'gRPC port (reserved for the managed-sessions API)'),
  opsHost: setting('MANAGED_OPS_HOST', z.string().default('127.0.0.1'), 'health/metrics listen address'),
  opsPort: setting('MANAGED_OPS_PORT', envPort(9086), 'health/metrics port'),
};

export type ManagedConfig = ReturnType<typeof loadManagedConfig>;
export const loadManagedConfig = (env?: Record<string, string | undefined>) => loadConfig(managedSettings, env);
