/**
 * Guards webhook targets against server-side request forgery with the fleet's one address policy
 * (`@agw/egress`): every resolved address must be public unless an operator allowed its range
 * (WEBHOOK_ALLOW_CIDRS); the sender connects to the checked address (pinned), so a DNS answer that changes
 * between check and connect (rebinding) cannot reach a refused address.
 */
import { AddressPolicy, EgressRefusedError, type LookupAll } from '@agw/egress';

export { EgressRefusedError as TargetRefusedError, type LookupAll, type ResolvedAddress as ResolvedTarget } from '@agw/egress';

/** The webhook's address policy: public receivers only, plus the ranges WEBHOOK_ALLOW_CIDRS allows. */
export class TargetGuard extends AddressPolicy {
  constructor(allowCidrs: readonly string[] = [], lookup?: LookupAll) {
    super({ allowCidrs, lookup });
  }
}

/**
 * Why a delivery to `url` would be refused right now, or null: for a settings-time pre-check. The check
 * that counts is still the one made when connecting (DNS can change in between).
 */
export async function refusalOfUrl(guard: TargetGuard, url: string): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'webhook_url must be an absolute URL';
  }
  if (u.protocol !== 'https:') return 'webhook_url must be an absolute HTTPS URL (http:// is rejected)';
  try {
    await guard.resolve(u.hostname);
    return null;
  } catch (e) {
    if (e instanceof EgressRefusedError) return e.message;
    const code = (e as { code?: string }).code;
    return code === 'ENOTFOUND' ? `webhook_url host ${u.hostname} does not resolve` : null;
  }
}
