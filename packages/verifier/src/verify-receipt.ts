/**
 * Offline verification of one call's receipt (docs/evidence.md, "Receipts"), with the tenant's published
 * verifier key only:
 *
 * - delegation: the receipt key's delegation (`agw-receipt-key/v1`) is signed by the tenant's log key and
 *   names a key `<origin>/receipt-key`;
 * - receipt signature: the receipt (`agw-receipt/v1`) is signed by that delegated key, for the same origin;
 * - window: the receipt's time lies in the delegation's not-before .. not-after;
 * - arguments (with the arguments the holder kept): SHA-256(salt || UTF-8(JCS(arguments))) is the receipt's
 *   `arguments` line, with the salt from the receipt file;
 * - inclusion proof (with a proof from GET /api/audit/proof): the receipt's leaf, at leaf index record - 1,
 *   reaches the checkpoint's root; a pending proof past time + mmd is misbehaviour;
 * - checkpoint signature: the checkpoint of the proof is signed by the tenant's log key, for the origin and
 *   the proof's tree size.
 */
import { createHash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';
import { verifyInclusion } from './rfc9162';
import { type VerifierKey, openNote, parseCheckpoint, parseVerifierKey } from './signed-note';
import type { CheckResult } from './verify-export';

const canonicalize = canonicalizeImpl as unknown as (v: unknown) => string | undefined;

export const RECEIPT_HEADER = 'agw-receipt/v1';
export const DELEGATION_HEADER = 'agw-receipt-key/v1';

export interface ReceiptFile {
  note: string;
  key: string;
  arguments_salt?: string;
}

export interface ReceiptProofFile {
  status: 'merged' | 'pending';
  record_id: number;
  leaf_index: number;
  leaf_hash: string;
  record_hash?: string;
  tree_size?: number;
  proof?: string[];
  checkpoint?: string;
  merge_by?: string;
}

/** The receipt object of a file: the receipt itself, a REST answer (`receipt`) or an MCP result (`_meta["io.agw/receipt"]`). */
export function receiptOf(doc: unknown): ReceiptFile {
  const o = doc as { note?: unknown; receipt?: unknown; _meta?: Record<string, unknown> } | null;
  const r = (o && typeof o.note === 'string' ? o : (o?.receipt ?? o?._meta?.['io.agw/receipt'])) as ReceiptFile | undefined;
  if (!r || typeof r.note !== 'string' || typeof r.key !== 'string') throw new Error('no receipt in the file: expected {note, key, arguments_salt}, an answer with `receipt`, or an MCP result with _meta["io.agw/receipt"]');
  return r;
}

/** `key value` lines after the header, in order; every key once. */
function fields(text: string, header: string, keys: readonly string[]): Record<string, string> {
  const lines = text.slice(0, -1).split('\n');
  if (lines[0] !== header) throw new Error(`the first line is not ${header}`);
  const out: Record<string, string> = {};
  const rest = lines.slice(1);
  if (rest.length !== keys.length) throw new Error(`${header} has ${keys.length} lines after its header, not ${rest.length}`);
  rest.forEach((l, i) => {
    const sp = l.indexOf(' ');
    const k = sp < 0 ? l : l.slice(0, sp);
    if (k !== keys[i] || sp < 0) throw new Error(`line ${i + 2} is not "${keys[i]} <value>"`);
    out[k] = l.slice(sp + 1);
  });
  return out;
}

const RECEIPT_KEYS = ['origin', 'record', 'leaf', 'decision', 'tool', 'method', 'arguments', 'definition', 'policy', 'approver', 'time', 'mmd'] as const;
const DELEGATION_KEYS = ['origin', 'key', 'not-before', 'not-after'] as const;

export interface ParsedReceipt {
  origin: string;
  record: number;
  leafHex: string;
  decision: string;
  tool: string;
  method: string;
  arguments: string;
  definition: string;
  policy: string;
  approver: string;
  time: Date;
  mmdSeconds: number;
}

export function parseReceiptText(text: string): ParsedReceipt {
  const f = fields(text, RECEIPT_HEADER, RECEIPT_KEYS);
  if (!/^[1-9][0-9]*$/.test(f.record)) throw new Error('record is a positive decimal');
  const leaf = Buffer.from(f.leaf, 'base64');
  if (leaf.length !== 32 || leaf.toString('base64') !== f.leaf) throw new Error('leaf is the base64 of 32 bytes');
  const time = new Date(f.time);
  if (Number.isNaN(time.getTime()) || time.toISOString() !== f.time) throw new Error('time is an RFC 3339 UTC time with milliseconds');
  if (!/^(0|[1-9][0-9]*)$/.test(f.mmd)) throw new Error('mmd is a decimal number of seconds');
  return { ...f, record: Number(f.record), leafHex: leaf.toString('hex'), time, mmdSeconds: Number(f.mmd) } as unknown as ParsedReceipt;
}

export interface VerifyReceiptInput {
  receipt: ReceiptFile;
  /** the arguments the holder kept (as sent), when they are to be checked */
  arguments?: unknown;
  proof?: ReceiptProofFile;
  /** now, for a pending proof (default the clock) */
  now?: Date;
}

export function verifyReceipt(input: VerifyReceiptInput, tenantKey: VerifierKey): { results: CheckResult[]; receipt?: ParsedReceipt } {
  const results: CheckResult[] = [];
  const ok = (name: string, detail: string) => results.push({ name, ok: true, detail });
  const fail = (name: string, detail: string) => results.push({ name, ok: false, detail });
  ok('verifier key', `${tenantKey.name} (key id ${tenantKey.keyId.toString('hex')})`);

  // the delegation, by the tenant's log key
  let delegated: VerifierKey;
  let window: { from: Date; to: Date };
  try {
    const d = fields(openNote(input.receipt.key, tenantKey), DELEGATION_HEADER, DELEGATION_KEYS);
    if (d.origin !== tenantKey.name) throw new Error(`the delegation is for ${d.origin}, not ${tenantKey.name}`);
    delegated = parseVerifierKey(d.key);
    if (delegated.name !== `${d.origin}/receipt-key`) throw new Error(`the delegated key is named ${delegated.name}, not ${d.origin}/receipt-key`);
    window = { from: new Date(d['not-before']), to: new Date(d['not-after']) };
    if (Number.isNaN(window.from.getTime()) || Number.isNaN(window.to.getTime()) || window.from >= window.to) throw new Error('not-before and not-after are times, the first before the second');
    ok('delegation', `receipt key ${delegated.keyId.toString('hex')} delegated by ${tenantKey.name} from ${d['not-before']} to ${d['not-after']}`);
  } catch (e) {
    fail('delegation', (e as Error).message);
    return { results };
  }

  let r: ParsedReceipt;
  try {
    r = parseReceiptText(openNote(input.receipt.note, delegated));
    if (r.origin !== tenantKey.name) throw new Error(`the receipt is for ${r.origin}, not ${tenantKey.name}`);
    ok('receipt signature', `record ${r.record} (${r.decision} ${r.tool} ${r.method}, policy ${r.policy}${r.approver !== '-' ? `, approved by ${r.approver}` : ''}) signed by the delegated key`);
  } catch (e) {
    fail('receipt signature', (e as Error).message);
    return { results };
  }

  if (r.time < window.from || r.time > window.to) fail('window', `the receipt's time ${r.time.toISOString()} is outside the delegation's window`);
  else ok('window', `${r.time.toISOString()} is inside the delegation's window`);

  if (input.arguments !== undefined) {
    const salt = input.receipt.arguments_salt ? Buffer.from(input.receipt.arguments_salt, 'base64') : undefined;
    const json = canonicalize(input.arguments);
    if (r.arguments === '-') fail('arguments', 'the receipt commits to no arguments hash');
    else if (!salt || salt.length !== 16) fail('arguments', 'the receipt file has no 16-byte arguments_salt');
    else if (json === undefined) fail('arguments', 'the arguments are not JSON');
    else {
      const h = createHash('sha256').update(Buffer.concat([salt, Buffer.from(json, 'utf8')])).digest('hex');
      if (h !== r.arguments) fail('arguments', `SHA-256(salt || JCS(arguments)) is ${h}, the receipt says ${r.arguments}`);
      else ok('arguments', `SHA-256(salt || JCS(arguments)) = ${h}`);
    }
  }

  const p = input.proof;
  if (p) {
    const now = input.now ?? new Date();
    const deadline = new Date(r.time.getTime() + r.mmdSeconds * 1000);
    if (p.record_id !== r.record || p.leaf_index !== r.record - 1 || p.leaf_hash !== r.leafHex) {
      fail('inclusion proof', `the proof is for record ${p.record_id} (leaf ${p.leaf_index}, ${p.leaf_hash}), not the receipt's record ${r.record} (leaf ${r.record - 1}, ${r.leafHex})`);
    } else if (p.status !== 'merged') {
      if (now > deadline) fail('inclusion proof', `misbehaviour: not merged within the maximum merge delay (record ${r.record} should be in a signed checkpoint since ${deadline.toISOString()})`);
      else ok('inclusion proof', `pending: the log promises to merge record ${r.record} by ${deadline.toISOString()}; fetch the proof again then`);
    } else {
      let cp;
      try {
        cp = parseCheckpoint(openNote(p.checkpoint ?? '', tenantKey));
        if (cp.origin !== tenantKey.name) throw new Error(`the checkpoint is for ${cp.origin}, not ${tenantKey.name}`);
        if (cp.treeSize !== p.tree_size) throw new Error(`the checkpoint's size is ${cp.treeSize}, the proof's ${p.tree_size}`);
        ok('checkpoint signature', `tree size ${cp.treeSize} signed by ${tenantKey.name}`);
      } catch (e) {
        fail('checkpoint signature', (e as Error).message);
      }
      if (cp) {
        const proof = (p.proof ?? []).map((h) => Buffer.from(h, 'hex'));
        if (verifyInclusion(Buffer.from(r.leafHex, 'hex'), r.record - 1, cp.treeSize, proof, Buffer.from(cp.rootHex, 'hex'))) ok('inclusion proof', `leaf ${r.record - 1} is in the signed tree of size ${cp.treeSize}`);
        else fail('inclusion proof', `the proof does not lead from leaf ${r.record - 1} to the checkpoint's root`);
      }
    }
  }
  return { results, receipt: r };
}
