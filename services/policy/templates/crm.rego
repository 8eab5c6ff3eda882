# Template "crm": customer records. See general.rego for the template contract.
# Modified fields are the keys of params.fields, data, updates, properties or changes and of the objects
# in params.records, for any method that is not a read (get, read, list, search, query, find, fetch,
# view, count), a delete or an export. The bulk count is the largest of len(params.records),
# len(params.ids) and params.count.
package agw.crm

import rego.v1

template := {"name": "crm", "description": "CRM records: no deletes, restricted fields, bulk threshold, human approval of exports and bulk modifications."}

parameters := {
	"bulk_threshold": {"type": "integer", "default": 10, "description": "records per call above which an operation is bulk"},
	"allow_delete": {"type": "boolean", "default": false, "description": "whether delete methods are allowed"},
	"export_approval": {"type": "boolean", "default": true, "description": "exports need human approval"},
	"restricted_fields": {"type": "string[]", "default": ["owner", "revenue"], "description": "fields an agent may not modify"},
}

default_config := {k: p.default | some k, p in parameters}

overrides := data.config if is_object(data.config)
else := {}

config := object.union(default_config, overrides)

rules := array.concat(
	[
		{"id": "crm_delete_not_allowed", "kind": "violation", "severity": "high", "trigger": "delete while allow_delete is false"},
		{"id": "bulk_operation_exceeds_threshold", "kind": "violation", "severity": "medium", "trigger": sprintf("bulk count > bulk_threshold (%v)", [config.bulk_threshold])},
		{"id": "crm_export_requires_approval", "kind": "approval", "severity": "low", "trigger": "export operations when export_approval is true"},
		{"id": "bulk_modification_requires_approval", "kind": "approval", "severity": "low", "trigger": sprintf("bulk modifications above bulk_threshold (%v)", [config.bulk_threshold])},
	],
	[r |
		some f in config.restricted_fields
		r := {"id": sprintf("restricted_field_modification_%s", [f]), "kind": "violation", "severity": "high", "trigger": sprintf("field %s is modified", [f])}
	]
)

method := lower(input.method)

destructive if regex.match(`^(delete|destroy|purge|drop|remove)([_.:-].*)?$`, method)

export_op if regex.match(`^export([_.:-].*)?$`, method)

export_op if lower(input.params.operation) == "export"

read_op if regex.match(`^(get|read|list|search|query|find|fetch|view|count)([_.:-].*)?$`, method)

modifying if {
	not destructive
	not export_op
	not read_op
}

field_containers := ["fields", "data", "updates", "properties", "changes"]

modified_fields contains f if {
	modifying
	some k in field_containers
	is_object(input.params[k])
	some f, _ in input.params[k]
}

modified_fields contains f if {
	modifying
	is_array(input.params.records)
	some rec in input.params.records
	is_object(rec)
	some f, _ in rec
}

bulk_sizes contains count(input.params.records) if is_array(input.params.records)

bulk_sizes contains count(input.params.ids) if is_array(input.params.ids)

bulk_sizes contains input.params.count if is_number(input.params.count)

bulk_count := max(bulk_sizes | {0})

violation contains "crm_delete_not_allowed" if {
	destructive
	config.allow_delete == false
}

violation contains sprintf("restricted_field_modification_%s", [f]) if {
	some f in config.restricted_fields
	f in modified_fields
}

violation contains "bulk_operation_exceeds_threshold" if bulk_count > config.bulk_threshold

approval contains "crm_export_requires_approval" if {
	export_op
	config.export_approval == true
}

approval contains "bulk_modification_requires_approval" if {
	bulk_count > config.bulk_threshold
	modifying
}

approval contains "bulk_modification_requires_approval" if {
	bulk_count > config.bulk_threshold
	destructive
	config.allow_delete == true
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
