package agw.financial

import rego.v1

# Representative "financial" template (bench fallback)
rule_severity := {
	"transaction_exceeds_limit": "high",
	"currency_mismatch": "medium",
	"transaction_outside_business_hours": "medium",
	"daily_transaction_cap_exceeded": "medium",
}

amount := object.get(input.params, "amount", 0)

violations contains "transaction_exceeds_limit" if amount >= data.config.transaction_limit

violations contains "currency_mismatch" if {
	input.params.currency
	upper(input.params.currency) != data.config.currency
}

violations contains "transaction_outside_business_hours" if {
	data.config.business_hours_only
	amount >= 100
	not business_hours
}

violations contains "daily_transaction_cap_exceeded" if input.behavioral.action_count_1h * 24 > data.config.daily_transaction_cap

business_hours if {
	now := time.now_ns()
	day := time.weekday(now)
	not day in {"Saturday", "Sunday"}
	[hour, _, _] := time.clock(now)
	hour >= 9
	hour < 18
}

default requires_human := false

requires_human if amount >= data.config.approval_threshold

severity := "high" if {
	some v in violations
	rule_severity[v] == "high"
} else := "medium" if count(violations) > 0
else := "none"

verdict := "deny" if severity == "high"
else := "requires_human" if requires_human
else := "allow"

decision := {"decision": verdict, "violations": violations, "severity": severity, "requires_human": requires_human}
