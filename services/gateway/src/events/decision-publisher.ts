/** The gateway publishes decisions through the fleet's one outbox-backed publisher (`@agw/shared`). */
export { DecisionPublisher } from '@agw/shared';
