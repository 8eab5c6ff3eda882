/**
 * A lost connection to Postgres is a dependency failure (gRPC UNAVAILABLE, so the gateway applies the
 * tenant's failure mode), not an internal error. Anything else is rethrown unchanged.
 */
import { AppError, DependencyUnavailableError } from '@agw/shared';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);

export function isConnectionError(e: unknown): boolean {
  if (e instanceof AppError) return false;
  const err = e as { code?: string; message?: string; errors?: unknown[] };
  if (err?.code && CONNECTION_CODES.has(err.code)) return true;
  if (Array.isArray(err?.errors) && err.errors.some(isConnectionError)) return true; // AggregateError (IPv4 + IPv6)
  return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(err?.message ?? '');
}

export async function postgres<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isConnectionError(e)) throw new DependencyUnavailableError('policy store (Postgres) unavailable', { cause: e });
    throw e;
  }
}
