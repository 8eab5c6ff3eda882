/**
 * The gateway's rule for reading an upstream's name (in a path, or the prefix of a federated tool, resource
 * or prompt name): the vault's UPSTREAM_NAME without its rule on the last character, so that names
 * registered before that rule are still read. The vault decides what may be registered.
 */
export const UPSTREAM_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
export const UPSTREAM_NAME = new RegExp(UPSTREAM_NAME_PATTERN);
