package agw.email

import rego.v1

# Representative "email" template (bench fallback)
recipient_domain := lower(parts[count(parts) - 1]) if parts := split(input.params.to, "@")

violations contains "consumer_email_blocked" if recipient_domain in {d | some d in data.config.blocked_domains}

violations contains "daily_send_limit_exceeded" if input.behavioral.action_count_1h * 24 > data.config.daily_send_limit

violations contains "missing_ai_disclosure" if {
	data.config.require_disclosure
	body := lower(object.get(input.params, "body", ""))
	not contains(body, "ai-generated")
	not contains(body, "automated")
}

default requires_human := false

requires_human if {
	data.config.first_contact_approval
	not input.params.prior_contact_exists
}

severity := "high" if "consumer_email_blocked" in violations
else := "medium" if count(violations) > 0
else := "none"

verdict := "deny" if severity == "high"
else := "requires_human" if requires_human
else := "allow"

decision := {"decision": verdict, "violations": violations, "severity": severity, "requires_human": requires_human}
