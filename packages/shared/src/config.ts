/**
 * One way to read configuration: every service declares a schema of settings, each tied to one
 * environment variable with a doc line and a default that works on a developer machine. The schema is
 * parsed once at start; a bad value fails fast with a readable message naming the variable.
 * `process.env` is read nowhere else in the fleet.
 */
import { z } from 'zod';

export interface Setting<T extends z.ZodType> {
  env: string;
  schema: T;
  doc: string;
}

/** Declare one setting: its environment variable, its schema (with default) and what it is for. */
export function setting<T extends z.ZodType>(env: string, schema: T, doc: string): Setting<T> {
  return { env, schema, doc };
}

export type ConfigOf<S extends Record<string, Setting<z.ZodType>>> = { [K in keyof S]: z.output<S[K]['schema']> };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parse `settings` from `env` (defaults to the process environment). Empty strings count as unset. */
export function loadConfig<S extends Record<string, Setting<z.ZodType>>>(
  settings: S,
  env: Record<string, string | undefined> = process.env,
): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, s] of Object.entries(settings)) {
    const raw = env[s.env];
    const r = s.schema.safeParse(raw === '' ? undefined : raw);
    if (r.success) out[key] = r.data;
    else problems.push(`${s.env}: ${r.error.issues.map((i) => i.message).join('; ')} (${s.doc})`);
  }
  if (problems.length) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

/** Boolean from env text: true/1/yes/on and false/0/no/off. */
export const envBool = (def: boolean) =>
  z
    .union([z.boolean(), z.string()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return def;
      if (typeof v === 'boolean') return v;
      const s = v.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `expected a boolean, got "${v}"` });
      return z.NEVER;
    });

/** Integer from env text with a default. */
export const envInt = (def: number) => z.coerce.number().int().default(def);

/** A TCP port (0-65535; 0 lets the OS pick a free one, as tests do) from env text with a default. */
export const envPort = (def: number) => z.coerce.number().int().min(0, 'a port is 0-65535').max(65535, 'a port is 0-65535').default(def);

/**
 * A comma-separated list of CIDRs from env text (e.g. `127.0.0.0/8,::1/128`): unset gives undefined (the
 * profile's default, `internalCidrsAllowed`), set (even empty) gives the whole list.
 */
export const envCidrList = z
  .string()
  .optional()
  .transform((s) =>
    s === undefined
      ? undefined
      : s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
  )
  .refine((list) => (list ?? []).every((c) => /^[0-9a-fA-F.:]+\/\d{1,3}$/.test(c)), 'expected a comma-separated list of CIDRs such as 127.0.0.0/8,::1/128');

/**
 * A list of internal address ranges an outbound client may reach besides public ones (`what`: whose
 * addresses), read by internalCidrsAllowed with the profile.
 */
export function internalCidrsSetting(env: string, what: string) {
  return setting(env, envCidrList, `${what} allowed although private, loopback or link-local (comma-separated CIDRs); unset: none, or loopback in the local profile`);
}

/**
 * The internal addresses an outbound client may reach (webhook targets, bundle servers): the configured
 * list when it is set (then it is the whole list, so a test can allow one loopback address and prove the
 * others refused); unset, loopback in the local profile and nothing otherwise.
 */
export function internalCidrsAllowed(configured: string[] | undefined, profile: 'local' | 'production'): string[] {
  if (configured !== undefined) return configured;
  return profile === 'local' ? ['127.0.0.0/8', '::1/128'] : [];
}

