/**
 * Per-subject PII encryption (transport-free). `protect` finds personal data in a call's params and
 * replaces each personal value by an envelope sealed with its data subject's own HSM key, so audit
 * records, the approval queue and replay inputs only ever hold ciphertext. `reveal` opens envelopes
 * (erased subjects come back as "[erased]"). The subjects themselves (ids, keys, erasure) live in
 * data-subjects.ts; sealing any value for a subject (POST /hsm/encrypt|decrypt) in subject-envelopes.ts.
 *
 * Subject identification (docs/vault.md):
 *  1. an explicit subject field (`subject_id`, `data_subject_id`) in an object names the subject of the
 *     personal data in that object and below; its value is a pseudonym chosen by the tenant and is
 *     kept as is;
 *  2. else the object's anchor identifier (first of e-mail, phone, SSN, IBAN, card, IP among its
 *     direct fields) names it, inherited by nested objects that have no anchor of their own;
 *  3. else the value's own identifier, or for a named field without one (`{"name": "Ada"}`) the value.
 * A derived subject id is `sub_` + the first 32 hex digits of HMAC-SHA-256(tenant's HSM HMAC key,
 * "<kind>:<normalised identifier>"): stable per tenant, unlinkable across tenants, and it cannot be
 * computed without the HSM.
 */
import { ConflictError, InputError, NotFoundError } from '@agw/shared';
import { DecryptionFailedError, KeyMissingError } from '../hsm/hsm-backend';
import { KeyDestroyedError, type Keyring, subjectKeyId } from '../keys/keyring';
import { type Identifier, IDENTIFIER_PRIORITY, type PiiKind, detectInValue } from '@agw/pii';
import { ERASED_PLACEHOLDER, type PiiEnvelope, asEnvelope, erasedEnvelope, piiAad, sealEnvelope, sealedOf, storedEnvelope } from './pii-envelope';
import { type DataSubjects, type SubjectRef, isExplicitSubjectId } from './data-subjects';

export { SUBJECT_ID_PATTERN, type SubjectRef, isExplicitSubjectId } from './data-subjects';

export const SUBJECT_FIELDS = ['subject_id', 'data_subject_id'];

interface Site {
  container: Record<string, unknown> | unknown[];
  key: string | number;
  value: unknown;
  kinds: PiiKind[];
  ref: SubjectRef;
}

export interface ProtectResult {
  piiDetected: boolean;
  storedParams: Record<string, unknown>;
  subjectIds: string[];
  kinds: string[];
}

const isScalar = (v: unknown) => typeof v === 'string' || typeof v === 'number';
const refKey = (r: SubjectRef) => (r.source === 'explicit' ? `explicit:${r.id}` : `${r.identifier.kind}:${r.identifier.normalized}`);

export class PiiProtector {
  constructor(
    private readonly keyring: Keyring,
    private readonly subjects: DataSubjects,
  ) {}

  /** Walk the params and collect every personal scalar with the subject it belongs to. */
  private collect(node: unknown, scope: SubjectRef | undefined, fieldName: string | undefined, sites: Site[], container?: Site['container'], key?: string | number): void {
    if (asEnvelope(node)) return; // already protected
    if (Array.isArray(node)) {
      node.forEach((v, i) => this.collect(v, scope, fieldName, sites, node, i));
      return;
    }
    if (node && typeof node === 'object') {
      const obj = node as Record<string, unknown>;
      const own = this.scopeOf(obj);
      const s = own ?? scope;
      for (const [k, v] of Object.entries(obj)) {
        if (SUBJECT_FIELDS.includes(k) && isExplicitSubjectId(v)) continue;
        this.collect(v, s, k, sites, obj, k);
      }
      return;
    }
    if (!isScalar(node) || container === undefined || key === undefined) return;
    const f = detectInValue(node, fieldName);
    if (!f.kinds.length) return;
    const ref: SubjectRef =
      scope ??
      (f.identifiers[0]
        ? { source: 'derived', identifier: f.identifiers[0] }
        : { source: 'derived', identifier: { kind: 'value', normalized: String(node).trim().toLowerCase().replace(/\s+/g, ' ') } });
    sites.push({ container, key, value: node, kinds: f.kinds, ref });
  }

  /** The subject an object names: explicit field, else its anchor identifier. */
  private scopeOf(obj: Record<string, unknown>): SubjectRef | undefined {
    for (const f of SUBJECT_FIELDS) if (isExplicitSubjectId(obj[f])) return { source: 'explicit', id: obj[f] as string };
    let best: Identifier | undefined;
    for (const [k, v] of Object.entries(obj)) {
      if (!isScalar(v)) continue;
      for (const id of detectInValue(v, k).identifiers) {
        if (!best || IDENTIFIER_PRIORITY.indexOf(id.kind) < IDENTIFIER_PRIORITY.indexOf(best.kind)) best = id;
      }
    }
    return best ? { source: 'derived', identifier: best } : undefined;
  }




