/**
 * Tool-name globs, the one matcher of the fleet: `*` any run of characters, `?` one character, everything
 * else literal, case-sensitive, anchored at both ends. Used by a managed config's `require_human_approval`
 * and `allowed_tools` and by an upstream's tool filters (docs/federation.md).
 */
const cache = new Map<string, RegExp>();

/** The anchored RegExp of a glob (cached). */
export function globToRegExp(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) {
    re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    if (cache.size > 10_000) cache.clear();
    cache.set(glob, re);
  }
  return re;
}

/** True when `name` matches any of the globs. */
export function matchesAnyGlob(globs: readonly string[], name: string): boolean {
  return globs.some((g) => globToRegExp(g).test(name));
}
