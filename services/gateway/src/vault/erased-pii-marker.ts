/**
 * The API's audit views show crypto-shredded data as erased. Stored records keep their ciphertext
 * envelopes (the chain hashes them, so /audit/verify stays valid); when a record is read through the
 * gateway, each envelope of an erased subject is shown with `"erased": true` added to its `$pii` body
 * (remove that key to recompute the record hash). Wraps the audit client's read methods; if the vault
 * cannot answer, records are shown unmarked rather than failing the read.
 */
import type { audit as pb } from '@agw/proto';
import { type Logger, fromAnswerJson, jsonField, jsonOf } from '@agw/shared';
import type { AuditClient, VaultClient } from '../clients/grpc-clients';

/** The `$pii` body when `node` is an envelope (key order is not fixed: Postgres jsonb reorders keys). */
function envelopeBody(node: unknown): Record<string, unknown> | null {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return null;
  const obj = node as Record<string, unknown>;
  const body = obj.$pii as Record<string, unknown> | undefined;
  return Object.keys(obj).length === 1 && body && typeof body === 'object' && body.v === 1 && typeof body.subject === 'string' ? body : null;
}

function collectSubjects(node: unknown, out: Set<string>): void {
  const body = envelopeBody(node);
  if (body) out.add(body.subject as string);
  else if (Array.isArray(node)) node.forEach((v) => collectSubjects(v, out));
  else if (node && typeof node === 'object') Object.values(node).forEach((v) => collectSubjects(v, out));
}

function parsed(r: pb.AuditRecord): unknown {
  const params = jsonOf(r.entry, 'params');
  if (!params?.text.includes('"$pii"')) return null;
  try {
    return fromAnswerJson(params, 'params');
  } catch {
    return null;
  }
}

function subjectsIn(records: pb.AuditRecord[]): string[] {
  const out = new Set<string>();
  for (const r of records) collectSubjects(parsed(r), out);
  return [...out];
}

function mark(node: unknown, erased: Set<string>): unknown {
  const body = envelopeBody(node);
  if (body) return erased.has(body.subject as string) ? { $pii: { ...body, erased: true } } : node;
  if (Array.isArray(node)) return node.map((v) => mark(v, erased));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, mark(v, erased)]));
}

export async function markErasedRecords(vault: VaultClient, tenantId: string, records: pb.AuditRecord[], logger: Logger): Promise<pb.AuditRecord[]> {
  const subjects = subjectsIn(records);
  if (!subjects.length) return records;
  let erased: Set<string>;
  try {
    erased = new Set((await vault.filterErasedSubjects({ tenant_id: tenantId, subject_ids: subjects })).subject_ids);
  } catch (e) {
    logger.warn({ err: e, tenantId }, 'vault unreachable: audit records shown without erasure marks');
    return records;
  }
  if (!erased.size) return records;
  return records.map((r) => {
    const params = parsed(r);
    if (!r.entry || params === null || !subjectsIn([r]).some((s) => erased.has(s))) return r;
    return { ...r, entry: { ...r.entry, ...jsonField('params', mark(params, erased)) } };
  });
}

/** The audit client with erasure marks on its read methods (appends and verification untouched). */
/** The vault client's deadline of `filterErasedSubjects` bounds the look-up: past it, records are shown without erasure marks. */
export function withErasureMarks(audit: AuditClient, vault: VaultClient, logger: Logger): AuditClient {
  return {
    ...audit,
    listRecords: async (req, o) => {
      const res = await audit.listRecords(req, o);
      return { ...res, records: await markErasedRecords(vault, req.tenant_id, res.records, logger) };
    },
    getByAction: async (req, o) => {
      const res = await audit.getByAction(req, o);
      return { ...res, records: await markErasedRecords(vault, req.tenant_id, res.records, logger) };
    },
  };
}
