/**
 * Sealing any JSON value for a data subject with the subject's HSM key, and opening such an envelope
 * (POST /hsm/encrypt, POST /hsm/decrypt): the same envelope format as the PII protection of params.
 */
import { ConflictError, InputError, NOT_A_PII_ENVELOPE } from '@agw/shared';
import { DecryptionFailedError, KeyMissingError } from '../hsm/hsm-backend';
import type { Keyring } from '../keys/keyring';
import type { DataSubjects } from './data-subjects';
import { type PiiEnvelope, piiAad, sealEnvelope, sealedOf } from './pii-envelope';

export class SubjectEnvelopes {
  constructor(
    private readonly keyring: Keyring,
    private readonly subjects: DataSubjects,
  ) {}

  /** POST /hsm/encrypt: seal any JSON value for a subject (created on first use). */
  async encrypt(tenantId: string, subjectId: string, value: unknown, kind = 'manual'): Promise<PiiEnvelope> {
    const { row } = await this.subjects.createSubjectKey(tenantId, { subjectId });
    const sealed = await this.keyring.seal(row.key_id, Buffer.from(JSON.stringify(value), 'utf8'), piiAad(tenantId, row.subject_id));
    return sealEnvelope(row.subject_id, row.key_id, kind, sealed);
  }

  /** POST /hsm/decrypt: open one envelope of this tenant. */
  async decrypt(tenantId: string, body: PiiEnvelope | undefined): Promise<{ subjectId: string; value: unknown }> {
    if (!body || body.v !== 1 || !body.subject) throw InputError.field('envelope', NOT_A_PII_ENVELOPE, 'envelope_invalid');
    const row = await this.subjects.subjectOrThrow(tenantId, body.subject);
    if (row.erased_at || body.erased) throw new ConflictError(`Subject ${body.subject} was erased: the data cannot be decrypted`);
    const sealed = sealedOf(body);
    if (!sealed) throw InputError.field('envelope', 'envelope has no ciphertext', 'envelope_invalid');
    try {
      const plain = await this.keyring.open(row.key_id, sealed, piiAad(tenantId, row.subject_id));
      return { subjectId: row.subject_id, value: JSON.parse(plain.toString('utf8')) };
    } catch (e) {
      if (e instanceof KeyMissingError) throw new ConflictError(`Subject ${body.subject} was erased: the data cannot be decrypted`);
      if (e instanceof DecryptionFailedError) throw InputError.field('envelope', 'the envelope does not authenticate (tampered, or sealed for another tenant)', 'envelope_invalid');
      throw e;
    }
  }
}
