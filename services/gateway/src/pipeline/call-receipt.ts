/**
 * A governed call's receipt (docs/evidence.md, "Receipts"), in one place for every answer:
 *
 * - `callEvidence(args)`: the arguments as the agent sent them are hashed with a fresh 16-byte salt,
 *   `arguments_sha256 = SHA-256(salt || UTF-8(JCS(arguments)))`. The recorder puts the hash in the record's
 *   `details` (so the chain commits to it); the salt goes ONLY to the caller, with the receipt, and is never
 *   stored: after a subject's crypto-shredding a stored hash cannot confirm a guessed value.
 * - the recorder keeps the receipt the audit service signed right after the commit (`evidence.receipt`);
 * - `answerReceipt(evidence)` is the `receipt` object of the REST answer and of MCP `_meta["io.agw/receipt"]`:
 *   `{note, key, arguments_salt}`; `receiptHeader` the `AGW-Receipt` header (base64url of the note).
 */
import { randomBytes } from 'node:crypto';
import type { audit } from '@agw/proto';
import { canonicalJson, sha256Concat } from '@agw/shared';

export const RECEIPT_HEADER = 'AGW-Receipt';
export const RECEIPT_META = 'io.agw/receipt';

export interface CallEvidence {
  salt: Buffer;
  argumentsSha256: string;
  /** set by the recorder from the append's answer (absent when none was signed) */
  receipt?: audit.Receipt;
}

/** What the caller gets: the receipt note, the delegation of its key, and the salt of the arguments hash (base64). */
export interface AnswerReceipt {
  note: string;
  key: string;
  arguments_salt?: string;
}

export function callEvidence(args: Record<string, unknown>): CallEvidence {
  const salt = randomBytes(16);
  return { salt, argumentsSha256: sha256Concat(salt, Buffer.from(canonicalJson(args), 'utf8')).toString('hex') };
}

/** The receipt of a recorded call, or undefined when none was signed. `salted`: the record carries this call's arguments hash. */
export function answerReceipt(evidence: CallEvidence | undefined, salted = true): AnswerReceipt | undefined {
  const r = evidence?.receipt;
  if (!r?.note) return undefined;
  return { note: r.note, key: r.key, ...(salted ? { arguments_salt: evidence!.salt.toString('base64') } : {}) };
}

/** The receipt of an append answer that hashed no arguments of the caller (a human's decision). */
export function recordReceipt(r: audit.Receipt | undefined): AnswerReceipt | undefined {
  return r?.note ? { note: r.note, key: r.key } : undefined;
}

export function receiptHeader(r: AnswerReceipt): string {
  return Buffer.from(r.note, 'utf8').toString('base64url');
}

/** An MCP result with the receipt in `_meta["io.agw/receipt"]` (the result unchanged without one). */
export function withReceiptMeta<T extends Record<string, unknown>>(result: T, r: AnswerReceipt | undefined): T {
  if (!r) return result;
  return { ...result, _meta: { ...((result._meta as object | undefined) ?? {}), [RECEIPT_META]: r } };
}
