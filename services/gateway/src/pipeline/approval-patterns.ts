/**
 * `require_human_approval` of a managed agent config: glob patterns (`*` any run of characters, `?` one)
 * matched against the tool name and against `tool.method`, case-sensitive. A governed call of a session
 * that the policy allows but that matches a pattern goes to the approval queue instead.
 */
const cache = new Map<string, RegExp>();

function toRegExp(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) {
    re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    if (cache.size > 10_000) cache.clear();
    cache.set(glob, re);
  }
  return re;
}

/** The first pattern that matches the call, or undefined. */
export function approvalPatternFor(patterns: readonly string[] | undefined, tool: string, method: string): string | undefined {
  if (!patterns?.length) return undefined;
  return patterns.find((p) => toRegExp(p).test(tool) || toRegExp(p).test(`${tool}.${method}`));
}
