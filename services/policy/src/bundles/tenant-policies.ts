/**
 * Each tenant's effective policy: which template (or custom Rego), its overrides, and the compiled
 * bundle. A tenant without a stored policy has the `general` template with its defaults. Changing the
 * template, the overrides or the custom source makes a new bundle revision (content hash); a custom
 * policy that does not compile is refused (422 with file:line:col) and the old policy stays in force.
 */
import { type PreparedPolicy, runTests } from '@agw/rego';
import { InputError, type Logger, TenantCache, canonicalJson, sha256Hex } from '@agw/shared';
import { postgres } from '../stores/store-errors';
import type { PolicyChangeRecorder } from '../changes/policy-change-recorder';
import type { TemplateCatalog } from '../templates/template-catalog';
import { CUSTOM_FILE, type PolicyBundle, compileCustom, customBundle, templateBundle } from './policy-bundle';
import { applyConfigPatch, effectiveConfig, parseConfigPatch } from './policy-config';
import type { StoredTenantPolicy, TenantPolicyRepository } from './tenant-policy.repository';

export const DEFAULT_TEMPLATE = 'general';

export interface ActiveBundle extends PolicyBundle {
  tenantId: string;
  /** ISO time the tenant activated it; "" for the built-in default */
  activatedAt: string;
}

export interface PolicyChange {
  template?: string;
  /** JSON object of overrides to merge (null values reset a key) */
  configJson?: string;
  customPolicy?: string;
  /** the whole overrides object, replacing the current one (a shadow's promotion); wins over configJson */
  overrides?: Record<string, unknown>;
  /** the change comes from an OPA bundle: its `.manifest` revision and digest name the bundle revision */
  source?: { revision: string; digest: string };
}

/**
 * The bundle revision of a policy activated from an OPA bundle: the `.manifest` revision and the first 16
 * hex digits of the bundle's SHA-256, so every audit record (bundle_revision) names both.
 */
export function sourceRevision(s: { revision: string; digest: string }): string {
  return `${s.revision || 'unrevised'}@sha256:${s.digest.slice(0, 16)}`;
}

/** Who activates a policy and, for a candidate whose tests fail, the human's explicit override. */
export interface PolicyActivation {
  /** member e-mail, or api_key:<tenant> (recorded) */
  actor: string;
  overrideFailingTests?: { note: string };
  /** what the control_plane record names as the operation (e.g. shadow.promote); `activate` when left out */
  method?: string;
}

/** A candidate policy as stored (a shadow): what `set` would store, validated and compiled. */
export interface PreparedCandidate {
  template: string;
  overrides: Record<string, unknown>;
  customPolicy: string | null;
  bundle: PolicyBundle;
  source?: { revision: string; digest: string };
}

export class TenantPolicies {
  private readonly cache: TenantCache<ActiveBundle>;
  private readonly compiled = new Map<string, PreparedPolicy>();
  private readonly onActivated: (tenantId: string) => void;
  private readonly recorder: PolicyChangeRecorder | undefined;

  /**
   * `onActivated` tells the other replicas (the policy service publishes a `policy` tenant change on NATS,
   * and drops a tenant's entry when one arrives: `invalidate`); `cacheMs` bounds a lost message.
   */
  constructor(
    private readonly repo: TenantPolicyRepository,
    private readonly catalog: TemplateCatalog,
    private readonly logger: Logger,
    opts: { cacheMs: number; onActivated?: (tenantId: string) => void; recorder?: PolicyChangeRecorder },
  ) {
    this.cache = new TenantCache<ActiveBundle>(opts.cacheMs);
    this.onActivated = opts.onActivated ?? (() => undefined);
    this.recorder = opts.recorder;
  }

  /** The bundle in force for the tenant (cached; a change on this replica is seen at once, on others when told). */
  active(tenantId: string): Promise<ActiveBundle> {
    return this.cache.get(tenantId, '', () => postgres(() => this.repo.get(tenantId)).then((row) => this.build(tenantId, row)));
  }

