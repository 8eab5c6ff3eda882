/**
 * A C2SP tlog-witness (https://c2sp.org/tlog-witness), the `add-checkpoint` call and the monitoring
 * `GET <origin hash>/checkpoint`, byte for byte as the spec words them:
 * - the body: `old <size>`, up to 63 base64 consistency proof lines, an empty line, then a signed checkpoint;
 * - an unknown origin is 404; no valid signature by a trusted key of the origin, or a trusted key's
 *   signature that fails, is 403; an old size above the checkpoint's is 400; an old size other than the size
 *   of the latest checkpoint this witness cosigned for the origin is 409 with that size (`text/x.tlog.size`);
 *   a size-0 checkpoint without the empty tree's root, a proof with old size 0, a consistency proof that does
 *   not verify, or the same size with another root is 422 (and kept as evidence of a fork: `refusals`);
 * - otherwise the new state is persisted, then the answer is the witness's cosignature line (Ed25519
 *   cosignature/v1, the time of signing).
 * The check of the old size and the update are one step per origin (the spec's race).
 *
 * Which logs it trusts: the `logs` given (origin → verifier keys), and, for origins under `pinPrefix`, a log
 * the witness has not seen yet is pinned on first contact to the key the log presents in the
 * `X-Log-Verifier-Key` header, when that key's name is the origin (the gateway's logs are one per tenant
 * and appear when tenants do; docs/evidence.md, "Witnesses"). A pinned key never changes.
 */
import { createHash } from 'node:crypto';
import { type VerifierKey, openNote, parseCheckpoint, parseVerifierKey, verifyConsistency } from '@agw/verifier';
import type { WitnessKey } from './witness-key';
import type { WitnessState, WitnessStore } from './witness-store';

export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface WitnessOptions {
  key: WitnessKey;
  store: WitnessStore;
  /** statically trusted logs: origin → verifier keys (type 0x01 Ed25519) */
  logs?: Map<string, VerifierKey[]>;
  /** origins under this prefix are pinned on first contact (X-Log-Verifier-Key); unset: none */
  pinPrefix?: string;
  now?: () => number;
}

const EMPTY_ROOT = createHash('sha256').update(Buffer.alloc(0)).digest('base64');
const text = (status: number, body: string, contentType = 'text/plain; charset=utf-8'): WitnessAnswer => ({ status, contentType, body });
export const originHash = (origin: string) => createHash('sha256').update(origin, 'utf8').digest('hex');

export class Witness {
  /** each origin's requests, one after the other (check of the old size and update in one step) */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** checkpoints refused as inconsistent (proof of a fork), newest last */
  readonly refusals: Array<{ origin: string; reason: string; at: number; request: string }> = [];

  constructor(private readonly o: WitnessOptions) {}

  get vkey(): string {
    return this.o.key.vkey;
  }

  async addCheckpoint(body: string, presentedVkey?: string): Promise<WitnessAnswer> {
    const parsed = parseRequest(body);
    if ('error' in parsed) return text(400, `${parsed.error}\n`);
    const { oldSize, proof, note } = parsed;
    let cp;
    try {
      cp = parseCheckpoint(note.slice(0, note.lastIndexOf('\n\n') + 1));
    } catch (e) {
      return text(400, `${(e as Error).message}\n`);
    }
    const run = () => this.add(cp.origin, cp.treeSize, cp.rootHex, oldSize, proof, note, body, presentedVkey);
    const prev = this.queues.get(cp.origin) ?? Promise.resolve();
    const next = prev.then(run, run);
    this.queues.set(cp.origin, next);
    try {
      return await next;
    } finally {
      if (this.queues.get(cp.origin) === next) this.queues.delete(cp.origin);
    }
  }

