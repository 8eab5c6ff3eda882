/**
 * A tenant's effective policy, compiled and ready: a template (or the tenant's custom Rego), its
 * effective config, and a content hash that names the bundle revision. `evaluate` runs the policy and
 * applies the fixed decision semantics (engine/decision.ts).
 */
import { type PreparedPolicy, RegoCompileError, compile } from '@agw/rego';
import { InputError, canonicalJson, sha256Hex } from '@agw/shared';
import { EVALUATION_ERROR, type Finding, type PolicyOutcome, type Severity, decide, toApprovers, toSeverity } from '../engine/decision';
import type { LoadedTemplate, RuleInfo } from '../templates/template-catalog';

export const CUSTOM_PACKAGE = 'agw.custom';
export const CUSTOM_FILE = 'policy.rego';

export interface BundleDescription {
  template: string;
  overrides: Record<string, unknown>;
  config: Record<string, unknown>;
  customPolicy: string | null;
}

export interface PolicyBundle extends BundleDescription {
  revision: string;
  hash: string;
  readsBehavioral: boolean;
  evaluate(input: Record<string, unknown>, nowNs: bigint): PolicyOutcome;
  rules(): RuleInfo[];
}

/** sha256 over the policy source and effective config; the revision is its first 12 hex digits. */
export function bundleHash(template: string, sourceHash: string, config: Record<string, unknown>): { hash: string; revision: string } {
  const hash = sha256Hex(canonicalJson({ format: 'agw-bundle/1', template, source_sha256: sourceHash, config }));
  return { hash, revision: hash.slice(0, 12) };
}

/** Compile a tenant's custom Rego, or throw a 422 naming file, line and column of each error. */
export function compileCustom(source: string): PreparedPolicy {
  let policy: PreparedPolicy;
  try {
    policy = compile([{ name: CUSTOM_FILE, source }]);
  } catch (e) {
    if (e instanceof RegoCompileError) {
      throw new InputError(
        e.errors.map((x) => ({
          loc: ['custom_policy'],
          msg: `${x.location?.file ?? CUSTOM_FILE}:${x.location?.row ?? 1}:${x.location?.col ?? 1}: ${x.code}: ${x.message}`,
          type: x.code,
        })),
      );
    }
    throw e;
  }
  if (!policy.packages.includes(CUSTOM_PACKAGE)) {
    throw InputError.field('custom_policy', `${CUSTOM_FILE}:1:1: rego_compile_error: a custom policy must declare package ${CUSTOM_PACKAGE}`, 'rego_compile_error');
  }
  return policy;
}

export function templateBundle(t: LoadedTemplate, overrides: Record<string, unknown>, config: Record<string, unknown>, customPolicy: string | null, onError: (e: unknown) => void): PolicyBundle {
  const { hash, revision } = bundleHash(t.name, t.sourceHash, config);
  const data = { config };
  return {
    template: t.name,
    overrides,
    config,
    customPolicy,
    hash,
    revision,
    readsBehavioral: t.policy.readsInput('behavioral'),
    evaluate(input, nowNs) {
      try {
        const out = t.policy.evaluate(`${t.packagePath}.decision`, { input, data, nowNs }) as { findings?: Array<{ id: string; kind: string; severity: string; required_approvers?: unknown }> } | undefined;
        return decide(
          (out?.findings ?? []).map((f) => {
            const approvers = f.kind === 'approval' ? toApprovers(f.required_approvers) : undefined;
            return { id: f.id, kind: f.kind === 'approval' ? 'approval' : 'violation', severity: toSeverity(f.severity, 'high'), ...(approvers ? { requiredApprovers: approvers } : {}) };
          }),
        );
      } catch (e) {
        onError(e);
        return decide([{ id: EVALUATION_ERROR, kind: 'violation', severity: 'high' }]);
      }
    },
    rules: () => ((t.policy.evaluate(`${t.packagePath}.rules`, { data }) ?? []) as RuleInfo[]),
  };
}

/**
 * Custom policy contract (docs/policy.md), package agw.custom:
 *  - `deny` / `violations`: set of messages (or {id|msg, severity}) -> violations, severity high by default;
 *  - `warn`: set of messages -> medium violations (allowed, kept on the record);
 *  - `approval`: set of reasons -> requires_human; `requires_human := true` does the same; a reason
 *    object {id, required_approvers} asks for that many distinct human approvers (four eyes), and so does
 *    a top-level `required_approvers := n` for every approval of the call;
 *  - or one `decision` object {violations, severity, requires_human, required_approvers} (severity applies to plain strings);
 *  - boolean forms (`deny if ...`) give custom_policy_denied / custom_policy_warning;
 *  - a module that defines `allow` denies (custom_policy_not_allowed) whenever allow is not true.
 */