  /** Drop a tenant's cached bundle (activated on another replica), or every tenant's (undefined). */
  invalidate(tenantId: string | undefined): void {
    this.cache.invalidate(tenantId);
  }

  /**
   * The bundle `change` would make, validated and compiled as `set` does (422 for an unknown template, bad
   * overrides or Rego that does not compile), without activating it: replay under a policy before saving it.
   */
  async candidate(tenantId: string, change: PolicyChange): Promise<ActiveBundle> {
    const { bundle } = await this.prepare(tenantId, change);
    return { ...bundle, tenantId, activatedAt: '' };
  }

  /** The candidate `change` makes, as a shadow stores it (same checks as `set`, nothing activated). */
  async prepared(tenantId: string, change: PolicyChange): Promise<PreparedCandidate> {
    const { template, overrides, customPolicy, bundle } = await this.prepare(tenantId, change);
    return { template, overrides, customPolicy, bundle, ...(change.source ? { source: change.source } : {}) };
  }

  /**
   * Activates `change`. A custom policy whose test_* rules fail is refused (422 per failing test) unless
   * `by.overrideFailingTests` carries a human's note: then the override (note, failing tests, who, the
   * revision) is recorded as a control_plane record with a `policy.changed` event first, and the policy
   * is activated (a record that cannot be written refuses the activation).
   */
  async set(tenantId: string, change: PolicyChange, by?: PolicyActivation): Promise<ActiveBundle> {
    const { current, template, overrides, customPolicy, bundle: candidate } = await this.prepare(tenantId, change);
    if (by?.overrideFailingTests && !by.overrideFailingTests.note.trim()) {
      throw InputError.at(['override_failing_tests', 'note'], 'an override of failing tests needs a note saying why (it is recorded)', 'missing');
    }
    const failing = change.customPolicy ? failingTests(change.customPolicy) : [];
    if (failing.length) {
      if (!by?.overrideFailingTests) throw refusal(failing);
      if (!this.recorder) throw new Error('no policy change recorder: an override cannot be recorded');
      await this.recorder.record(tenantId, {
        decision: 'activated_over_failing_tests',
        actor: by.actor,
        method: by.method ?? 'activate',
        violations: failing.map((r) => r.name),
        severity: 'high',
        revision: candidate.revision,
        details: {
          note: by.overrideFailingTests.note,
          failing_tests: failing.map((r) => ({ name: r.name, file: r.file, row: r.row, outcome: r.outcome, ...(r.error ? { error: r.error } : {}) })),
          previous_revision: current?.revision ?? null,
          revision: candidate.revision,
          policy_template: template,
        },
      });
    }
    const unchanged =
      current && current.revision === candidate.revision && current.bundle_hash === candidate.hash && current.policy_template === template && (current.custom_policy ?? null) === customPolicy && sameJson(current.policy_overrides, overrides);
    if (unchanged) return this.build(tenantId, current);
    const row = await postgres(() => this.repo.activate(tenantId, { template, overrides, config: candidate.config, customPolicy, revision: candidate.revision, hash: candidate.hash, source: change.source }));
    this.cache.invalidate(tenantId);
    this.onActivated(tenantId);
    this.logger.info({ tenantId, template, revision: candidate.revision }, 'tenant policy activated');
    return this.build(tenantId, row);
  }

  private async prepare(tenantId: string, change: PolicyChange) {
    const current = await postgres(() => this.repo.get(tenantId));
    const curTemplate = current?.policy_template ?? DEFAULT_TEMPLATE;
    const template = change.template || curTemplate;
    const tpl = this.catalog.get(template);
    if (!tpl && template !== 'custom') {
      throw InputError.field('policy_template', `unknown template (known: ${this.catalog.list().map((t) => t.name).join(', ')}, custom)`, 'enum');
    }
    const customPolicy = change.customPolicy !== undefined ? change.customPolicy || null : (current?.custom_policy ?? null);
    if (change.customPolicy) this.compileCached(change.customPolicy); // 422 when it does not compile, whatever the template
    if (template === 'custom' && !customPolicy) throw InputError.field('custom_policy', 'custom_policy (Rego source) is required with policy_template custom', 'missing');
    // overrides belong to a template: switching templates starts from its defaults
    const baseOverrides = template === curTemplate ? (current?.policy_overrides ?? {}) : {};
    const overrides = change.overrides ? applyConfigPatch(tpl, {}, change.overrides) : change.configJson !== undefined ? applyConfigPatch(tpl, baseOverrides, parseConfigPatch(change.configJson)) : baseOverrides;
    let bundle = this.bundleFor(tenantId, { policy_template: template, policy_overrides: overrides, custom_policy: customPolicy });
    if (change.source) bundle = { ...bundle, revision: sourceRevision(change.source) };
    return { current, template, overrides, customPolicy, bundle };
  }

