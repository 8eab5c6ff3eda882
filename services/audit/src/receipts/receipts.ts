/**
 * Receipts: a signed statement for every committed record, handed to the caller with the answer
 * (docs/evidence.md, "Receipts"). A receipt is a C2SP signed note, like the checkpoints, so one format and
 * one verifier serve all evidence:
 *
 *   agw-receipt/v1
 *   origin <the tenant's log origin>
 *   record <the tenant's record id>
 *   leaf <base64 of the RFC 9162 leaf hash, SHA-256(0x00 || record_hash bytes)>
 *   decision <allow | deny | requires_human | observed>
 *   tool <tool>
 *   method <method>
 *   arguments <details.arguments_sha256, or ->
 *   definition <details.definition_sha256, or ->
 *   policy <bundle_revision>
 *   approver <details.decided_by, or ->
 *   time <RFC 3339, ms, UTC: when the receipt was signed>
 *   mmd <maximum merge delay in seconds>
 *
 * No HSM round trip per call: the note is signed by an in-memory Ed25519 *receipt key* of this process
 * (node:crypto, rotated by age). The tenant's HSM log key delegates it once per key and tenant with a
 * signed note of its own (`agw-receipt-key/v1`, signed by the vault: one SignNote per tenant per key),
 * which travels with every receipt as `key`. A verifier checks the delegation with the tenant's published
 * verifier key, then the receipt with the delegated key, and that the receipt's time lies in the
 * delegation's window.
 */
import { type KeyObject, generateKeyPairSync, sign } from 'node:crypto';
import { type Logger, recordIdOf, sha256Concat } from '@agw/shared';
import type { StoredRecord } from '../chain/audit-record.repository';
import type { NoteSignerPort } from '../checkpoints/checkpoints';

export const RECEIPT_HEADER = 'agw-receipt/v1';
export const DELEGATION_HEADER = 'agw-receipt-key/v1';
const RECEIPT_KEY_SUFFIX = '/receipt-key';
const ED25519 = 0x01;

export interface Receipt {
  /** the receipt: a signed note by the receipt key */
  note: string;
  /** the delegation of the receipt key: a signed note by the tenant's log key */
  key: string;
}

/** A line value: printable ASCII without spaces as is; anything else percent-encoded (never empty). */
export function token(v: unknown): string {
  if (v === undefined || v === null || v === '') return '-';
  const s = String(v);
  return /^[\x21-\x7e]+$/.test(s) ? s : encodeURIComponent(s);
}

/** RFC 9162 leaf hash of a record: SHA-256(0x00 || the 32 bytes of record_hash). */
export function recordLeafHash(recordHashHex: string): Buffer {
  return sha256Concat(Buffer.from([0x00]), Buffer.from(recordHashHex, 'hex'));
}

const HEX64 = /^[0-9a-f]{64}$/;

export function receiptText(origin: string, r: StoredRecord, time: Date, mmdSeconds: number): string {
  const d = (r.details ?? {}) as Record<string, unknown>;
  const hex = (v: unknown) => (typeof v === 'string' && HEX64.test(v) ? v : '-');
  const approver = d.approver ?? d.decided_by;
  return [
    RECEIPT_HEADER,
    `origin ${origin}`,
    `record ${recordIdOf(r.tenant_seq)}`,
    `leaf ${recordLeafHash(r.record_hash).toString('base64')}`,
    `decision ${token(r.decision)}`,
    `tool ${token(r.tool)}`,
    `method ${token(r.method)}`,
    `arguments ${hex(d.arguments_sha256)}`,
    `definition ${hex(d.definition_sha256)}`,
    `policy ${token(r.bundle_revision)}`,
    `approver ${typeof approver === 'string' ? token(approver) : '-'}`,
    `time ${time.toISOString()}`,
    `mmd ${mmdSeconds}`,
    '',
  ].join('\n');
}

export function delegationText(origin: string, vkey: string, notBefore: Date, notAfter: Date): string {
  return [DELEGATION_HEADER, `origin ${origin}`, `key ${vkey}`, `not-before ${notBefore.toISOString()}`, `not-after ${notAfter.toISOString()}`, ''].join('\n');
}

/** C2SP key id and verifier key (`name+keyhash+base64(0x01 || key)`) of an Ed25519 public key. */
export function verifierKeyOf(name: string, publicKey: Buffer): { keyId: Buffer; vkey: string } {
  const keyId = sha256Concat(Buffer.from(name, 'utf8'), Buffer.from([0x0a, ED25519]), publicKey).subarray(0, 4);
  return { keyId, vkey: `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), publicKey]).toString('base64')}` };
}

/** A tenant's delegation of a receipt key: the note, and the key's name and id for that tenant (computed once). */
interface Delegation {
  origin: string;
  note: string;
  name: string;
  keyId: Buffer;
}

interface ReceiptKey {
  privateKey: KeyObject;
  publicKey: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** after this the next receipt uses a new key */
  retireAt: number;
  /** delegations of this key by tenant (a promise, so concurrent first calls share one SignNote) */
  delegations: Map<string, Promise<Delegation>>;
  /** the delegations signed so far (read without waiting) */
  ready: Map<string, Delegation>;
}