export function customBundle(policy: PreparedPolicy, source: string, overrides: Record<string, unknown>, onError: (e: unknown) => void): PolicyBundle {
  const config = overrides;
  const { hash, revision } = bundleHash('custom', sha256Hex(source), config);
  const data = { config };
  const base = `data.${CUSTOM_PACKAGE}`;
  // OPA-style `allow` policies: when the module defines allow, anything but allow == true denies
  const definesAllow = /^\s*(default\s+)?allow\b/m.test(source);
  const collect = (value: unknown, kind: Finding['kind'], fallback: Severity, out: Finding[]) => {
    const items = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
    for (const item of items) {
      if (typeof item === 'string') out.push({ id: item, kind, severity: fallback });
      else if (item && typeof item === 'object') {
        const o = item as Record<string, unknown>;
        const id = typeof o.id === 'string' ? o.id : typeof o.msg === 'string' ? o.msg : typeof o.message === 'string' ? o.message : JSON.stringify(o);
        const approvers = kind === 'approval' ? toApprovers(o.required_approvers) : undefined;
        out.push({ id, kind, severity: toSeverity(o.severity, fallback), ...(approvers ? { requiredApprovers: approvers } : {}) });
      } else if (item === true) {
        // boolean rules (`deny if ...`, `warn if ...`, `requires_human if ...`)
        out.push(kind === 'approval' ? { id: 'custom_policy_requires_approval', kind, severity: 'low' } : { id: fallback === 'medium' ? 'custom_policy_warning' : 'custom_policy_denied', kind, severity: fallback });
      }
    }
  };
  return {
    template: 'custom',
    overrides,
    config,
    customPolicy: source,
    hash,
    revision,
    readsBehavioral: policy.readsInput('behavioral'),
    evaluate(input, nowNs) {
      const opts = { input, data, nowNs };
      try {
        const findings: Finding[] = [];
        const decision = policy.evaluate(`${base}.decision`, opts);
        if (decision && typeof decision === 'object' && !Array.isArray(decision)) {
          const d = decision as Record<string, unknown>;
          collect(d.violations, 'violation', toSeverity(d.severity, 'high'), findings);
          if (d.requires_human === true) collect(true, 'approval', 'low', findings);
          const n = toApprovers(d.required_approvers);
          if (n) for (const f of findings) if (f.kind === 'approval') f.requiredApprovers = Math.max(f.requiredApprovers ?? 0, n);
        } else {
          collect(policy.evaluate(`${base}.deny`, opts), 'violation', 'high', findings);
          collect(policy.evaluate(`${base}.violations`, opts), 'violation', 'high', findings);
          collect(policy.evaluate(`${base}.warn`, opts), 'violation', 'medium', findings);
          collect(policy.evaluate(`${base}.approval`, opts), 'approval', 'low', findings);
          if (policy.evaluate(`${base}.requires_human`, opts) === true) collect(true, 'approval', 'low', findings);
          const n = toApprovers(policy.evaluate(`${base}.required_approvers`, opts));
          if (n) for (const f of findings) if (f.kind === 'approval') f.requiredApprovers = Math.max(f.requiredApprovers ?? 0, n);
        }
        if (definesAllow && policy.evaluate(`${base}.allow`, opts) !== true) findings.push({ id: 'custom_policy_not_allowed', kind: 'violation', severity: 'high' });
        const seen = new Set<string>();
        return decide(findings.filter((f) => (seen.has(`${f.kind}:${f.id}`) ? false : (seen.add(`${f.kind}:${f.id}`), true))));
      } catch (e) {
        onError(e);
        return decide([{ id: EVALUATION_ERROR, kind: 'violation', severity: 'high' }]);
      }
    },
    rules() {
      try {
        const declared = policy.evaluate(`${base}.rules`, { data });
        if (Array.isArray(declared)) return declared as RuleInfo[];
      } catch {
        /* fall through */
      }
      return [{ id: 'custom', kind: 'violation', severity: 'per rule (deny/violations: high, warn: medium)', trigger: `the tenant's Rego policy (package ${CUSTOM_PACKAGE}); violations are its messages` }];
    },
  };
}