  private build(tenantId: string, row: StoredTenantPolicy | undefined): ActiveBundle {
    const bundle = this.bundleFor(tenantId, row ?? { policy_template: DEFAULT_TEMPLATE, policy_overrides: {}, custom_policy: null });
    // a policy from an OPA bundle keeps the revision that names the bundle (manifest revision and digest)
    const revision = row?.source_digest ? sourceRevision({ revision: row.source_revision ?? '', digest: row.source_digest }) : bundle.revision;
    return { ...bundle, revision, tenantId, activatedAt: row ? row.activated_at.toISOString() : '' };
  }

  private bundleFor(tenantId: string, row: StoredPolicyContent): PolicyBundle {
    const onError = (e: unknown) => this.logger.warn({ tenantId, err: e }, 'policy evaluation failed; denying (policy_evaluation_error)');
    return bundleOf(this.catalog, (s) => this.compileCached(s), row, onError);
  }

  private compileCached(source: string): PreparedPolicy {
    const key = sha256Hex(source);
    let p = this.compiled.get(key);
    if (!p) {
      p = compileCustom(source);
      if (this.compiled.size > 500) this.compiled.delete(this.compiled.keys().next().value as string);
      this.compiled.set(key, p);
    }
    return p;
  }
}

/** What a stored policy (or a shadow's candidate) is made of. */
export type StoredPolicyContent = Pick<StoredTenantPolicy, 'policy_template' | 'policy_overrides' | 'custom_policy'>;

/** The bundle of a stored policy (the live one, or a shadow's candidate in the shadow worker). */
export function bundleOf(catalog: TemplateCatalog, compile: (source: string) => PreparedPolicy, row: StoredPolicyContent, onError: (e: unknown) => void): PolicyBundle {
  if (row.policy_template === 'custom') {
    const source = row.custom_policy ?? '';
    return customBundle(compile(source), source, row.policy_overrides ?? {}, onError);
  }
  const tpl = catalog.get(row.policy_template) ?? catalog.get(DEFAULT_TEMPLATE)!;
  const overrides = row.policy_overrides ?? {};
  return templateBundle(tpl, overrides, effectiveConfig(tpl.defaults, overrides), row.custom_policy, onError);
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? {}) === canonicalJson(b ?? {});
}

/**
 * The activation gate of policy tests: a custom policy whose `test_*` rules do not all pass (as `opa test`
 * runs them, @agw/rego runTests) is refused with a 422 naming every failing or erroring test. The policy
 * compiled already (prepare), so a compile error cannot occur here.
 */
export function refuseFailingTests(source: string): void {
  const bad = failingTests(source);
  if (bad.length) throw refusal(bad);
}

/** The test_* rules of a custom policy that fail or error (as `opa test` runs them). */
export function failingTests(source: string) {
  return runTests([{ name: CUSTOM_FILE, source }]).results.filter((r) => r.outcome !== 'pass');
}

function refusal(bad: ReturnType<typeof failingTests>): InputError {
  return new InputError(
    bad.map((r) => ({
      loc: ['custom_policy'],
      msg: `${r.file}:${r.row}: ${r.name}: ${r.outcome.toUpperCase()}${r.error ? ` (${r.error})` : ''}: a custom policy whose tests fail cannot be activated`,
      type: r.outcome === 'fail' ? 'policy_test_failed' : 'policy_test_error',
    })),
  );
}
