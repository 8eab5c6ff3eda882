/** Path and query parameter helpers shared by the route files. */
import { InputError, NotFoundError } from '@agw/shared';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that must be a UUID: anything else cannot exist, so it is a 404 (never a database error). */
export function uuidParam(value: string | undefined, what = 'Resource'): string {
  if (!value || !UUID.test(value)) throw new NotFoundError(`${what} not found`);
  return value.toLowerCase();
}

/** An upstream or tool name in a path: anything that cannot be one is a 404 (never a vault round trip). */
export function nameParam(value: string | undefined, what: string, pattern: RegExp): string {
  if (!value || !pattern.test(value)) throw new NotFoundError(`${what} not found`);
  return value;
}


export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const SUBJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const SUBJECT_ID_RULE = 'subject_id must be 1-128 characters of A-Z a-z 0-9 . _ : -';

/** A data subject id in a path: anything that cannot be one is a 404. */
export function subjectParam(v: string | undefined): string {
  if (!v || !SUBJECT_ID.test(v)) throw new NotFoundError('Subject not found');
  return v;
}

/** A subject id in a body, as zod checks it. */
export const isSubjectId = (v: string) => SUBJECT_ID.test(v);

/** Tool ids and credential names in a path: 1-256 characters, as when they are registered. */
export function pathName(value: string, field: string): string {
  if (value.length > 256) throw InputError.at(['path', field], `${field} is at most 256 characters`, 'string_too_long');
  return value;
}

/** gRPC's empty string as JSON null. */
export const orNull = (s: string) => s || null;
