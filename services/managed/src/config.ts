/** Managed-session service settings (env validated once at start). */
import { hostname } from 'node:os';
import { envInt, grpcServiceSettings, loadConfig, peerSettings, setting } from '@agw/shared';
import { z } from 'zod';

export const managedSettings = {
  ...grpcServiceSettings('managed', 'gRPC port (the gateway maps /api/managed/* to it)'),
  ...peerSettings('audit', { address: 'audit service gRPC address (observed and control-plane records, session totals)', deadlineMs: 10_000, deadline: 'deadline of one audit call (records, session totals)' }),
  ...peerSettings('policy', { address: 'policy service gRPC address (config validation, session replay)', deadlineMs: 30_000, deadline: 'deadline of policy calls (bundle status, session replay of many actions)' }),
  ...peerSettings('vault', { address: 'vault service gRPC address (personal data in observed tool input is encrypted per subject)', deadlineMs: 10_000, deadline: 'deadline of one vault call (PII protection of observed tool input)' }),
  anthropicApiKey: setting('ANTHROPIC_API_KEY', z.string().optional(), 'API key of the external agent platform (Claude Managed Agents); npm start runs a local stand-in when unset'),
  anthropicBaseUrl: setting('ANTHROPIC_BASE_URL', z.string().url().optional(), 'base URL of the agent platform API (unset: the SDK default; npm start points it at the local stand-in)'),
  defaultModel: setting('MANAGED_DEFAULT_MODEL', z.string().min(1).default('claude-sonnet-4-5'), 'model of a managed agent config that names none'),
  maxConcurrentSessions: setting('DEFAULT_MAX_CONCURRENT_SESSIONS', envInt(10).pipe(z.number().min(1)), 'active managed sessions per tenant'),
  maxDailySessions: setting('DEFAULT_MAX_DAILY_SESSIONS', envInt(50).pipe(z.number().min(1)), 'managed sessions a tenant may start per 24 hours'),
  sseTimeoutSeconds: setting('SSE_TIMEOUT', envInt(300).pipe(z.number().min(1)), 'seconds without any session event (SSE or governed call) after which the event consumer stops'),
  anomalyThreshold: setting('SESSION_ANOMALY_THRESHOLD', z.coerce.number().min(0).max(1).default(0.8), 'anomaly score of one observed event above which a session is auto-interrupted (tenant setting session_anomaly_threshold overrides)'),
  leaseSeconds: setting('MANAGED_CONSUMER_LEASE_SECONDS', envInt(15).pipe(z.number().min(3)), 'how long a replica holds a session stream lease without renewing it'),
  confirmationSweepMs: setting('MANAGED_CONFIRMATION_SWEEP_MS', envInt(5000).pipe(z.number().min(100)), 'how often decided platform confirmation requests whose NATS event was missed are delivered to the platform'),
  reconnectDelayMs: setting('MANAGED_RECONNECT_DELAY_MS', envInt(500), 'first delay before re-opening a dropped session stream (doubles up to 10 s)'),
  replicaId: setting('MANAGED_REPLICA_ID', z.string().default(''), 'this replica in session stream leases (the pod name in Kubernetes; empty: host name and process id)'),
};

export type ManagedConfig = ReturnType<typeof loadManagedConfig>;
export const loadManagedConfig = (env?: Record<string, string | undefined>) => loadConfig(managedSettings, env);

/** This replica's name in session stream leases. */
export const replicaIdOf = (c: ManagedConfig) => c.replicaId || `${hostname()}:${process.pid}`;
