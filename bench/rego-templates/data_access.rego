package agw.data_access

import rego.v1

# Representative "data_access" template (bench fallback)
violations contains "pii_access_denied" if {
	input.pii_detected
	not data.config.pii_allowed
}

violations contains "pii_masking_required" if {
	input.pii_detected
	data.config.require_masking
	not input.params.masked
}

violations contains "query_row_limit_exceeded" if input.params.limit > data.config.max_row_limit

violations contains "data_residency_violation" if {
	region := object.get(input.params, "region", "eu-west-1")
	not region in {r | some r in data.config.allowed_regions}
}

violations contains "daily_query_limit_exceeded" if input.behavioral.action_count_1h * 24 > data.config.daily_query_limit

default requires_human := false

requires_human if {
	input.params.full_table_export
	input.params.limit > 1000
}

high := {"pii_access_denied", "pii_masking_required", "data_residency_violation"}

severity := "high" if {
	some v in violations
	v in high
} else := "medium" if count(violations) > 0
else := "none"

verdict := "deny" if severity == "high"
else := "requires_human" if requires_human
else := "allow"

decision := {"decision": verdict, "violations": violations, "severity": severity, "requires_human": requires_human}
