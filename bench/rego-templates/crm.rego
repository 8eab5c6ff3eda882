package agw.crm

import rego.v1

# Representative "crm" template (bench fallback)
violations contains "crm_delete_not_allowed" if {
	lower(input.method) == "delete"
	not data.config.allow_delete
}

violations contains v if {
	some f in data.config.restricted_fields
	input.params.fields[f]
	v := sprintf("restricted_field_modification_%s", [f])
}

violations contains "bulk_operation_exceeds_threshold" if count(object.get(input.params, "records", [])) > data.config.bulk_threshold

default requires_human := false

requires_human if {
	data.config.export_approval
	startswith(lower(input.method), "export")
}

requires_human if count(object.get(input.params, "records", [])) > data.config.bulk_threshold

severity := "high" if {
	some v in violations
	v != "bulk_operation_exceeds_threshold"
} else := "medium" if count(violations) > 0
else := "none"

verdict := "deny" if severity == "high"
else := "requires_human" if requires_human
else := "allow"

decision := {"decision": verdict, "violations": violations, "severity": severity, "requires_human": requires_human}
