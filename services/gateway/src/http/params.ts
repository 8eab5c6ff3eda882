/** Path and query parameter helpers shared by the route files. */
import { NotFoundError } from '@agw/shared';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that must be a UUID: anything else cannot exist, so it is a 404 (never a database error). */
export function uuidParam(value: string | undefined, what = 'Resource'): string {
  if (!value || !UUID.test(value)) throw new NotFoundError(`${what} not found`);
  return value.toLowerCase();
}

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