  async protect(tenantId: string, actionId: string, params: Record<string, unknown>): Promise<ProtectResult> {
    const stored = structuredClone(params);
    const sites: Site[] = [];
    this.collect(stored, undefined, undefined, sites);
    if (!sites.length) return { piiDetected: false, storedParams: stored, subjectIds: [], kinds: [] };

    // one subject id per distinct reference
    const ids = new Map<string, string>();
    for (const s of sites) if (!ids.has(refKey(s.ref))) ids.set(refKey(s.ref), await this.subjects.subjectIdOf(tenantId, s.ref));
    const kindsBySubject = new Map<string, Set<string>>();
    for (const s of sites) {
      const id = ids.get(refKey(s.ref))!;
      const set = kindsBySubject.get(id) ?? new Set<string>();
      s.kinds.forEach((k) => set.add(k));
      kindsBySubject.set(id, set);
    }
    const erased = await this.subjects.erasedAmong(tenantId, [...kindsBySubject.keys()]);
    for (const [id, kinds] of kindsBySubject) {
      if (erased.has(id)) continue;
      const source = sites.find((s) => ids.get(refKey(s.ref)) === id)!.ref.source;
      if (!(await this.subjects.activate(tenantId, id, source, [...kinds].sort()))) erased.add(id);
    }
    for (const s of sites) {
      const id = ids.get(refKey(s.ref))!;
      const kind = s.kinds[0];
      let envelope: PiiEnvelope;
      if (erased.has(id)) envelope = erasedEnvelope(id, kind);
      else {
        const keyId = subjectKeyId(tenantId, id);
        envelope = sealEnvelope(id, keyId, kind, await this.keyring.seal(keyId, Buffer.from(JSON.stringify(s.value), 'utf8'), piiAad(tenantId, id)));
      }
      (s.container as Record<string | number, unknown>)[s.key] = storedEnvelope(envelope);
    }
    const subjectIds = [...kindsBySubject.keys()];
    await this.subjects.linkAction(tenantId, subjectIds, actionId);
    const kinds = [...new Set(sites.flatMap((s) => s.kinds))].sort();
    return { piiDetected: true, storedParams: stored, subjectIds, kinds };
  }

  /** Replace envelopes by their plaintext; erased subjects' values become "[erased]". */
  async reveal(tenantId: string, params: unknown): Promise<{ params: unknown; erasedSubjects: string[] }> {
    const out = structuredClone(params);
    const found: Array<{ container: Record<string | number, unknown>; key: string | number; subject: string; body: NonNullable<ReturnType<typeof asEnvelope>> }> = [];
    const walk = (node: unknown, container?: Record<string | number, unknown>, key?: string | number) => {
      const env = asEnvelope(node);
      if (env && container !== undefined && key !== undefined) {
        found.push({ container, key, subject: env.subject, body: env });
        return;
      }
      if (Array.isArray(node)) node.forEach((v, i) => walk(v, node as unknown as Record<number, unknown>, i));
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, node as Record<string, unknown>, k);
    };
    const root = { value: out };
    walk(out, root, 'value');
    if (!found.length) return { params: out, erasedSubjects: [] };
    const subjects = [...new Set(found.map((f) => f.subject))];
    const erased = await this.subjects.erasedAmong(tenantId, subjects);
    for (const f of found) {
      const sealed = sealedOf(f.body);
      if (erased.has(f.subject) || f.body.erased || !sealed) {
        erased.add(f.subject);
        f.container[f.key] = ERASED_PLACEHOLDER;
        continue;
      }
      try {
        const plain = await this.keyring.open(subjectKeyId(tenantId, f.subject), sealed, piiAad(tenantId, f.subject));
        f.container[f.key] = JSON.parse(plain.toString('utf8'));
      } catch (e) {
        if (e instanceof KeyMissingError) {
          erased.add(f.subject);
          f.container[f.key] = ERASED_PLACEHOLDER;
        } else if (e instanceof DecryptionFailedError) {
          throw InputError.at(['params', String(f.key)], 'a PII envelope does not authenticate (tampered, or from another tenant)', 'envelope_invalid');
        } else throw e;
      }
    }
    return { params: root.value, erasedSubjects: [...erased].filter((s) => subjects.includes(s)) };
  }










}
