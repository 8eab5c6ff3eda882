/**
 * Witnesses of the tenants' logs (docs/evidence.md, "Witnesses"): after a checkpoint is signed, the
 * tenant's latest checkpoint goes to every configured witness with C2SP tlog-witness `add-checkpoint`, with
 * an RFC 9162 consistency proof from the size that witness cosigned last (a 409 names that size: the proof
 * is made again from there, once). The `X-Log-Verifier-Key` header lets a witness that pins the fleet's logs
 * on first contact learn the tenant's key. A cosignature that verifies with the witness's configured key is
 * kept (checkpoint_cosignatures); the cosigned checkpoint is the note followed by those lines.
 *
 * A witness that refuses a checkpoint as inconsistent or wrongly signed (422, 403) has seen another view of
 * the log: that is raised as an alert (an error log line), a metric (`audit_witness_refusals_total`), and a
 * `control_plane` record in the tenant's own chain with the decision event `witness_refused`, which the
 * webhook service delivers as `evidence.witness_refused`. A witness that cannot be reached, or does not know
 * the log (404), is only counted and logged: the next checkpoint tries again.
 */
import { randomUUID } from 'node:crypto';
import { type CosignerKey, cosignatureTime } from '@agw/verifier';
import { type Counter, type Database, type Db, type Logger, controlPlaneRecord } from '@agw/shared';
import type { Kysely } from 'kysely';
import type { StoredCheckpoint } from './checkpoint.repository';

export interface WitnessEndpoint {
  /** the submission prefix: add-checkpoint is POSTed to `<url>/add-checkpoint` */
  url: string;
  key: CosignerKey;
}

export interface CosignatureRow {
  tree_size: number;
  witness: string;
  line: string;
  cosigned_at: string;
}

export class CosignatureRepository {
  constructor(private readonly db: Kysely<Database> | Db) {}

  async lastSize(tenantId: string, witness: string): Promise<number> {
    const r = await this.db.selectFrom('checkpoint_cosignatures').select((eb) => eb.fn.max('tree_size').as('size')).where('tenant_id', '=', tenantId).where('witness', '=', witness).executeTakeFirst();
    return Number(r?.size ?? 0);
  }

  async insert(tenantId: string, row: CosignatureRow): Promise<void> {
    await this.db
      .insertInto('checkpoint_cosignatures')
      .values({ tenant_id: tenantId, ...row })
      .onConflict((oc) => oc.columns(['tenant_id', 'witness', 'tree_size']).doNothing())
      .execute();
  }

  async ofSizes(tenantId: string, sizes: number[]): Promise<Map<number, CosignatureRow[]>> {
    const out = new Map<number, CosignatureRow[]>();
    if (!sizes.length) return out;
    const rows = await this.db.selectFrom('checkpoint_cosignatures').select(['tree_size', 'witness', 'line', 'cosigned_at']).where('tenant_id', '=', tenantId).where('tree_size', 'in', sizes).orderBy('witness').execute();
    for (const r of rows) {
      const row = { tree_size: Number(r.tree_size), witness: r.witness, line: r.line, cosigned_at: new Date(r.cosigned_at).toISOString() };
      out.set(row.tree_size, [...(out.get(row.tree_size) ?? []), row]);
    }
    return out;
  }
}

/** The checkpoint's note followed by its witnesses' cosignature lines (C2SP: the cosigned checkpoint). */
export const cosignedNote = (note: string, lines: CosignatureRow[]) => note + lines.map((l) => l.line).join('');

export interface WitnessingDeps {
  witnesses: WitnessEndpoint[];
  repo: CosignatureRepository;
  /** RFC 9162 consistency proof between two sizes of the tenant's tree, from stored nodes */
  consistencyProof(tenantId: string, size1: number, size2: number): Promise<Buffer[]>;
  /** the tenant's log verifier key (presented to witnesses that pin logs) */
  logVkey(tenantId: string): Promise<string>;
  /** appends the refusal to the tenant's chain with the decision event `witness_refused` */
  recordRefusal(tenantId: string, record: ReturnType<typeof witnessRefusalRecord>, appendKey: string): Promise<void>;
  refusals: Counter<'witness' | 'status'>;
  cosignatures: Counter<'witness'>;
  logger: Logger;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export function witnessRefusalRecord(witness: string, checkpoint: StoredCheckpoint, status: number, reason: string) {
  return controlPlaneRecord(
    { action_id: randomUUID(), agent_id: 'audit-witnessing', agent_type: 'control_plane', agent_version: '1.0.0', tool: 'witness', method: witness, session_id: null },
    {
      params: {},
      decision: 'witness_refused',
      violations: [status === 422 ? 'checkpoint_inconsistent_for_witness' : 'checkpoint_signature_refused_by_witness'],
      severity: 'critical',
      alert_tier: 'P1',
      bundle_revision: 'evidence',
      details: { event: 'evidence.witness_refused', witness, status, reason: reason.slice(0, 500), tree_size: checkpoint.tree_size, checkpoint_sha256: checkpoint.checkpoint_sha256 },
    },
  );
}

export class Witnessing {
  constructor(private readonly d: WitnessingDeps) {}

