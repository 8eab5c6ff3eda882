package agw.general

import rego.v1

# Representative "general" template (bench fallback until services/policy/templates/general.rego exists)
default approve_destructive := true

approve_destructive := data.config.approve_destructive if is_boolean(data.config.approve_destructive)

rule_severity := {
	"anomaly_score_threshold_exceeded": "high",
	"daily_action_limit_exceeded": "medium",
	"violation_cooldown_active": "high",
}

violations contains "anomaly_score_threshold_exceeded" if input.behavioral.anomaly_score > data.config.anomaly_threshold

violations contains "daily_action_limit_exceeded" if input.behavioral.action_count_1h * 24 > data.config.daily_action_limit

violations contains "violation_cooldown_active" if input.behavioral.violations_24h >= data.config.cooldown_violations

requires_human if {
	approve_destructive
	lower(input.method) in {"delete", "destroy", "purge", "drop"}
}

severity := "high" if {
	some v in violations
	rule_severity[v] == "high"
} else := "medium" if count(violations) > 0
else := "none"

alert_tier := "P1" if severity == "high"
else := "P2" if severity == "medium"
else := "P3"

default requires_human := false

decision := {
	"decision": verdict,
	"violations": violations,
	"severity": severity,
	"alert_tier": alert_tier,
	"requires_human": requires_human,
}

verdict := "deny" if severity == "high"
else := "requires_human" if requires_human
else := "allow"
