/** Merkle tree tables owned by the audit service (filled in with the Merkle migration). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface MerkleTables {}
