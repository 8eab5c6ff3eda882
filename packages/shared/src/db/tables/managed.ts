/** Tables owned by the managed service (filled in with its migrations). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ManagedTables {}
