/**
 * A tenant's webhook URL as its stored settings hold it (`tenant_settings.settings.webhook_url`, written by
 * the gateway): a non-empty string, else none. One reading for the gateway, which routes a decision event of
 * a tenant without one under `nohook.decisions.`, and the webhook service, which delivers to it: the two
 * must agree, or events of a tenant with a webhook would be routed where the webhook service never reads.
 */
export function webhookUrlOf(settings: Record<string, unknown>): string | null {
  const url = settings.webhook_url;
  return typeof url === 'string' && url !== '' ? url : null;
}
