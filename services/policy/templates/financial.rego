# Template "financial": payments and transfers. See general.rego for the template contract.
# A call is a transaction when params.amount is a number (or a numeric string).
package agw.financial

import rego.v1

template := {"name": "financial", "description": "Payments and transfers: transaction limit, currency, business hours, daily transaction cap, human approval above a threshold."}

parameters := {
	"transaction_limit": {"type": "number", "default": 5000, "description": "amount from which a transaction is blocked"},
	"currency": {"type": "string", "default": "EUR", "description": "the only accepted currency (ISO 4217); params.currency must match"},
	"business_hours_only": {"type": "boolean", "default": true, "description": "transactions of 100 or more outside business hours are a violation"},
	"approval_threshold": {"type": "number", "default": 1000, "description": "amount from which a human approves the transaction"},
	"approval_required_approvers": {"type": "integer", "default": 1, "minimum": 1, "maximum": 10, "description": "distinct humans who must approve a transaction above approval_threshold (four eyes: 2); the tenant setting required_approvers applies when stricter"},
	"daily_transaction_cap": {"type": "integer", "default": 100, "description": "calls of the transaction tool per agent in 24 h"},
	"business_hours": {"type": "object", "default": {"timezone": "UTC", "start_hour": 9, "end_hour": 18, "weekdays": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]}, "description": "business hours: IANA time zone, start and end hour (end exclusive), weekdays"},
}

default_config := {k: p.default | some k, p in parameters}

overrides := data.config if is_object(data.config)
else := {}

config := object.union(default_config, overrides)

rules := [
	{"id": "transaction_exceeds_limit", "kind": "violation", "severity": "high", "trigger": sprintf("params.amount >= transaction_limit (%v)", [config.transaction_limit])},
	{"id": "currency_mismatch", "kind": "violation", "severity": "medium", "trigger": sprintf("params.currency differs from currency (%v)", [config.currency])},
	{"id": "transaction_outside_business_hours", "kind": "violation", "severity": "medium", "trigger": "outside business hours and amount >= 100, when business_hours_only is true"},
	{"id": "daily_transaction_cap_exceeded", "kind": "violation", "severity": "medium", "trigger": sprintf("24h count > daily_transaction_cap (%v)", [config.daily_transaction_cap])},
	{"id": "high_value_transaction_unapproved", "kind": "approval", "severity": "low", "trigger": sprintf("params.amount >= approval_threshold (%v)", [config.approval_threshold])},
]

amount := input.params.amount if is_number(input.params.amount)
else := to_number(input.params.amount) if is_string(input.params.amount)

now := time.now_ns()

hour := time.clock([now, config.business_hours.timezone])[0]

weekday := time.weekday([now, config.business_hours.timezone])

in_business_hours if {
	weekday in config.business_hours.weekdays
	hour >= config.business_hours.start_hour
	hour < config.business_hours.end_hour
}

violation contains "transaction_exceeds_limit" if amount >= config.transaction_limit

violation contains "currency_mismatch" if {
	is_string(input.params.currency)
	upper(trim_space(input.params.currency)) != upper(config.currency)
}

violation contains "transaction_outside_business_hours" if {
	config.business_hours_only == true
	amount >= 100
	not in_business_hours
}

violation contains "daily_transaction_cap_exceeded" if {
	amount
	input.behavioral.tool_count_24h > config.daily_transaction_cap
}

approval contains "high_value_transaction_unapproved" if amount >= config.approval_threshold

# ---- decision: identical in every template ----
severity_of := {r.id: r.severity | some r in rules}

rank := {"none": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}

severity_names := ["none", "low", "medium", "high", "critical"]

findings := [{"id": id, "kind": "violation", "severity": severity_of[id]} | some id in sort(violation)]

# financial: a transaction's approval asks for approval_required_approvers distinct humans (four eyes)
approval_findings := [{"id": id, "kind": "approval", "severity": severity_of[id], "required_approvers": config.approval_required_approvers} | some id in sort(approval)]

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