  private async add(origin: string, size: number, rootHex: string, oldSize: number, proof: Buffer[], note: string, request: string, presentedVkey?: string): Promise<WitnessAnswer> {
    const state = await this.o.store.get(origin);
    const keys = this.trustedKeys(origin, state, presentedVkey);
    if (!keys) return text(404, `unknown log origin ${origin}\n`);
    let noteText: string | undefined;
    let why = `no signature by a key this witness trusts for ${origin}`;
    for (const k of keys) {
      try {
        noteText = openNote(note, k);
        break;
      } catch (e) {
        // a trusted key's signature that fails makes the note malformed: refused whatever the other keys say
        if (/does not verify|malformed/.test((e as Error).message)) return text(403, `${(e as Error).message}\n`);
        why = (e as Error).message;
      }
    }
    if (!noteText) return text(403, `${why}\n`);
    if (oldSize > size) return text(400, `old size ${oldSize} is above the checkpoint size ${size}\n`);
    const latest = state?.size ?? 0;
    if (oldSize !== latest) return text(409, `${latest}\n`, 'text/x.tlog.size');
    const root = Buffer.from(rootHex, 'hex');
    const refuse = (reason: string) => {
      this.refusals.push({ origin, reason, at: this.now(), request });
      if (this.refusals.length > 1000) this.refusals.shift();
      return text(422, `${reason}\n`);
    };
    if (size === 0 && root.toString('base64') !== EMPTY_ROOT) return refuse('a checkpoint of size 0 must have the root of the empty tree');
    if (oldSize === 0) {
      if (proof.length) return refuse('the consistency proof from size 0 must be empty');
    } else if (oldSize === size) {
      if (!state || Buffer.from(state.root, 'base64').toString('hex') !== rootHex) return refuse(`size ${size} again with another root hash: the log forked`);
      if (proof.length) return refuse('the consistency proof between equal sizes must be empty');
    } else if (!state || !verifyConsistency(oldSize, size, Buffer.from(state.root, 'base64'), root, proof)) {
      return refuse(`the consistency proof from size ${oldSize} to ${size} does not verify: the log forked or rewrote its past`);
    }
    const timestamp = BigInt(Math.floor(this.now() / 1000));
    const line = this.o.key.cosign(noteText, timestamp);
    const next: WitnessState = { size, root: root.toString('base64'), vkey: state?.vkey ?? presentedVkey ?? null, checkpoint: `${note}${line}` };
    await this.o.store.put(origin, next);
    return text(200, line);
  }

  /** The latest checkpoint cosigned for a log, by the lowercase hex SHA-256 of its origin (404: never cosigned). */
  async latest(hashHex: string): Promise<WitnessAnswer> {
    const origin = (await this.o.store.origins()).find((o) => originHash(o) === hashHex);
    const state = origin ? await this.o.store.get(origin) : undefined;
    return state ? text(200, state.checkpoint) : text(404, 'no checkpoint cosigned for that log\n');
  }

  private trustedKeys(origin: string, state: WitnessState | undefined, presented?: string): VerifierKey[] | undefined {
    const configured = this.o.logs?.get(origin);
    if (configured) return configured;
    if (!this.o.pinPrefix || !origin.startsWith(this.o.pinPrefix)) return undefined;
    const vkey = state?.vkey ?? presented;
    if (!vkey) return undefined;
    try {
      const k = parseVerifierKey(vkey);
      return k.name === origin ? [k] : undefined;
    } catch {
      return undefined;
    }
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }
}

/** `old <n>\n`, 0-63 base64 proof lines, an empty line, the checkpoint; every line newline-terminated. */
function parseRequest(body: string): { oldSize: number; proof: Buffer[]; note: string } | { error: string } {
  const blank = body.indexOf('\n\n');
  if (blank < 0) return { error: 'no empty line before the checkpoint' };
  const head = body.slice(0, blank).split('\n');
  const m = /^old (0|[1-9][0-9]*)$/.exec(head[0] ?? '');
  if (!m) return { error: 'the first line is "old <size>" (decimal, no leading zeroes)' };
  const proofLines = head.slice(1);
  if (proofLines.length > 63) return { error: 'more than 63 consistency proof lines' };
  const proof: Buffer[] = [];
  for (const l of proofLines) {
    const h = Buffer.from(l, 'base64');
    if (h.length !== 32 || h.toString('base64') !== l) return { error: 'a consistency proof line is the base64 of 32 bytes' };
    proof.push(h);
  }
  const note = body.slice(blank + 2);
  if (!note.endsWith('\n')) return { error: 'the checkpoint ends with a newline' };
  return { oldSize: Number(m[1]), proof, note };
}
