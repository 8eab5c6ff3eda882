/**
 * Signed notes (C2SP signed-note, https://c2sp.org/signed-note) with one Ed25519 key held by the HSM:
 * the checkpoints of every tenant's log (C2SP tlog-checkpoint) and erasure statements.
 *
 * - The private key is generated in the HSM (PKCS#11 CKM_EC_EDWARDS_KEY_PAIR_GEN, sensitive and not
 *   extractable) under the label `agw:evidence:ed25519` and signs with CKM_EDDSA; it never leaves it.
 * - A tenant's key name is its log's origin, `<EVIDENCE_LOG_HOST>/agw/<tenant_id>` (the C2SP
 *   recommendation: the key name matches the origin line). Its key ID is
 *   SHA-256(name || 0x0A || 0x01 || public key)[:4], so each tenant has its own verifier key
 *   (`name+keyhash+base64(0x01 || public key)`), and a signature made for one tenant's log does not verify
 *   under another tenant's key.
 * - Only three kinds of text are signed (no signing oracle): a checkpoint of the tenant's origin (exactly
 *   origin, tree size, base64 root), an erasure statement (`agw-erasure-statement/v1`, then
 *   `origin <the tenant's origin>`, then `key value` lines), and the delegation of the audit service's
 *   receipt key (`agw-receipt-key/v1`, `origin`, `key <vkey named <origin>/receipt-key>`, `not-before`,
 *   `not-after`; docs/evidence.md, "Receipts").
 */
import { DependencyUnavailableError, InputError, sha256Concat } from '@agw/shared';
import type { HsmBackend } from '../hsm/hsm-backend';

export const EVIDENCE_KEY_LABEL = 'agw:evidence:ed25519';
export const ERASURE_STATEMENT_HEADER = 'agw-erasure-statement/v1';
export const RECEIPT_KEY_HEADER = 'agw-receipt-key/v1';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ED25519_TYPE = 0x01;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NoteKeyInfo {
  keyName: string;
  vkey: string;
  keyId: Buffer;
  publicKey: Buffer;
  custody: string;
}

export function noteKeyId(name: string, publicKey: Buffer): Buffer {
  return sha256Concat(Buffer.from(name, 'utf8'), Buffer.from([0x0a, ED25519_TYPE]), publicKey).subarray(0, 4);
}

export function encodeVerifierKey(name: string, publicKey: Buffer): string {
  return `${name}+${noteKeyId(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.from([ED25519_TYPE]), publicKey]).toString('base64')}`;
}

