/** Audit service settings (env validated once at start). */
import { envBool, envInt, grpcServiceSettings, loadConfig, peerUrlSetting, setting } from '@agw/shared';
import { parseCosignerKey } from '@agw/verifier';
import { z } from 'zod';

/** `<url> <witness vkey>` entries, comma-separated: each a witness's submission prefix and its Ed25519 cosigner key. */
const witnessList = z
  .string()
  .default('')
  .transform((s, ctx) =>
    s
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)
      .flatMap((e) => {
        const [url, vkey, ...rest] = e.split(/\s+/);
        try {
          if (rest.length || !vkey || !/^https?:\/\//.test(url)) throw new Error('an entry is "<http(s) url> <witness vkey>"');
          return [{ url, key: parseCosignerKey(vkey) }];
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `AUDIT_WITNESSES: ${(err as Error).message}` });
          return [];
        }
      }),
  );

export const auditSettings = {
  ...grpcServiceSettings('audit'),
  tamperDemo: setting('AUDIT_TAMPER_DEMO', envBool(true), 'enable the tamper-simulate/restore demo endpoints (set false in production)'),
  merkleScheduleEnabled: setting('MERKLE_SCHEDULE_ENABLED', envBool(true), 'run the hourly Merkle tree build in this replica (an advisory lock lets one replica build)'),
  merkleTickSeconds: setting('MERKLE_TICK_SECONDS', envInt(60), 'how often the scheduler checks whether the hourly tree heads are due'),
  merkleMaxLeavesPerBuild: setting('MERKLE_MAX_LEAVES_PER_BUILD', envInt(1_000_000), 'most records one tree head adds (the rest go into the next build)'),
  verifyThreads: setting('AUDIT_VERIFY_THREADS', z.coerce.number().int().min(0).default(0), 'ranges of a long chain verified at the same time by GET /api/audit/verify (worker threads; 0 = one per CPU core, 1 = sequential)'),
  receiptsEnabled: setting('AUDIT_RECEIPTS', envBool(true), 'sign a receipt for every appended record and return it with the append (docs/evidence.md, "Receipts"); false signs none on append (GET /api/audit/receipts still issues them)'),
  receiptMaxMergeDelaySeconds: setting('RECEIPT_MAX_MERGE_DELAY_SECONDS', envInt(2 * 3600), 'the maximum merge delay a receipt promises: a record is in a signed checkpoint within this many seconds of its receipt (the hourly tree build, its check interval and slack)'),
  receiptKeyLifetimeHours: setting('RECEIPT_KEY_LIFETIME_HOURS', envInt(24), 'how long one in-memory receipt key signs before the next one (and its delegations) replaces it'),
  vaultGrpcUrl: peerUrlSetting('vault', 'vault service gRPC address (signs checkpoints with its HSM-held Ed25519 key)'),
  peerDeadlineMs: setting('PEER_DEADLINE_MS', envInt(10_000), 'deadline of the calls to the vault that sign checkpoints and receipts'),
  exportMaxRecords: setting('EXPORT_MAX_RECORDS', envInt(10_000), 'most audit records one compliance export lists (the summary still counts all)'),
  exportSampleProofs: setting('EXPORT_SAMPLE_PROOFS', envInt(5), 'inclusion proofs sampled into a compliance export'),
  witnesses: setting(
    'AUDIT_WITNESSES',
    witnessList,
    'C2SP tlog-witnesses that cosign every tenant\'s latest checkpoint (docs/evidence.md, "Witnesses"): comma-separated "<url> <witness vkey>" entries; empty: none',
  ),
  witnessTimeoutMs: setting('WITNESS_TIMEOUT_MS', envInt(5_000), 'limit of one add-checkpoint request to a witness'),
  exportMaxBytes: setting('EXPORT_MAX_BYTES', envInt(12 * 1024 * 1024), 'largest audit part of a compliance export sent to the gateway (its JSON); fewer records are listed beyond it (gRPC messages are limited to 16 MB)'),
};

export type AuditConfig = ReturnType<typeof loadAuditConfig>;
export const loadAuditConfig = (env?: Record<string, string | undefined>) => loadConfig(auditSettings, env);