  get configured(): boolean {
    return this.d.witnesses.length > 0;
  }

  /** Send the checkpoint to every witness that has not cosigned it; resolves when each has answered or failed. */
  async cosign(tenantId: string, checkpoint: StoredCheckpoint): Promise<void> {
    await Promise.all(this.d.witnesses.map((w) => this.submit(tenantId, w, checkpoint).catch((e: unknown) => this.d.logger.warn({ err: e, tenantId, witness: w.key.name }, 'witness not reached; the next checkpoint tries again'))));
  }

  private async submit(tenantId: string, w: WitnessEndpoint, cp: StoredCheckpoint): Promise<void> {
    let old = await this.d.repo.lastSize(tenantId, w.key.name);
    if (old >= cp.tree_size) return; // cosigned already (or a later one)
    // (a witness whose own state differs answers 409 with its size: retried once from there)
    const vkey = await this.d.logVkey(tenantId);
    for (let attempt = 0; attempt < 2; attempt++) {
      const proof = old > 0 && old < cp.tree_size ? await this.d.consistencyProof(tenantId, old, cp.tree_size) : [];
      const body = `old ${old}\n${proof.map((p) => `${p.toString('base64')}\n`).join('')}\n${cp.note}`;
      const res = await (this.d.fetch ?? fetch)(`${w.url.replace(/\/$/, '')}/add-checkpoint`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8', 'x-log-verifier-key': vkey },
        body,
        signal: AbortSignal.timeout(this.d.timeoutMs ?? 10_000),
      });
      const text = await res.text();
      if (res.status === 200) {
        const line = text.split('\n').find((l) => l.startsWith(`\u2014 ${w.key.name} `));
        const time = line ? safeTime(`${cp.note}${line}\n`, w.key) : null;
        if (!line || time === null) {
          this.d.logger.warn({ tenantId, witness: w.key.name, tree_size: cp.tree_size }, 'witness answered without a cosignature that verifies with its configured key; not kept');
          this.d.refusals.inc({ witness: w.key.name, status: 'bad_cosignature' });
          return;
        }
        await this.d.repo.insert(tenantId, { tree_size: cp.tree_size, witness: w.key.name, line: `${line}\n`, cosigned_at: new Date(Number(time) * 1000).toISOString() });
        this.d.cosignatures.inc({ witness: w.key.name });
        return;
      }
      if (res.status === 409 && attempt === 0 && /^\d+\n?$/.test(text)) {
        old = Number(text.trim());
        // the witness has a later size (another replica sent it): nothing to do; the same size: sent again
        // without a proof, so the witness compares the roots (the same: cosigned; another: a fork, 422)
        if (old > cp.tree_size) return;
        continue;
      }
      this.d.refusals.inc({ witness: w.key.name, status: String(res.status) });
      if (res.status === 422 || res.status === 403) {
        this.d.logger.error({ tenantId, witness: w.key.name, status: res.status, reason: text.slice(0, 300), tree_size: cp.tree_size }, 'ALERT: a witness refused the checkpoint: it has seen another view of this log');
        await this.d.recordRefusal(tenantId, witnessRefusalRecord(w.key.name, cp, res.status, text.trim()), `witness:${w.key.name.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 60)}:${cp.tree_size}:${res.status}`);
      } else this.d.logger.warn({ tenantId, witness: w.key.name, status: res.status, reason: text.slice(0, 300) }, 'witness did not cosign the checkpoint');
      return;
    }
  }
}

function safeTime(note: string, key: CosignerKey): bigint | null {
  try {
    return cosignatureTime(note, key);
  } catch {
    return null;
  }
}