/** The text is a note text: UTF-8 lines each ending in a newline, no control characters but newline, no empty line. */
function noteLines(text: string): string[] {
  if (!text.endsWith('\n')) throw InputError.field('text', 'a note text ends with a newline');
  if (/[\u0000-\u0009\u000b-\u001f]/.test(text)) throw InputError.field('text', 'a note text contains no control characters other than newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.some((l) => l === '')) throw InputError.field('text', 'a note text here has no empty line');
  return lines;
}

export interface NoteSignerOptions {
  /** HSM label of the signing key (default EVIDENCE_KEY_LABEL; tests use fresh labels) */
  label?: string;
  /**
   * Runs the key's find-or-create under a lock every vault replica shares (KeyRepository.withLabelLock, a
   * Postgres advisory lock): two replicas signing their first checkpoint at once must not generate two key
   * pairs under one label (each would then publish its own public key, and signatures would follow
   * whichever private key the token finds first).
   */
  lock?: <T>(fn: () => Promise<T>) => Promise<T>;
}

export class NoteSigner {
  private publicKey?: Promise<Buffer>;
  private readonly label: string;

  constructor(
    private readonly hsm: HsmBackend,
    private readonly logHost: string,
    private readonly o: NoteSignerOptions = {},
  ) {
    this.label = o.label ?? EVIDENCE_KEY_LABEL;
  }

  originOf(tenantId: string): string {
    if (!UUID.test(tenantId)) throw InputError.field('tenant_id', 'tenant_id must be a UUID');
    return `${this.logHost}/agw/${tenantId.toLowerCase()}`;
  }

  private key(): Promise<Buffer> {
    // one find-or-create per process (concurrent first calls share it), under the replicas' lock
    this.publicKey ??= this.findOrCreateKey().catch((e: unknown) => {
      this.publicKey = undefined;
      throw e;
    });
    return this.publicKey;
  }

  private async findOrCreateKey(): Promise<Buffer> {
    const hsm = this.hsm;
    if (!hsm.ensureEd25519Key || !hsm.signEd25519) {
      throw new DependencyUnavailableError(`the ${hsm.name} key backend offers no Ed25519 signing: signed checkpoints are unavailable (docs/evidence.md)`);
    }
    const ensure = async () => (await hsm.ensureEd25519Key!(this.label)).publicKey;
    return this.o.lock ? this.o.lock(ensure) : ensure();
  }

  async keyInfo(tenantId: string): Promise<NoteKeyInfo> {
    const keyName = this.originOf(tenantId);
    const publicKey = await this.key();
    return { keyName, publicKey, keyId: noteKeyId(keyName, publicKey), vkey: encodeVerifierKey(keyName, publicKey), custody: `${this.hsm.name}:Ed25519 (${this.hsm.name === 'pkcs11' ? 'CKM_EDDSA' : 'backend signing'})` };
  }

  /** Check the text is one of the two kinds this key signs (for this tenant), then sign it. */
  async sign(tenantId: string, text: string): Promise<{ note: string; keyName: string; signature: string }> {
    const origin = this.originOf(tenantId);
    const lines = noteLines(text);
    if (lines[0] === origin) {
      if (lines.length !== 3) throw InputError.field('text', 'a checkpoint has exactly three lines: origin, tree size, root hash');
      if (!/^(0|[1-9][0-9]*)$/.test(lines[1])) throw InputError.field('text', 'the tree size is a decimal number without leading zeroes');
      const root = Buffer.from(lines[2], 'base64');
      if (root.length !== 32 || root.toString('base64') !== lines[2]) throw InputError.field('text', 'the root hash is the base64 of 32 bytes');
    } else if (lines[0] === ERASURE_STATEMENT_HEADER) {
      if (lines[1] !== `origin ${origin}`) throw InputError.field('text', `an erasure statement names the tenant's origin on its second line`);
      if (lines.slice(2).some((l) => !/^[a-z_]+ \S+$/.test(l))) throw InputError.field('text', 'erasure statement lines are "key value"');
    } else if (lines[0] === RECEIPT_KEY_HEADER) {
      const key = /^key (\S+)\+[0-9a-f]{8}\+(\S+)$/.exec(lines[2] ?? '');
      const from = /^not-before (\S+)$/.exec(lines[3] ?? '')?.[1] ?? '';
      const to = /^not-after (\S+)$/.exec(lines[4] ?? '')?.[1] ?? '';
      if (
        lines.length !== 5 ||
        lines[1] !== `origin ${origin}` ||
        key?.[1] !== `${origin}/receipt-key` ||
        Buffer.from(key[2], 'base64').length !== 33 ||
        !ISO_MS.test(from) ||
        !ISO_MS.test(to) ||
        from >= to
      ) {
        throw InputError.field('text', 'a receipt key delegation is: agw-receipt-key/v1, origin <the tenant\'s origin>, key <vkey named <origin>/receipt-key>, not-before <time>, not-after <later time>');
      }
    } else {
      throw InputError.field('text', 'only checkpoints of the tenant\'s log, erasure statements and receipt key delegations are signed');
    }
    await this.key();
    const info = await this.keyInfo(tenantId);
    const sig = await this.hsm.signEd25519!(this.label, Buffer.from(text, 'utf8'));
    const signature = Buffer.concat([info.keyId, sig]).toString('base64');
    return { note: `${text}\n\u2014 ${info.keyName} ${signature}\n`, keyName: info.keyName, signature };
  }
}
