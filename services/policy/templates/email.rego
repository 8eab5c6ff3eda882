# Template "email": outbound mail. See general.rego for the template contract.
# Recipients are read from params.to, cc, bcc, recipient and recipients (a string or a list of strings,
# "Name <addr>" accepted); a call with at least one recipient is a send.
package agw.email

import rego.v1

template := {"name": "email", "description": "Outbound e-mail: blocked consumer domains, daily send limit, AI disclosure in the body, human approval of first contacts."}

parameters := {
	"daily_send_limit": {"type": "integer", "default": 50, "description": "sends per agent in 24 h"},
	"require_disclosure": {"type": "boolean", "default": true, "description": "the body must say it is AI-generated or automated"},
	"first_contact_approval": {"type": "boolean", "default": true, "description": "a send without params.prior_contact_exists = true needs human approval"},
	"blocked_domains": {"type": "string[]", "default": ["gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "aol.com", "icloud.com", "gmx.com", "protonmail.com"], "description": "recipient domains that are refused (consumer mail providers)"},
}

default_config := {k: p.default | some k, p in parameters}

overrides := data.config if is_object(data.config)
else := {}

config := object.union(default_config, overrides)

rules := [
	{"id": "consumer_email_blocked", "kind": "violation", "severity": "high", "trigger": "recipient domain in blocked_domains"},
	{"id": "daily_send_limit_exceeded", "kind": "violation", "severity": "medium", "trigger": sprintf("24h count > daily_send_limit (%v)", [config.daily_send_limit])},
	{"id": "missing_ai_disclosure", "kind": "violation", "severity": "medium", "trigger": "body contains neither AI-generated nor automated, when require_disclosure is true"},
	{"id": "first_contact_requires_approval", "kind": "approval", "severity": "low", "trigger": "first contact (no prior_contact_exists flag), when first_contact_approval is true"},
]

recipient_fields := ["to", "cc", "bcc", "recipient", "recipients"]

raw_recipients contains r if {
	some k in recipient_fields
	r := input.params[k]
	is_string(r)
}

raw_recipients contains r if {
	some k in recipient_fields
	is_array(input.params[k])
	some r in input.params[k]
	is_string(r)
}

recipient_domains contains lower(m[1]) if {
	some r in raw_recipients
	some m in regex.find_all_string_submatch_n(`@([A-Za-z0-9.-]+)`, r, -1)
}

sending if count(raw_recipients) > 0

body := lower(input.params.body) if is_string(input.params.body)
else := ""

blocked := {lower(d) | some d in config.blocked_domains}

violation contains "consumer_email_blocked" if {
	some d in recipient_domains
	d in blocked
}

violation contains "daily_send_limit_exceeded" if {
	sending
	input.behavioral.tool_count_24h > config.daily_send_limit
}

violation contains "missing_ai_disclosure" if {
	sending
	config.require_disclosure == true
	not contains(body, "ai-generated")
	not contains(body, "automated")
}

approval contains "first_contact_requires_approval" if {
	sending
	config.first_contact_approval == true
	not input.params.prior_contact_exists == true
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
