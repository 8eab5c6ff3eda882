/** Audit service settings (env validated once at start). */
import { commonSettings, envBool, envInt, loadConfig, setting, storeSettings } from '@agw/shared';
import { z } from 'zod';

export const auditSettings = {
  ...commonSettings,
  ...storeSettings,
  grpcHost: setting('AUDIT_GRPC_HOST', z.string().default('127.0.0.1'), 'gRPC listen address'),
  grpcPort: setting('AUDIT_GRPC_PORT', envInt(50052), 'gRPC port'),
  opsHost: setting('AUDIT_OPS_HOST', z.string().default('127.0.0.1'), 'health/metrics listen address'),
  opsPort: setting('AUDIT_OPS_PORT', envInt(9082), 'health/metrics port'),
  tamperDemo: setting('AUDIT_TAMPER_DEMO', envBool(true), 'enable the tamper-simulate/restore demo endpoints (set false in production)'),
};

export type AuditConfig = ReturnType<typeof loadAuditConfig>;
export const loadAuditConfig = (env?: Record<string, string | undefined>) => loadConfig(auditSettings, env);