/** Settings every service has: its name, log level, ops (health/metrics) port, profile. */
export const commonSettings = {
  logLevel: setting('LOG_LEVEL', z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'), 'pino log level'),
  profile: setting('AGW_PROFILE', z.enum(['local', 'production']).default('local'), 'local enables demo endpoints and loopback targets; production hardens them'),
};

/** Each service's default ports on a developer machine: its gRPC server (the gateway has none) and its ops (health/metrics) server. */
export const SERVICE_PORTS = {
  gateway: { ops: 9080 },
  policy: { grpc: 50051, ops: 9081 },
  audit: { grpc: 50052, ops: 9082 },
  vault: { grpc: 50053, ops: 9083 },
  webhook: { grpc: 50054, ops: 9084 },
  anchor: { grpc: 50055, ops: 9085 },
  managed: { grpc: 50056, ops: 9086 },
} as const;

/** A service of the fleet that serves gRPC. */
export type GrpcService = Exclude<keyof typeof SERVICE_PORTS, 'gateway'>;

/** `<SERVICE>_OPS_HOST` and `<SERVICE>_OPS_PORT`: where a service's health/metrics server listens. */
export function opsListenSettings(service: keyof typeof SERVICE_PORTS) {
  const prefix = service.toUpperCase();
  return {
    opsHost: setting(`${prefix}_OPS_HOST`, z.string().default('127.0.0.1'), 'health/metrics listen address'),
    opsPort: setting(`${prefix}_OPS_PORT`, envPort(SERVICE_PORTS[service].ops), 'health/metrics port'),
  };
}

/** `<SERVICE>_GRPC_HOST`, `<SERVICE>_GRPC_PORT` and the ops pair: where a gRPC service listens. */
export function listenSettings(service: GrpcService, grpcPortDoc = 'gRPC port') {
  const prefix = service.toUpperCase();
  return {
    grpcHost: setting(`${prefix}_GRPC_HOST`, z.string().default('127.0.0.1'), 'gRPC listen address'),
    grpcPort: setting(`${prefix}_GRPC_PORT`, envPort(SERVICE_PORTS[service].grpc), grpcPortDoc),
    ...opsListenSettings(service),
  };
}

/** `<SERVICE>_GRPC_URL`: the address at which a client calls `service`, by default its local gRPC port; `doc` says what for. */
export function peerUrlSetting(service: GrpcService, doc: string) {
  return setting(`${service.toUpperCase()}_GRPC_URL`, z.string().default(`127.0.0.1:${SERVICE_PORTS[service].grpc}`), doc);
}

/**
 * A peer the service calls: `<service>GrpcUrl` (`<SERVICE>_GRPC_URL`, peerUrlSetting) and `<service>DeadlineMs`
 * (`<SERVICE>_DEADLINE_MS`, the deadline of one call), with what each is for.
 */
export function peerSettings<P extends GrpcService>(service: P, doc: { address: string; deadlineMs: number; deadline: string }) {
  return {
    [`${service}GrpcUrl`]: peerUrlSetting(service, doc.address),
    [`${service}DeadlineMs`]: setting(`${service.toUpperCase()}_DEADLINE_MS`, envInt(doc.deadlineMs), doc.deadline),
  } as { [K in `${P}GrpcUrl`]: ReturnType<typeof peerUrlSetting> } & { [K in `${P}DeadlineMs`]: Setting<ReturnType<typeof envInt>> };
}

/** How long a statement waits for a Postgres connection by default (docs/reliability.md, "Bounded waits for Postgres and Redis"). */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 15_000;
/** How long a Redis command waits for its answer by default (same section). */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 5_000;

/** Connection settings of the shared stores, with the local machine's defaults. */
export const storeSettings = {
  databaseUrl: setting('DATABASE_URL', z.string().default('postgres://postgres@127.0.0.1:5432/agw'), 'Postgres connection URL'),
  databasePoolMax: setting('DB_POOL_MAX', envInt(10), 'most Postgres connections of one service process (size max_connections for replicas × services × this)'),
  databaseAcquireTimeoutMs: setting(
    'DB_POOL_ACQUIRE_TIMEOUT_MS',
    z.coerce.number().int().min(0).default(DEFAULT_ACQUIRE_TIMEOUT_MS),
    'longest wait for a Postgres connection (the pool full, or a new connection not answering) before the statement fails as Postgres unavailable (503, gRPC UNAVAILABLE); 0 waits forever',
  ),
  redisUrl: setting('REDIS_URL', z.string().default('redis://127.0.0.1:6379/0'), 'Redis connection URL'),
  redisCommandTimeoutMs: setting(
    'REDIS_COMMAND_TIMEOUT_MS',
    z.coerce.number().int().min(0).default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
    'longest wait for Redis to answer one command before it fails as Redis unavailable (503); 0 waits forever',
  ),
  natsUrl: setting('NATS_URL', z.string().default('nats://127.0.0.1:4222'), 'NATS server URL (JetStream enabled)'),
  streamPrefix: setting('AGW_STREAM_PREFIX', z.string().regex(/^[A-Za-z0-9_]*$/).default(''), 'prefix for JetStream stream and subject names (isolates test fleets)'),
};

/** What every gRPC service of the fleet declares first: the common settings, the stores, where it listens (listenSettings). */
export function grpcServiceSettings(service: GrpcService, grpcPortDoc?: string) {
  return { ...commonSettings, ...storeSettings, ...listenSettings(service, grpcPortDoc) };
}
