/**
 * Replay needs the params the original call was evaluated with. Stored params hold PII as per-subject
 * ciphertext envelopes; the vault reveals them (`RevealParams`). Erased subjects come back as "[erased]",
 * so a replay after crypto-shredding is reported as such.
 */
export interface ParamsRevealer {
  reveal(tenantId: string, storedParams: Record<string, unknown>): Promise<{ params: Record<string, unknown>; erasedSubjects: string[] }>;
}

/** No PII in the stored params: they are the params. */
export const identityRevealer: ParamsRevealer = {
  reveal: async (_tenantId, storedParams) => ({ params: storedParams, erasedSubjects: [] }),
};
