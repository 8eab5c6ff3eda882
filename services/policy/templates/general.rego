# Template "general": behavioral guard rails for any agent.
#
# Contract of every template (docs/policy.md): package agw.<template>; `parameters` (name -> type,
# default, description), `rules` (id, kind, severity, trigger) and `decision` ({decision, violations,
# findings, severity, alert_tier, requires_human}). `data.config` holds the tenant's overrides, merged
# here over the defaults. `input.behavioral` is absent in pass 1 and filled by the policy service in
# pass 2 (action_count_1h, action_count_24h, tool_count_24h, violation_count_24h, anomaly_score,
# last_action_seconds_ago, session_total_amount). Counts include the call being evaluated, except
# violation_count_24h (earlier decisions only).
package agw.general

import rego.v1

template := {"name": "general", "description": "Behavioral limits for any agent: anomaly score, daily action limit, cooldown after repeated violations, human approval of destructive methods."}

parameters := {
	"daily_action_limit": {"type": "integer", "default": 200, "description": "actions per agent in 24 h; more is a medium violation"},
	"anomaly_threshold": {"type": "number", "default": 0.7, "description": "anomaly score (0-1) above which the agent is blocked"},
	"cooldown_violations": {"type": "integer", "default": 3, "description": "violations in 24 h from which the agent is in cooldown (blocked)"},
	"approve_destructive": {"type": "boolean", "default": true, "description": "methods delete, destroy, purge and drop need human approval"},
}

default_config := {k: p.default | some k, p in parameters}

overrides := data.config if is_object(data.config)
else := {}

config := object.union(default_config, overrides)

rules := [
	{"id": "anomaly_score_threshold_exceeded", "kind": "violation", "severity": "high", "trigger": sprintf("anomaly score > anomaly_threshold (%v)", [config.anomaly_threshold])},
	{"id": "daily_action_limit_exceeded", "kind": "violation", "severity": "medium", "trigger": sprintf("24h action count > daily_action_limit (%v)", [config.daily_action_limit])},
	{"id": "violation_cooldown_active", "kind": "violation", "severity": "high", "trigger": sprintf("violations in 24h >= cooldown_violations (%v)", [config.cooldown_violations])},
	{"id": "destructive_action_requires_approval", "kind": "approval", "severity": "low", "trigger": "method is delete, destroy, purge or drop, when approve_destructive is true"},
]

method := lower(input.method)

destructive if regex.match(`^(delete|destroy|purge|drop)([_.:-].*)?$`, method)

violation contains "anomaly_score_threshold_exceeded" if input.behavioral.anomaly_score > config.anomaly_threshold

violation contains "daily_action_limit_exceeded" if input.behavioral.action_count_24h > config.daily_action_limit

violation contains "violation_cooldown_active" if input.behavioral.violation_count_24h >= config.cooldown_violations

approval contains "destructive_action_requires_approval" if {
	config.approve_destructive == true
	destructive
}

# ---- decision: identical in every template ----
severity_of := {r.id: r.severity | some r in rules}

rank := {"none": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}

severity_names := ["none", "low", "medium", "high", "critical"]

findings := [{"id": id, "kind": "violation", "severity": severity_of[id]} | some id in sort(violation)]

approval_findings := [{"id": id, "kind": "approval", "severity": severity_of[id]} | some id in sort(approval)]

severity := severity_names[max({rank[f.severity] | some f in array.concat(findings, approval_findings)} | {0})]

requires_human := count(approval) > 0

verdict := "deny" if rank[severity] >= 3
else := "requires_human" if requires_human
else := "allow"

alert_tier := "P1" if severity == "critical"
else := "P2" if severity == "high"
else := "P3" if requires_human
else := "P3" if severity == "medium"
else := ""

decision := {
	"decision": verdict,
	"violations": [f.id | some f in array.concat(findings, approval_findings)],
	"findings": array.concat(findings, approval_findings),
	"severity": severity,
	"alert_tier": alert_tier,
	"requires_human": requires_human,
}
