/**
 * `require_human_approval` of a managed agent config: globs (`@agw/shared` glob.ts) matched against the
 * tool name and against `tool.method`. A governed call of a session that the policy allows but that
 * matches a pattern goes to the approval queue instead. A federated tool (docs/federation.md) is also
 * matched by its MCP name `<upstream>__<tool>`.
 */
import { globToRegExp } from '../glob';

/** The violation a call carries when a managed session's require_human_approval pattern escalated it. */
export const SESSION_APPROVAL_VIOLATION = 'session_requires_human_approval';

/** The first pattern that matches the call, or undefined. */
export function approvalPatternFor(patterns: readonly string[] | undefined, tool: string, method: string, federatedName?: string): string | undefined {
  if (!patterns?.length) return undefined;
  return patterns.find((p) => {
    const re = globToRegExp(p);
    return re.test(tool) || re.test(`${tool}.${method}`) || (federatedName !== undefined && re.test(federatedName));
  });
}

/**
 * Whether some call of a session's MCP tool may match a pattern, so the platform must ask before each call
 * (permission policy `always_ask`; docs/managed.md). A federated tool (`<upstream>__<tool>`) is known
 * exactly; a credential tool's method is an argument, so a `tool.method` pattern marks the whole tool, and
 * a call of another method is answered `allow` at once by the managed service.
 */
export function mayRequireApproval(patterns: readonly string[], tool: { name: string; upstream?: string; method?: string }): boolean {
  if (tool.upstream !== undefined && tool.method !== undefined) return approvalPatternFor(patterns, tool.upstream, tool.method, tool.name) !== undefined;
  return patterns.some((p) => globToRegExp(p).test(tool.name) || (p.includes('.') && globToRegExp(p.slice(0, p.indexOf('.'))).test(tool.name)));
}
