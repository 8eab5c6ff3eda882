/** The fleet's one outbox repository lives in `@agw/shared` (the gateway and the managed service publish through it). */
export { EventOutboxRepository, type OutboxRow } from '@agw/shared';
