/**
 * Presenting a gRPC message as the API's JSON: the fields the API answers as the message has them are
 * named once (`pick`); renamed, nulled (`orNull`, params.ts) or built fields are written out beside them.
 */

/** The `keys` of `o`, in that order. */
export function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = o[k];
  return out;
}