export interface ReceiptsOptions {
  /** the maximum merge delay each receipt promises (seconds) */
  mmdSeconds: number;
  /** a receipt key signs for this long before the next one replaces it (ms) */
  keyLifetimeMs: number;
  logger: Logger;
  now?: () => number;
  /** longest an append waits for a tenant's delegation (the vault's SignNote); a slower one is used by the receipts after it arrives (default 2000 ms) */
  delegationWaitMs?: number;
  /** after a failed or slow delegation, no append of the tenant waits for one for this long (default 30 s): a vault that is down or hung costs an append a wait at most once per period */
  retryAfterMs?: number;
}

/** key windows start this much before the key's creation and end this much after its retirement (clock skew, in-flight calls) */
const WINDOW_SLACK_MS = 5 * 60_000;

export class Receipts {
  private current?: ReceiptKey;
  private readonly now: () => number;
  private lastWarning = 0;
  /** tenant -> until when no delegation is asked for (after a failure) */
  private readonly failedUntil = new Map<string, number>();

  constructor(
    private readonly signer: NoteSignerPort,
    private readonly o: ReceiptsOptions,
  ) {
    this.now = o.now ?? Date.now;
  }

  get mmdSeconds(): number {
    return this.o.mmdSeconds;
  }

  /**
   * The receipt of a committed record, or undefined when the key cannot be delegated now (vault unreachable,
   * or it failed in the last `retryAfterMs`; `retryNow` asks anyway, as a read of a stored record's receipt
   * does): the record stands.
   */
  async issue(tenantId: string, record: StoredRecord, o: { retryNow?: boolean } = {}): Promise<Receipt | undefined> {
    const k = this.key();
    // the steady state: the tenant's delegation is at hand, nothing to wait for
    const ready = k.ready.get(tenantId);
    if (ready) return this.sign(k, ready, record);
    const blocked = this.failedUntil.get(tenantId);
    if (blocked !== undefined && !o.retryNow) {
      if (this.now() < blocked) return undefined;
      this.failedUntil.delete(tenantId);
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const d = await Promise.race([
        this.delegation(k, tenantId),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the receipt key delegation is still being signed')), this.o.delegationWaitMs ?? 2000);
        }),
      ]);
      return this.sign(k, d, record);
    } catch (e) {
      // failed or slow: no append of the tenant waits for the vault for a while (a slow delegation that
      // arrives meanwhile is used at once: `ready` is read first)
      if (this.failedUntil.size > 10_000) this.failedUntil.clear();
      this.failedUntil.set(tenantId, this.now() + (this.o.retryAfterMs ?? 30_000));
      if (this.now() - this.lastWarning > 60_000) {
        this.lastWarning = this.now();
        this.o.logger.warn({ err: e, tenantId }, 'receipt not issued: the receipt key could not be delegated (the record is committed)');
      }
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private sign(k: ReceiptKey, d: Delegation, record: StoredRecord): Receipt {
    const text = receiptText(d.origin, record, new Date(this.now()), this.o.mmdSeconds);
    const sig = sign(null, Buffer.from(text, 'utf8'), k.privateKey);
    return { note: `${text}\n\u2014 ${d.name} ${Buffer.concat([d.keyId, sig]).toString('base64')}\n`, key: d.note };
  }

  private key(): ReceiptKey {
    const now = this.now();
    if (this.current && now < this.current.retireAt) return this.current;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    this.current = {
      privateKey,
      publicKey: Buffer.from(raw),
      notBefore: new Date(now - WINDOW_SLACK_MS),
      notAfter: new Date(now + this.o.keyLifetimeMs + WINDOW_SLACK_MS),
      retireAt: now + this.o.keyLifetimeMs,
      delegations: new Map(),
      ready: new Map(),
    };
    return this.current;
  }

  /** The key's name for a tenant: distinct from the log key's (the origin), so neither can pass for the other. */
  static keyName(origin: string): string {
    return `${origin}${RECEIPT_KEY_SUFFIX}`;
  }

  private delegation(k: ReceiptKey, tenantId: string): Promise<Delegation> {
    let p = k.delegations.get(tenantId);
    if (!p) {
      p = this.signer
        .keyName(tenantId)
        .then(async (origin) => {
          const name = Receipts.keyName(origin);
          const { vkey, keyId } = verifierKeyOf(name, k.publicKey);
          const { note } = await this.signer.sign(tenantId, delegationText(origin, vkey, k.notBefore, k.notAfter));
          const d = { origin, note, name, keyId };
          if (k.ready.size > 10_000) k.ready.clear();
          k.ready.set(tenantId, d);
          return d;
        })
        .catch((e: unknown) => {
          // a failure is not kept: a later receipt asks again
          k.delegations.delete(tenantId);
          throw e;
        });
      if (k.delegations.size > 10_000) k.delegations.clear();
      k.delegations.set(tenantId, p);
    }
    return p;
  }
}
