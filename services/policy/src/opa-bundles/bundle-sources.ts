/**
 * A tenant's OPA bundle source (docs/policy.md, "OPA bundles"): an HTTPS URL serving a signed bundle and the
 * public key its `.signatures.json` must verify with. The policy service polls it as OPA's bundle plugin
 * does (`If-None-Match` with the last ETag; 304: nothing to do), through the egress rules (@agw/egress: public
 * addresses only unless the operator allowed a range, the name resolved once and the connection pinned). A
 * new bundle is read, verified and tested (opa-bundle.ts), then activated directly or put in shadow, as the
 * tenant chose; its `.manifest` revision and digest name the policy's bundle revision, and so every audit
 * record decided under it. A refused bundle (unsigned, wrongly signed, failing tests, malformed) leaves the
 * live policy as it is. Every activation, shadow start and refusal is a control_plane record with a
 * `policy.changed` event. One replica polls a source at a time (the poll is claimed in Postgres).
 */
import { createPublicKey } from 'node:crypto';
import type { PinnedFetch } from '@agw/egress';
import { AppError, ConflictError, InputError, type Logger, NotFoundError } from '@agw/shared';
import { sourceRevision, type TenantPolicies } from '../bundles/tenant-policies';
import type { PolicyChangeRecorder } from '../changes/policy-change-recorder';
import type { PolicyShadows } from '../shadow/policy-shadows';
import { postgres } from '../stores/store-errors';
import { BundleRefusedError, openOpaBundle } from './opa-bundle';
import type { BundleSourceRepository, StoredBundleSource } from './bundle-source.repository';

export interface BundleSourceInput {
  url: string;
  publicKeyPem: string;
  scope?: string;
  activation: 'direct' | 'shadow';
  shadowMaxCalls?: number;
  shadowSeconds?: number;
}

export type PollOutcome = 'activated' | 'shadowed' | 'unchanged' | 'refused' | 'waiting' | 'error';

export interface BundleSourcesOptions {
  /** the largest bundle accepted (compressed and uncompressed), bytes */
  maxBytes: number;
  /** how often a source is polled */
  pollMs: number;
}

export class BundleSources {
  constructor(
    private readonly repo: BundleSourceRepository,
    private readonly policies: TenantPolicies,
    private readonly shadows: PolicyShadows,
    private readonly recorder: PolicyChangeRecorder,
    private readonly fetch: PinnedFetch,
    private readonly logger: Logger,
    private readonly o: BundleSourcesOptions,
  ) {}

  /** Registers the tenant's source (replacing one it had) and polls it at once. */
  async register(tenantId: string, s: BundleSourceInput, actor: string): Promise<{ source: StoredBundleSource; outcome: PollOutcome }> {
    let url: URL;
    try {
      url = new URL(s.url);
    } catch {
      throw InputError.at(['url'], 'url must be an absolute HTTPS URL', 'url');
    }
    if (url.protocol !== 'https:') throw InputError.at(['url'], 'url must be an HTTPS URL (http:// is refused)', 'url');
    try {
      const k = createPublicKey(s.publicKeyPem);
      if (k.type !== 'public') throw new Error('not a public key');
    } catch {
      throw InputError.at(['public_key'], 'public_key must be a PEM public key (-----BEGIN PUBLIC KEY-----, RSA, EC or Ed25519)', 'pem');
    }
    await postgres(() =>
      this.repo.put(tenantId, {
        url: url.toString(),
        public_key: s.publicKeyPem,
        scope: s.scope || null,
        activation: s.activation,
        shadow_max_calls: s.shadowMaxCalls ?? null,
        shadow_seconds: s.shadowSeconds ?? null,
        created_by: actor,
      }),
    );
    const outcome = await this.poll(tenantId, 0);
    return { source: (await this.get(tenantId))!, outcome: outcome ?? 'unchanged' };
  }

  get(tenantId: string): Promise<StoredBundleSource | undefined> {
    return postgres(() => this.repo.get(tenantId));
  }

  async remove(tenantId: string): Promise<void> {
    if (!(await postgres(() => this.repo.delete(tenantId)))) throw new NotFoundError('No bundle source is registered (PUT /api/policy/bundle-source)');
  }

  /** Polls now (whatever the last poll); 404 without a source. */
  async pollNow(tenantId: string): Promise<PollOutcome> {
    if (!(await this.get(tenantId))) throw new NotFoundError('No bundle source is registered (PUT /api/policy/bundle-source)');
    return (await this.poll(tenantId, 0)) ?? 'unchanged';
  }

