# Template "data_access": database queries and exports. See general.rego for the template contract.
# PII access: input.pii_detected (PII found in the params), params.include_pii = true, or a requested
# column (params.fields, columns or select) in pii_columns. Output counts as masked when params.masked,
# mask or masking is true. The query region is params.region.
package agw.data_access

import rego.v1

template := {"name": "data_access", "description": "Data queries: PII access and masking, row limit, data residency, daily query limit, human approval of large full-table exports."}

parameters := {
	"max_row_limit": {"type": "integer", "default": 10000, "description": "largest params.limit without a violation"},
	"pii_allowed": {"type": "boolean", "default": false, "description": "whether agents may access personal data"},
	"allowed_regions": {"type": "string[]", "default": ["eu-west-1"], "description": "regions a query may run in (params.region)"},
	"require_masking": {"type": "boolean", "default": true, "description": "PII in the output must be masked (params.masked = true)"},
	"daily_query_limit": {"type": "integer", "default": 500, "description": "queries per agent in 24 h"},
	"pii_columns": {"type": "string[]", "default": ["email", "phone", "ssn", "name", "first_name", "last_name", "address", "date_of_birth", "iban", "credit_card", "passport_number"], "description": "column names that hold personal data"},
}

default_config := {k: p.default | some k, p in parameters}

overrides := data.config if is_object(data.config)
else := {}

config := object.union(default_config, overrides)

rules := [
	{"id": "pii_access_denied", "kind": "violation", "severity": "high", "trigger": "PII access while pii_allowed is false"},
	{"id": "pii_masking_required", "kind": "violation", "severity": "high", "trigger": "PII in output unmasked while require_masking is true"},
	{"id": "query_row_limit_exceeded", "kind": "violation", "severity": "medium", "trigger": sprintf("params.limit > max_row_limit (%v)", [config.max_row_limit])},
	{"id": "data_residency_violation", "kind": "violation", "severity": "high", "trigger": sprintf("query region not in allowed_regions (%v)", [concat(", ", config.allowed_regions)])},
	{"id": "daily_query_limit_exceeded", "kind": "violation", "severity": "medium", "trigger": sprintf("24h count > daily_query_limit (%v)", [config.daily_query_limit])},
	{"id": "full_table_export_requires_approval", "kind": "approval", "severity": "low", "trigger": "full-table export with params.limit > 1000"},
]

method := lower(input.method)

export_op if regex.match(`^export([_.:-].*)?$`, method)

export_op if lower(input.params.operation) == "export"

export_op if input.params.full_table_export == true

pii_cols := {lower(c) | some c in config.pii_columns}

requested_columns contains lower(c) if {
	some k in ["fields", "columns", "select"]
	is_array(input.params[k])
	some c in input.params[k]
	is_string(c)
}

pii_access if input.pii_detected == true

pii_access if input.params.include_pii == true

pii_access if {
	some c in requested_columns
	c in pii_cols
}

masked if input.params.masked == true

masked if input.params.mask == true

masked if input.params.masking == true

limit := input.params.limit if is_number(input.params.limit)

violation contains "pii_access_denied" if {
	pii_access
	config.pii_allowed == false
}

violation contains "pii_masking_required" if {
	pii_access
	config.require_masking == true
	not masked
}

violation contains "query_row_limit_exceeded" if limit > config.max_row_limit

violation contains "data_residency_violation" if {
	is_string(input.params.region)
	not input.params.region in config.allowed_regions
}

violation contains "daily_query_limit_exceeded" if input.behavioral.tool_count_24h > config.daily_query_limit

approval contains "full_table_export_requires_approval" if {
	export_op
	limit > 1000
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
