/** Anchor service settings (env validated once at start; defaults run an embedded local chain). */
import { envBool, envInt, envPort, grpcServiceSettings, loadConfig, peerSettings, setting } from '@agw/shared';
import { z } from 'zod';

const privateKey = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
  .optional();

export const anchorSettings = {
  ...grpcServiceSettings('anchor'),
  ...peerSettings('audit', { address: 'audit service gRPC address (tree heads, for verify)', deadlineMs: 10_000, deadline: 'deadline of one audit call (tree heads, for verify)' }),
  rpcUrl: setting('ANCHOR_RPC_URL', z.string().url().optional(), 'JSON-RPC URL of the chain to anchor to; unset = start an embedded anvil node'),
  chain: setting('ANCHOR_CHAIN', z.enum(['polygon', 'polygon-amoy', 'local']).default('polygon'), 'chain of ANCHOR_RPC_URL (viem definition: id, explorer links); ignored for the embedded chain'),
  chainId: setting('ANCHOR_CHAIN_ID', z.coerce.number().int().positive().optional(), 'chain id override for ANCHOR_RPC_URL (checked against the node)'),
  privateKey: setting('ANCHOR_PRIVATE_KEY', privateKey, 'key of the anchoring account (secret; required with ANCHOR_RPC_URL; never logged)'),
  privateKeyFile: setting('ANCHOR_PRIVATE_KEY_FILE', z.string().optional(), 'file holding ANCHOR_PRIVATE_KEY (e.g. a mounted Kubernetes secret)'),
  anvilHost: setting('ANCHOR_ANVIL_HOST', z.string().default('127.0.0.1'), 'listen address of the embedded anvil node'),
  anvilPort: setting('ANCHOR_ANVIL_PORT', envPort(8545), 'port of the embedded anvil node'),
  anvilStateFile: setting('ANCHOR_ANVIL_STATE_FILE', z.string().default(''), 'state file of the embedded chain (default .run/anvil/state-<port>.json; "none" = a fresh chain each start)'),
  scheduleEnabled: setting('ANCHOR_SCHEDULE_ENABLED', envBool(true), 'run the hourly anchoring in this replica (an advisory lock lets one replica write)'),
  tickSeconds: setting('ANCHOR_TICK_SECONDS', envInt(60), 'how often the scheduler checks whether the hourly anchor is due'),
  maxLeavesPerTx: setting('ANCHOR_MAX_LEAVES_PER_TX', envInt(10_000), 'most tenant tree heads aggregated into one transaction'),
  triggerMinIntervalSeconds: setting('ANCHOR_TRIGGER_MIN_INTERVAL_SECONDS', z.coerce.number().int().min(0).optional(), 'POST /api/anchor/trigger sends a transaction only if the last one is older (default 0 on the embedded chain, 300 with ANCHOR_RPC_URL: gas)'),
};

/** Anvil's first development account: a publicly known key, only ever used with the embedded local chain. */
export const ANVIL_DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

export type AnchorConfig = ReturnType<typeof loadAnchorConfig>;
export const loadAnchorConfig = (env?: Record<string, string | undefined>) => loadConfig(anchorSettings, env);