  /** Polls every source due (the periodic sweep); failures are kept in the source's last outcome. */
  async pollDue(): Promise<void> {
    for (const tenantId of await this.repo.due(this.o.pollMs)) {
      await this.poll(tenantId, this.o.pollMs).catch((e: unknown) => this.logger.warn({ tenantId, reason: (e as Error).message }, 'bundle poll failed'));
    }
  }

  /** One poll of the tenant's source if this replica claims it; undefined when another replica has it. */
  private async poll(tenantId: string, intervalMs: number): Promise<PollOutcome | undefined> {
    const src = await postgres(() => this.repo.claim(tenantId, intervalMs));
    if (!src) return undefined;
    let body: Buffer;
    let etag: string | null;
    try {
      const res = await this.fetch(src.url, { headers: { accept: 'application/gzip, application/octet-stream', ...(src.etag ? { 'if-none-match': src.etag } : {}) } });
      if (res.status === 304) {
        await this.repo.outcome(tenantId, { outcome: 'unchanged', detail: 'not modified (ETag)' });
        return 'unchanged';
      }
      if (res.status !== 200) throw new Error(`the bundle server answered ${res.status}`);
      body = Buffer.from(await res.arrayBuffer());
      etag = res.headers.get('etag');
    } catch (e) {
      // unreachable, refused by the egress rules, too large: the live policy stays; tried again at the next poll
      await this.repo.outcome(tenantId, { outcome: 'error', detail: (e as Error).message });
      return 'error';
    }
    try {
      const b = await openOpaBundle(body, { publicKeyPem: src.public_key, scope: src.scope ?? undefined, maxBytes: this.o.maxBytes });
      const source = { revision: b.revision, digest: b.digest };
      const change = { template: 'custom', customPolicy: b.policy.source, overrides: b.config, source };
      const details = { url: src.url, manifest_revision: b.revision, digest: b.digest, key_id: b.keyId, tests: b.tests.length };
      const actor = `bundle:${src.url}`;
      let outcome: PollOutcome;
      if (src.activation === 'shadow') {
        const r = await this.shadows.start(tenantId, change, { maxCalls: src.shadow_max_calls ?? undefined, durationSeconds: src.shadow_seconds ?? undefined }, actor);
        await this.recorder.record(tenantId, { decision: 'bundle_shadowed', actor, method: 'bundle.poll', violations: [], severity: 'none', revision: sourceRevision(source), details: { ...details, shadow_id: r.shadow?.shadow_id } });
        outcome = 'shadowed';
      } else {
        const active = await this.policies.set(tenantId, change, { actor, method: 'bundle.poll' });
        await this.recorder.record(tenantId, { decision: 'bundle_activated', actor, method: 'bundle.poll', violations: [], severity: 'none', revision: active.revision, details });
        outcome = 'activated';
      }
      await this.repo.outcome(tenantId, { outcome, detail: `revision ${b.revision || '(none)'}, ${b.tests.length} tests passed`, etag, revision: b.revision, digest: b.digest });
      this.logger.info({ tenantId, url: src.url, revision: b.revision, outcome }, 'OPA bundle taken');
      return outcome;
    } catch (e) {
      const refused = e instanceof BundleRefusedError;
      // a shadow running already, a candidate the policy checks refuse: refused as well, the live policy stays
      if (!refused && !(e instanceof AppError)) {
        await this.repo.outcome(tenantId, { outcome: 'error', detail: (e as Error).message });
        throw e;
      }
      if (e instanceof ConflictError) {
        // activation into shadow while a shadow runs: not a refusal of the bundle; the ETag is not kept, so it
        // is taken at the first poll after the running shadow is promoted or discarded
        await this.repo.outcome(tenantId, { outcome: 'waiting', detail: `a shadow runs: promote or discard it and the bundle is taken at the next poll (${(e as Error).message})` });
        return 'waiting';
      }
      const reason = refused ? e.reason : (e as AppError).code;
      await this.recorder.record(tenantId, {
        decision: 'bundle_refused',
        actor: `bundle:${src.url}`,
        method: 'bundle.poll',
        violations: refused ? [`bundle_${e.reason}`, ...e.failingTests] : [`bundle_${reason}`],
        severity: 'high',
        revision: '',
        details: { url: src.url, reason, message: (e as Error).message, etag },
      });
      // the refused bundle's ETag is kept: the same bundle is not fetched and refused again at every poll
      await this.repo.outcome(tenantId, { outcome: 'refused', detail: `${reason}: ${(e as Error).message}`, etag });
      this.logger.warn({ tenantId, url: src.url, reason }, 'OPA bundle refused; the live policy stays');
      return 'refused';
    }
  }
}
