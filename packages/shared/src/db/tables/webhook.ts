/** Tables owned by the webhook service (filled in with its migrations). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface WebhookTables {}
