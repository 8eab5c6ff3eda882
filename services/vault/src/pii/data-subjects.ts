/**
 * Data subjects of a tenant: their ids (explicit pseudonyms, or derived from an identifier with the tenant's
 * HSM HMAC key: `sub_` + 32 hex digits, stable per tenant, unlinkable across tenants), their per-subject
 * HSM keys, and crypto-shredding (destroying a key erases the subject's data everywhere it was sealed).
 */
import { ConflictError, InputError, NotFoundError } from '@agw/shared';
import { type Identifier, detectInString } from '@agw/pii';
import { KeyDestroyedError, type Keyring, subjectKeyId } from '../keys/keyring';
import type { SubjectRepository, SubjectRow } from './subject.repository';

export const SUBJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Whom a piece of personal data belongs to: an explicit subject id, or the identifier its id is derived from. */
export type SubjectRef = { source: 'explicit'; id: string } | { source: 'derived'; identifier: Identifier | { kind: 'value'; normalized: string } };

/** A valid explicit subject id: a pseudonym, not itself an identifier such as an e-mail address. */
export function isExplicitSubjectId(v: unknown): v is string {
  return typeof v === 'string' && SUBJECT_ID_PATTERN.test(v) && detectInString(v).identifiers.length === 0;
}

export class DataSubjects {
  constructor(
    private readonly keyring: Keyring,
    private readonly subjects: SubjectRepository,
  ) {}

  /** Record that an action's stored params hold data of these subjects (erasure reports the actions). */
  linkAction(tenantId: string, subjectIds: string[], actionId: string): Promise<void> {
    return this.subjects.linkAction(tenantId, subjectIds, actionId);
  }

  /** The tenant-scoped subject id of an identifier: keyed hash with the tenant's HSM HMAC key. */
  async deriveSubjectId(tenantId: string, identifier: { kind: string; normalized: string }): Promise<string> {
    const mac = await this.keyring.hmac(tenantId, `${identifier.kind}:${identifier.normalized}`);
    return `sub_${mac.toString('hex').slice(0, 32)}`;
  }

  async subjectIdOf(tenantId: string, ref: SubjectRef): Promise<string> {
    return ref.source === 'explicit' ? ref.id : this.deriveSubjectId(tenantId, ref.identifier);
  }

  /** Make sure the subject's key exists and the subject is registered; false when it was erased. */
  async activate(tenantId: string, subjectId: string, source: string, kinds: string[]): Promise<boolean> {
    const keyId = subjectKeyId(tenantId, subjectId);
    try {
      await this.keyring.ensure(tenantId, keyId, 'pii_subject', subjectId);
    } catch (e) {
      if (e instanceof KeyDestroyedError) return false;
      throw e;
    }
    await this.subjects.upsert(tenantId, { subject_id: subjectId, key_id: keyId, source, pii_kinds: kinds });
    return true;
  }

  erasedAmong(tenantId: string, subjectIds: string[]): Promise<Set<string>> {
    return this.subjects.erasedAmong(tenantId, subjectIds);
  }

  listSubjects(tenantId: string): Promise<SubjectRow[]> {
    return this.subjects.list(tenantId);
  }

  /** The subject id an identifier maps to (does not create anything). */
  async lookup(tenantId: string, identifier: string, kind?: string): Promise<{ subject_id: string; kind: string; known: SubjectRow | undefined }> {
    const id = this.identifierOf(identifier, kind);
    const subjectId = await this.deriveSubjectId(tenantId, id);
    return { subject_id: subjectId, kind: id.kind, known: await this.subjects.get(tenantId, subjectId) };
  }

  private identifierOf(identifier: string, kind?: string): { kind: string; normalized: string } {
    const text = identifier.trim();
    if (!text) throw InputError.field('identifier', 'identifier must not be empty');
    const f = detectInString(text, kind === 'phone' ? 'phone' : undefined);
    const match = kind ? f.identifiers.find((i) => i.kind === kind) : f.identifiers[0];
    if (match) return match;
    if (kind && kind !== 'value') throw InputError.field('identifier', `not a valid ${kind}`);
    return { kind: 'value', normalized: text.toLowerCase().replace(/\s+/g, ' ') };
  }

  async subjectOrThrow(tenantId: string, subjectId: string): Promise<SubjectRow> {
    const row = SUBJECT_ID_PATTERN.test(subjectId) ? await this.subjects.get(tenantId, subjectId) : undefined;
    if (!row) throw new NotFoundError('Subject not found');
    return row;
  }

  /** Crypto-shredding: destroy the subject's key in the HSM. Irreversible and idempotent. */
  async erase(tenantId: string, subjectId: string): Promise<{ actionIds: string[]; alreadyErased: boolean; erasedAt: Date }> {
    const row = await this.subjectOrThrow(tenantId, subjectId);
    await this.keyring.destroy(tenantId, row.key_id);
    const erasedAt = await this.subjects.markErased(tenantId, subjectId);
    return { actionIds: await this.subjects.actionIds(tenantId, subjectId), alreadyErased: row.erased_at !== null, erasedAt };
  }

  async status(tenantId: string, subjectId: string): Promise<{ row: SubjectRow; keyExists: boolean }> {
    const row = await this.subjectOrThrow(tenantId, subjectId);
    return { row, keyExists: await this.keyring.exists(row.key_id) };
  }

  /** POST /hsm/keys: create (idempotently) the key of a subject named by id or by identifier. */
  async createSubjectKey(tenantId: string, o: { subjectId?: string; identifier?: string }): Promise<{ row: SubjectRow; created: boolean }> {
    let subjectId: string;
    let source: string;
    if (o.subjectId) {
      if (!isExplicitSubjectId(o.subjectId)) throw InputError.field('subject_id', `subject_id must match ${SUBJECT_ID_PATTERN} and not be an identifier such as an e-mail address (send it as identifier)`, 'string_pattern_mismatch');
      subjectId = o.subjectId;
      source = 'explicit';
    } else if (o.identifier) {
      subjectId = await this.deriveSubjectId(tenantId, this.identifierOf(o.identifier));
      source = 'derived';
    } else throw InputError.field('subject_id', 'subject_id or identifier is required', 'missing');
    const before = await this.subjects.get(tenantId, subjectId);
    if (before?.erased_at) throw new ConflictError(`Subject ${subjectId} was erased; its key cannot be recreated`);
    if (!(await this.activate(tenantId, subjectId, before?.source ?? source, []))) throw new ConflictError(`Subject ${subjectId} was erased; its key cannot be recreated`);
    return { row: (await this.subjects.get(tenantId, subjectId))!, created: !before };
  }
}
