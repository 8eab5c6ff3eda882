/**
 * `require_human_approval` of a managed agent config: globs (`@agw/shared` glob.ts) matched against the
 * tool name and against `tool.method`. A governed call of a session that the policy allows but that
 * matches a pattern goes to the approval queue instead. A federated tool (docs/federation.md) is also
 * matched by its MCP name `<upstream>__<tool>`.
 */
import { globToRegExp } from '@agw/shared';

/** The first pattern that matches the call, or undefined. */
export function approvalPatternFor(patterns: readonly string[] | undefined, tool: string, method: string, federatedName?: string): string | undefined {
  if (!patterns?.length) return undefined;
  return patterns.find((p) => {
    const re = globToRegExp(p);
    return re.test(tool) || re.test(`${tool}.${method}`) || (federatedName !== undefined && re.test(federatedName));
  });
}
