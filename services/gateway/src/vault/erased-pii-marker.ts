/**
 * The API's audit views show crypto-shredded data as erased. Stored records keep their ciphertext
 * envelopes (the chain hashes them, so /audit/verify stays valid); when a record is read through the
 * gateway, each envelope of an erased subject is shown with `"erased": true` added to its `$pii` body
 * (remove that key to recompute the record hash). Wraps the audit client's read methods; if the vault
 * cannot answer, records are shown unmarked rather than failing the read.
 */
import type { audit as pb } from '@agw/proto';
import type { Logger } from '@agw/shared';
import type { AuditClient, VaultClient } from '../clients/grpc-clients';

const SUBJECT_IN_ENVELOPE = /"\$pii":\{"v":1,"subject":"([A-Za-z0-9._:-]{1,128})"/g;

function subjectsIn(records: pb.AuditRecord[]): string[] {
  const out = new Set<string>();
  for (const r of records) for (const m of (r.entry?.paramsJson ?? '').matchAll(SUBJECT_IN_ENVELOPE)) out.add(m[1]);
  return [...out];
}

function mark(node: unknown, erased: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((v) => mark(v, erased));
  if (!node || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  const body = obj.$pii as Record<string, unknown> | undefined;
  if (Object.keys(obj).length === 1 && body && typeof body === 'object' && body.v === 1 && typeof body.subject === 'string') {
    return erased.has(body.subject) ? { $pii: { ...body, erased: true } } : obj;
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, mark(v, erased)]));
}

export async function markErasedRecords(vault: VaultClient, tenantId: string, records: pb.AuditRecord[], logger: Logger): Promise<pb.AuditRecord[]> {
  const subjects = subjectsIn(records);
  if (!subjects.length) return records;
  let erased: Set<string>;
  try {
    erased = new Set((await vault.filterErasedSubjects({ tenantId, subjectIds: subjects }, { deadlineMs: 3000 })).subjectIds);
  } catch (e) {
    logger.warn({ err: e, tenantId }, 'vault unreachable: audit records shown without erasure marks');
    return records;
  }
  if (!erased.size) return records;
  return records.map((r) => {
    const text = r.entry?.paramsJson ?? '';
    if (!r.entry || !subjectsIn([r]).some((s) => erased.has(s))) return r;
    return { ...r, entry: { ...r.entry, paramsJson: JSON.stringify(mark(JSON.parse(text), erased)) } };
  });
}

/** The audit client with erasure marks on its read methods (appends and verification untouched). */
export function withErasureMarks(audit: AuditClient, vault: VaultClient, logger: Logger): AuditClient {
  return {
    ...audit,
    listRecords: async (req, o) => {
      const res = await audit.listRecords(req, o);
      return { ...res, records: await markErasedRecords(vault, req.tenantId, res.records, logger) };
    },
    getByAction: async (req, o) => {
      const res = await audit.getByAction(req, o);
      return { ...res, records: await markErasedRecords(vault, req.tenantId, res.records, logger) };
    },
  };
}
