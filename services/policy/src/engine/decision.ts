/**
 * The fixed decision semantics applied to whatever a policy returns (templates and custom policies
 * alike): deny when any finding is high or critical (alert tier P1 for critical, P2 for high); else
 * requires_human when an approval rule fired; else allow, keeping low/medium findings on the record.
 * No business rule lives here: the rules are the Rego modules.
 */
export type Severity = 'none' | 'low' | 'medium' | 'high' | 'critical';
export const SEVERITIES: readonly Severity[] = ['none', 'low', 'medium', 'high', 'critical'];
export type Decision = 'allow' | 'deny' | 'requires_human';

export interface Finding {
  id: string;
  kind: 'violation' | 'approval';
  severity: Severity;
  /** an approval finding's number of distinct human approvers (four eyes); absent: the tenant's setting */
  requiredApprovers?: number;
}

export interface PolicyOutcome {
  decision: Decision;
  violations: string[];
  findings: Finding[];
  severity: Severity;
  alertTier: '' | 'P1' | 'P2' | 'P3';
  requiresHuman: boolean;
  /** the largest `requiredApprovers` of the approval findings (0: the policy does not say) */
  requiredApprovers: number;
}

/** The most approvers a policy can ask for (the approvals table's check). */
export const MAX_POLICY_APPROVERS = 10;

/** A policy's `required_approvers` value as a count: an integer 1-10, anything else ignored (undefined). */
export function toApprovers(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? Math.min(v, MAX_POLICY_APPROVERS) : undefined;
}

export const rankOf = (s: Severity): number => SEVERITIES.indexOf(s);

export function toSeverity(v: unknown, fallback: Severity): Severity {
  return typeof v === 'string' && (SEVERITIES as readonly string[]).includes(v.toLowerCase()) ? (v.toLowerCase() as Severity) : fallback;
}

export function decide(findings: Finding[]): PolicyOutcome {
  const severity = findings.reduce<Severity>((m, f) => (rankOf(f.severity) > rankOf(m) ? f.severity : m), 'none');
  const requiresHuman = findings.some((f) => f.kind === 'approval');
  const decision: Decision = rankOf(severity) >= rankOf('high') ? 'deny' : requiresHuman ? 'requires_human' : 'allow';
  const alertTier = severity === 'critical' ? 'P1' : severity === 'high' ? 'P2' : requiresHuman || severity === 'medium' ? 'P3' : '';
  const requiredApprovers = findings.reduce((m, f) => (f.kind === 'approval' && f.requiredApprovers !== undefined && f.requiredApprovers > m ? f.requiredApprovers : m), 0);
  return { decision, violations: findings.map((f) => f.id), findings, severity, alertTier, requiresHuman, requiredApprovers };
}

/** A policy that fails at evaluation time (e.g. conflicting values in a custom policy) denies. */
export const EVALUATION_ERROR = 'policy_evaluation_error';
