/**
 * proto3 scalars carry no "unset": an empty string or a 0 stands for it. An adapter that turns a message into
 * HTTP JSON reads such fields as null, one that turns it into a domain call's options reads them as
 * undefined; both say which fields in one list instead of a `|| null` per field.
 *
 * ```ts
 * unsetAsNull(source, ['etag', 'revision']); // { etag: string | null, revision: string | null }
 * ```
 */

/** The `keys` of `msg`, each null where it holds its zero value ('' or 0). */
export function unsetAsNull<T extends object, K extends keyof T>(msg: T, keys: readonly K[]): { [P in K]: T[P] | null } {
  return Object.fromEntries(keys.map((k) => [k, msg[k] || null])) as { [P in K]: T[P] | null };
}

/** The `keys` of `msg`, each undefined where it holds its zero value ('' or 0). */
export function unsetAsUndefined<T extends object, K extends keyof T>(msg: T, keys: readonly K[]): { [P in K]: T[P] | undefined } {
  return Object.fromEntries(keys.map((k) => [k, msg[k] || undefined])) as { [P in K]: T[P] | undefined };
}
